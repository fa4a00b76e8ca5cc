//! vecadd-anyN's harness: the flags, the inputs, the check and the report
//! around the GPU code the student writes in the exercise's src/main.rs.

use std::process::ExitCode;

use clap::Parser;

use super::{
    BYTES_PER_ELEMENT, DEFAULT_N, DEFAULT_THREADS, EMULATOR_N, Inputs, MAX_N, NAME, Parameters,
    Results,
};
use crate::catalogue::ExerciseId;
use crate::cli::{self, CommonArgs, SeedArg};
use crate::copy_probe;
use crate::error::CourseError;
use crate::fresh_inputs::Answers;
use crate::gpu::{self, Gpu};
use crate::grader_names::INPUTS_ON_GPU;
use crate::inputs_on_gpu::{self, Fill, Launch};
use crate::launch::{self, MAX_BLOCKS};
use crate::protocol::{Check, Report, SCHEMA_VERSION, Throughput, Timing};
use crate::stopwatch::Stopwatch;

/// Adds two vectors of any length on the GPU, with a grid that may be far
/// smaller than the vectors, checks every element and times each step.
#[derive(Parser, Debug)]
// Negative numbers are values to reject with the flag named, not unknown flags.
#[command(name = NAME, allow_negative_numbers = true)]
pub struct Args {
    /// Elements in a, b and c (element i of a is i mod 4096, of b
    /// 2·(i mod 4096), unless --seed is given).
    #[arg(long, default_value_t = gpu::default_size(DEFAULT_N, EMULATOR_N), value_parser = parse_n)]
    pub n: u64,

    /// Threads per block, 1 to 1024.
    #[arg(long, default_value_t = DEFAULT_THREADS, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,

    /// Blocks in the grid, 1 to 2147483647 [default: 16 times as many as the
    /// GPU runs at once, but at most half of what n needs, so every thread loops].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_BLOCKS)))]
    pub blocks: Option<u32>,

    #[command(flatten)]
    pub seed: SeedArg,

    /// The grader's runs above 2^31 elements: a and b made on the GPU and
    /// c checked there, the kernel the one CUDA_COURSE_KERNEL_PTX names
    /// (`crate::inputs_on_gpu`).
    #[arg(long = INPUTS_ON_GPU, hide = true)]
    pub inputs_on_gpu: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// `--n`: a whole number from 1 to [`MAX_N`].
fn parse_n(text: &str) -> Result<u64, String> {
    cli::parse_n(text, MAX_N, BYTES_PER_ELEMENT, "a, b and c")
}

/// What the student's GPU code is given.
pub struct Task {
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    /// Launch shape: `blocks` blocks of `threads` threads.
    pub blocks: u32,
    pub threads: u32,
    /// Timed kernel runs to take the median of.
    pub runs: u32,
}

impl Answers for Task {
    /// a and b drawn from `seed`, as `--seed` draws them.
    fn draw(&self, seed: u64) -> Result<Vec<Vec<f32>>, CourseError> {
        let n = self.a.len() as u64;
        let (a, b) = Inputs { seed: Some(seed) }
            .vectors(n)
            .map_err(|err| CourseError::BadArguments(format!("--n {n}: {err}")))?;
        Ok(vec![a, b])
    }

    fn task_inputs(&self) -> Vec<&[f32]> {
        vec![&self.a, &self.b]
    }

    fn output_len(&self) -> usize {
        self.a.len()
    }

    /// Every c\[i] exactly a\[i] + b\[i] in f32: one rounding, the same in
    /// any kernel.
    fn check(
        &self,
        _seed: Option<u64>,
        inputs: &[&[f32]],
        output: &[f32],
        _salt: u64,
    ) -> Result<(), String> {
        let [a, b] = inputs else {
            return Err("a and b were not given".into());
        };
        if output.len() != a.len() {
            return Err(format!(
                "{} values where {} were expected",
                output.len(),
                a.len()
            ));
        }
        let wrong = output
            .iter()
            .zip(a.iter().zip(b.iter()))
            .position(|(c, (a, b))| c.to_bits() != (a + b).to_bits());
        match wrong {
            None => Ok(()),
            Some(i) => Err(format!(
                "c[{i}] is {} where a[{i}] + b[{i}] is {}",
                output[i],
                a[i] + b[i]
            )),
        }
    }
}

/// What the student's GPU code gives back: c, and how long each step took.
pub struct GpuOutput {
    pub c: Vec<f32>,
    pub h2d_ms: f64,
    pub kernel_ms: f64,
    pub d2h_ms: f64,
}

/// The student's part: c = a + b on the GPU.
pub type AddOnGpu = fn(&Gpu, &Task) -> Result<GpuOutput, CourseError>;

/// The exercise's `main`: parse, run `add_on_gpu`, check, report, exit code.
pub fn run_exercise(add_on_gpu: AddOnGpu) -> ExitCode {
    // One run, or each of the grader's batch (`crate::batch`).
    crate::batch::each(|| {
        let args: Args = match cli::parse() {
            Ok(args) => args,
            Err(exit) => return exit,
        };
        cli::finish(NAME, &args.common, || run(&args, add_on_gpu))
    })
}

fn run(args: &Args, add_on_gpu: AddOnGpu) -> Result<Report<Parameters, Results>, CourseError> {
    let named_ptx = match args.inputs_on_gpu {
        true => Some(gpu::named_ptx()?),
        false => None,
    };
    let gpu = Gpu::init()?;
    gpu.check_block(args.threads)?;
    let blocks = args.blocks.unwrap_or_else(|| {
        launch::default_blocks(
            args.n,
            args.threads,
            gpu.residency(),
            launch::STREAMING_WAVES,
        )
    });
    let params = Parameters {
        n: args.n,
        threads: args.threads,
        blocks,
        runs: args.common.runs,
        seed: args.seed.seed,
    };
    gpu.check_fits(
        args.n.saturating_mul(BYTES_PER_ELEMENT),
        &format!("--n {} (a, b and c)", args.n),
    )?;
    let made = match named_ptx {
        Some(ptx) => made_on_gpu(&gpu, &ptx, &params)?,
        None => made_on_host(&gpu, &params, add_on_gpu)?,
    };
    let kernel_ms = made.kernel_ms;
    let copy_gb_per_s = copy_probe::copy_gb_per_s(&gpu, args.common.runs)?;
    let kernel_gb_per_s = (args.n * BYTES_PER_ELEMENT) as f64 / (kernel_ms * 1e6);
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        exercise: NAME.to_owned(),
        device: gpu.info().clone(),
        results: made.results,
        parameters: params,
        check: made.check,
        timings: made.timings,
        throughput: Some(Throughput {
            kernel_gb_per_s,
            copy_gb_per_s,
            ratio_to_copy: kernel_gb_per_s / copy_gb_per_s,
        }),
        gflop_per_s: None,
        counters: None,
    })
}

/// A run's check, results and timed steps, the kernel's median among them.
struct Made {
    check: Check,
    results: Results,
    timings: Vec<Timing>,
    kernel_ms: f64,
}

/// a and b made on the host and given to the student's GPU code, c checked
/// on the host: every run but the grader's above 2^31 elements.
fn made_on_host(gpu: &Gpu, params: &Parameters, add_on_gpu: AddOnGpu) -> Result<Made, CourseError> {
    let (a, b) = params
        .inputs()
        .vectors(params.n)
        .map_err(|err| CourseError::BadArguments(format!("--n {}: {err}", params.n)))?;
    let task = Task {
        a,
        b,
        blocks: params.blocks,
        threads: params.threads,
        runs: params.runs,
    };
    let output = add_on_gpu(gpu, &task)?;
    drop(task);
    Ok(Made {
        check: super::check(&output.c, params),
        results: Results::of(&output.c, params),
        timings: vec![
            Timing::new("h2d", output.h2d_ms, 1),
            Timing::new("kernel", output.kernel_ms, params.runs),
            Timing::new("d2h", output.d2h_ms, 1),
        ],
        kernel_ms: output.kernel_ms,
    })
}

/// `--inputs-on-gpu`: a and b made on the GPU by the course's kernels, the
/// kernel in `ptx` launched on them as the solution launches it, and c
/// checked on the GPU; where any element is wrong, c is copied back and
/// checked on the host as every other run is, so a failing report says
/// what [`made_on_host`]'s would (`crate::inputs_on_gpu`, threat model).
fn made_on_gpu(gpu: &Gpu, ptx: &str, params: &Parameters) -> Result<Made, CourseError> {
    let (a_values, b_values) = params.inputs().one_period(params.n);
    let run = inputs_on_gpu::run_three_array_kernel(
        gpu,
        ptx,
        ExerciseId::VecaddAnyN,
        Launch {
            n: params.n,
            blocks: params.blocks,
            threads: params.threads,
            runs: params.runs,
        },
        Fill::Repeat(&a_values),
        Fill::Repeat(&b_values),
    )?;
    let stream = gpu.stream();
    let mut stopwatch = Stopwatch::start(stream)?;
    let c = &run.arrays.c;
    let unequal = run
        .course
        .count_unequal_sums(stream, c, &a_values, &b_values)?;
    let (check, results) = if unequal == 0 {
        (super::passed(params), Results::of_correct(params))
    } else {
        let c = inputs_on_gpu::copied_to_host(c)?;
        (super::check(&c, params), Results::of(&c, params))
    };
    let check_ms = stopwatch.lap_ms()?;
    run.arrays.free()?;
    Ok(Made {
        check,
        results,
        timings: vec![
            Timing::new(INPUTS_ON_GPU, run.inputs_ms, 1),
            Timing::new("kernel", run.kernel_ms, params.runs),
            Timing::new("check", check_ms, 1),
        ],
        kernel_ms: run.kernel_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{ArgsError, parse_from};

    // Exit codes and one-line errors for every flag: tests/cli.rs of the
    // exercise. Here: what --n says, without running a binary.

    fn bad(args: &[&str]) -> String {
        match parse_from::<Args, _, _>(std::iter::once(NAME).chain(args.iter().copied())) {
            Err(ArgsError::Bad(line)) => line,
            Ok(parsed) => panic!("{args:?} parsed as {parsed:?}"),
            Err(ArgsError::Show(_)) => panic!("{args:?} showed help"),
        }
    }

    #[test]
    fn an_n_no_gpu_can_hold_says_so() {
        let line = bad(&["--n", "100000000000"]);
        assert!(line.contains("more than any GPU holds"), "{line}");
        assert!(line.contains("1.20 TB"), "{line}");
    }

    #[test]
    fn a_seed_must_be_a_whole_number() {
        let line = bad(&["--seed", "-1"]);
        assert!(line.contains("--seed"), "{line}");
        let args = parse_from::<Args, _, _>([NAME, "--seed", "18446744073709551615"]).unwrap();
        assert_eq!(args.seed.seed, Some(u64::MAX));
        assert_eq!(parse_from::<Args, _, _>([NAME]).unwrap().seed.seed, None);
    }

    #[test]
    fn the_largest_n_is_accepted_before_asking_the_gpu() {
        let args = parse_from::<Args, _, _>([NAME, "--n", &MAX_N.to_string()]);
        assert_eq!(args.unwrap().n, MAX_N);
    }
}
