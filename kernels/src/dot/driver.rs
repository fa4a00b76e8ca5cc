//! The dot exercises' harness: flags, inputs, the host's share of each sum,
//! the check and the report, around the GPU code the student writes in the
//! exercise's src/main.rs.

use std::process::ExitCode;

use clap::Parser;

use super::sweep::{self, SweepTask};
use super::task::{finish_on_host, prepare};
use super::{Affine, DEFAULT_N, EMULATOR_N, MAX_N, Parameters, Results, Variant};
use crate::cli::{self, CommonArgs, SeedArg};
use crate::copy_probe;
use crate::error::CourseError;
use crate::gpu::{self, Gpu};
use crate::grader_names::INPUTS_ON_GPU;
use crate::inputs_on_gpu::{self, Fill, Launch};
use crate::launch::{self, MAX_BLOCKS};
use crate::protocol::{Report, SCHEMA_VERSION, Throughput, Timing};
use crate::stopwatch::Stopwatch;

/// What the student's code names: `kernels::dot::driver::{Task, GpuOutput}`.
pub use super::task::{DotOnGpu, GpuOutput, Task};

/// The default block size.
pub const DEFAULT_THREADS: u32 = 256;

/// Flags of every dot exercise. The help of --n, --threads and --blocks
/// differs by exercise: [`help_for`] writes it.
// Negative numbers are values to reject with the flag named, not unknown flags.
#[derive(Parser, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[arg(long, value_parser = parse_n)]
    pub n: Option<u64>,

    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,

    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_BLOCKS)))]
    pub blocks: Option<u32>,

    /// Element i of a is p + q·i, written p+qi with whole p, q within ±1000 (e.g. i, 3+2i, 7).
    // Hyphen values: "--b -5+i" is a value, not an unknown flag.
    #[arg(long, default_value = "i", value_parser = parse_affine, allow_hyphen_values = true, conflicts_with = "seed")]
    pub a: Affine,

    /// Element i of b is r + s·i, written like --a; --b 2 gives the dot n·(n−1) with a = i.
    #[arg(long, default_value = "2i", value_parser = parse_affine, allow_hyphen_values = true, conflicts_with = "seed")]
    pub b: Affine,

    #[command(flatten)]
    pub seed: SeedArg,

    /// The grader's runs above 2^31 elements, dot-gm's only: a and b made
    /// on the GPU, the kernel the one CUDA_COURSE_KERNEL_PTX names
    /// (`crate::inputs_on_gpu`).
    #[arg(long = INPUTS_ON_GPU, hide = true)]
    pub inputs_on_gpu: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// dot-atomic's flags: the dot flags and the sweep.
#[derive(Parser, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct AtomicArgs {
    #[command(flatten)]
    pub dot: Args,

    /// Time every mix of blocks and loops per thread, from 1 block doing all
    /// the loops to one loop per thread, and mark the fastest.
    #[arg(long)]
    pub sweep: bool,
}

fn parse_n(text: &str) -> Result<u64, String> {
    cli::parse_n(text, MAX_N, 8, "a and b")
}

fn parse_affine(text: &str) -> Result<Affine, String> {
    text.parse()
}

/// The command line of `variant`: its name, what it does, and help for the
/// shared flags that describes this exercise's defaults and rules only.
pub fn help_for(variant: Variant) -> impl FnOnce(clap::Command) -> clap::Command {
    let (about, n, threads, blocks) = match variant {
        Variant::Gm => (
            "Dot product: the GPU multiplies, the host sums",
            "[default: 16777219, 1000003 on the CPU emulator]",
            "Threads per block, 1 to 1024 [default: 256]",
            "[default: 16 times enough to fill the GPU, at most half of what n needs so \
             every thread loops]",
        ),
        Variant::Sm => (
            "Dot product: each block sums in shared memory, the host adds the blocks' partials",
            "[default: 16777219, 1000003 on the CPU emulator]",
            "Threads per block, a power of two from 1 to 1024: the tree halves the block \
             each step [default: 256]",
            "[default: enough to fill the GPU, at most half of what n needs so every thread \
             loops]",
        ),
        Variant::Atomic => (
            "Dot product: each block sums in shared memory, then adds into one float with \
             atomicAdd",
            "[default: 16777219, 1000003 on the CPU emulator; with --sweep 33554432, 1048576 on \
             the emulator]",
            "Threads per block, a power of two from 1 to 1024: the tree halves the block \
             each step [default: 256; with --sweep 512]",
            "[default: enough to fill the GPU, at most half of what n needs so every thread \
             loops]",
        ),
    };
    move |command: clap::Command| {
        command
            .name(variant.name())
            .about(about)
            .mut_arg("n", |arg| {
                arg.help(format!("Elements in a and b, 1 to {MAX_N} {n}"))
            })
            .mut_arg("threads", |arg| arg.help(threads))
            .mut_arg("blocks", |arg| {
                arg.help(format!("Blocks in the grid, 1 to {MAX_BLOCKS} {blocks}"))
            })
    }
}

/// The exercise's `main` for `variant`.
pub fn run_exercise(variant: Variant, dot_on_gpu: DotOnGpu) -> ExitCode {
    // One run, or each of the grader's batch (`crate::batch`).
    crate::batch::each(|| {
        let (args, sweep) = if variant == Variant::Atomic {
            match cli::parse_shaped::<AtomicArgs>(help_for(variant)) {
                Ok(parsed) => (parsed.dot, parsed.sweep),
                Err(exit) => return exit,
            }
        } else {
            match cli::parse_shaped::<Args>(help_for(variant)) {
                Ok(parsed) => (parsed, false),
                Err(exit) => return exit,
            }
        };
        let outcome = || {
            if sweep {
                let task = SweepTask {
                    n: args.n,
                    threads: args.threads,
                    blocks: args.blocks,
                    a: args.a,
                    b: args.b,
                    seed: args.seed.seed,
                    runs: args.common.runs,
                };
                sweep::run(&task, dot_on_gpu)
            } else {
                run(variant, &args, dot_on_gpu).map(|report| (report, String::new()))
            }
        };
        cli::finish_with(variant.name(), &args.common, outcome)
    })
}

fn run(
    variant: Variant,
    args: &Args,
    dot_on_gpu: DotOnGpu,
) -> Result<Report<Parameters, Results>, CourseError> {
    let n = args
        .n
        .unwrap_or_else(|| gpu::default_size(DEFAULT_N, EMULATOR_N));
    let threads = args.threads.unwrap_or(DEFAULT_THREADS);
    let named_ptx = match (args.inputs_on_gpu, variant) {
        (false, _) => None,
        (true, Variant::Gm) if args.seed.seed.is_some() => {
            return Err(CourseError::BadArguments(format!(
                "--{INPUTS_ON_GPU} makes affine a and b on the GPU (--a, --b), not drawn ones: \
                 leave out --seed"
            )));
        }
        (true, Variant::Gm) => Some(gpu::named_ptx()?),
        (true, _) => {
            return Err(CourseError::BadArguments(format!(
                "--{} is dot-gm's (the grader's runs above 2^31 elements); {} has no such run",
                INPUTS_ON_GPU,
                variant.name()
            )));
        }
    };
    let gpu = prepare(variant, n, threads)?;
    let blocks = args
        .blocks
        .unwrap_or_else(|| launch::default_blocks(n, threads, gpu.residency(), variant.waves()));
    let params = Parameters {
        n,
        threads,
        blocks,
        runs: args.common.runs,
        a: args.a,
        b: args.b,
        seed: args.seed.seed,
    };
    let (output, first_step) = match named_ptx {
        Some(ptx) => (products_on_gpu(&gpu, &ptx, &params)?, INPUTS_ON_GPU),
        None => {
            let (a, b) = params
                .values()
                .vectors(n)
                .map_err(|err| CourseError::BadArguments(format!("--n {n}: {err}")))?;
            let task = Task {
                a,
                b,
                blocks,
                threads,
                runs: params.runs,
                variant,
                params: params.clone(),
                exacts: Default::default(),
            };
            (dot_on_gpu(&gpu, &task)?, "h2d")
        }
    };

    let finished = finish_on_host(variant, &params, &output.values);
    let copy_gb_per_s = copy_probe::copy_gb_per_s(&gpu, params.runs)?;
    let kernel_gb_per_s = (n * variant.bytes_per_element()) as f64 / (output.kernel_ms * 1e6);
    let mut timings = vec![
        Timing::new(first_step, output.h2d_ms, 1),
        Timing::new("kernel", output.kernel_ms, params.runs),
        Timing::new("d2h", output.d2h_ms, 1),
    ];
    if let Some(ms) = finished.host_sum_ms {
        timings.push(Timing::new("host-sum", ms, 1));
    }
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        exercise: variant.name().to_owned(),
        device: gpu.info().clone(),
        results: finished.results,
        check: finished.check,
        parameters: params,
        timings,
        throughput: Some(Throughput {
            kernel_gb_per_s,
            copy_gb_per_s,
            ratio_to_copy: kernel_gb_per_s / copy_gb_per_s,
        }),
        gflop_per_s: None,
        counters: None,
    })
}

/// `--inputs-on-gpu`, dot-gm's: a and b made on the GPU by the course's
/// kernels, the kernel in `ptx` launched on them as the solution launches
/// it, and the products copied back for the host's sum and check as in
/// every other run (`crate::inputs_on_gpu`). `h2d_ms` is the inputs' time.
fn products_on_gpu(gpu: &Gpu, ptx: &str, params: &Parameters) -> Result<GpuOutput, CourseError> {
    let run = inputs_on_gpu::run_three_array_kernel(
        gpu,
        ptx,
        Variant::Gm.id(),
        Launch {
            n: params.n,
            blocks: params.blocks,
            threads: params.threads,
            runs: params.runs,
        },
        Fill::Affine {
            p: params.a.p,
            q: params.a.q,
        },
        Fill::Affine {
            p: params.b.p,
            q: params.b.q,
        },
    )?;
    let mut stopwatch = Stopwatch::start(gpu.stream())?;
    let values = inputs_on_gpu::copied_to_host(&run.arrays.c)?;
    let d2h_ms = stopwatch.lap_ms()?;
    run.arrays.free()?;
    Ok(GpuOutput {
        values,
        h2d_ms: run.inputs_ms,
        kernel_ms: run.kernel_ms,
        d2h_ms,
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    fn help(variant: Variant) -> String {
        let command = match variant {
            Variant::Atomic => AtomicArgs::command(),
            Variant::Gm | Variant::Sm => Args::command(),
        };
        help_for(variant)(command).render_help().to_string()
    }

    #[test]
    fn each_dot_exercise_describes_only_its_own_flags() {
        let sm = help(Variant::Sm);
        assert!(sm.starts_with("Dot product: each block sums"), "{sm}");
        assert!(sm.contains("a power of two"), "{sm}");
        for other in ["sweep", "dot-gm", "dot-atomic", "16 times"] {
            assert!(!sm.contains(other), "dot-sm's help mentions {other}:\n{sm}");
        }
        let gm = help(Variant::Gm);
        assert!(gm.contains("16 times"), "{gm}");
        for other in ["sweep", "power of two", "dot-sm"] {
            assert!(!gm.contains(other), "dot-gm's help mentions {other}:\n{gm}");
        }
        let atomic = help(Variant::Atomic);
        assert!(atomic.contains("--sweep  "), "{atomic}");
        assert!(atomic.contains("with --sweep 512"), "{atomic}");
        assert!(!atomic.contains("dot-gm"), "{atomic}");
    }

    #[test]
    fn a_seed_goes_with_neither_a_nor_b() {
        use crate::cli::{ArgsError, parse_from};
        for flag in ["--a", "--b"] {
            match parse_from::<Args, _, _>(["dot-sm", flag, "3", "--seed", "5"]) {
                Err(ArgsError::Bad(line)) => assert!(line.contains("--seed"), "{line}"),
                other => panic!("{flag} with --seed: {other:?}"),
            }
        }
        let args = parse_from::<Args, _, _>(["dot-sm", "--seed", "5"]).unwrap();
        assert_eq!(args.seed.seed, Some(5));
    }

    #[test]
    fn every_shared_flag_has_help() {
        for variant in [Variant::Gm, Variant::Sm, Variant::Atomic] {
            let text = help(variant);
            for flag in ["--n <N>  ", "--threads <THREADS>  ", "--blocks <BLOCKS>  "] {
                assert!(text.contains(flag), "{text}");
            }
        }
    }
}
