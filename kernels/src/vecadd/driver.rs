//! vecadd-anyN's harness: the flags, the inputs, the check and the report
//! around the GPU code the student writes in the exercise's src/main.rs.

use std::process::ExitCode;

use clap::Parser;

use super::{
    BYTES_PER_ELEMENT, DEFAULT_N, DEFAULT_THREADS, EMULATOR_N, MAX_N, NAME, Parameters, Results,
};
use crate::cli::{self, CommonArgs, SeedArg};
use crate::copy_probe;
use crate::error::CourseError;
use crate::gpu::{self, Gpu};
use crate::launch::{self, MAX_BLOCKS};
use crate::protocol::{Report, SCHEMA_VERSION, Throughput, Timing};

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
        cli::finish(NAME, args.common.json, run(&args, add_on_gpu))
    })
}

fn run(args: &Args, add_on_gpu: AddOnGpu) -> Result<Report<Parameters, Results>, CourseError> {
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
    let (a, b) = params
        .inputs()
        .vectors(args.n)
        .map_err(|err| CourseError::BadArguments(format!("--n {}: {err}", args.n)))?;
    let task = Task {
        a,
        b,
        blocks,
        threads: args.threads,
        runs: args.common.runs,
    };

    let output = add_on_gpu(&gpu, &task)?;
    drop(task);

    let check = super::check(&output.c, &params);
    let copy_gb_per_s = copy_probe::copy_gb_per_s(&gpu, args.common.runs)?;
    let kernel_gb_per_s = (args.n * BYTES_PER_ELEMENT) as f64 / (output.kernel_ms * 1e6);
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        exercise: NAME.to_owned(),
        device: gpu.info().clone(),
        results: Results::of(&output.c, &params),
        parameters: params,
        check,
        timings: vec![
            Timing::new("h2d", output.h2d_ms, 1),
            Timing::new("kernel", output.kernel_ms, args.common.runs),
            Timing::new("d2h", output.d2h_ms, 1),
        ],
        throughput: Some(Throughput {
            kernel_gb_per_s,
            copy_gb_per_s,
            ratio_to_copy: kernel_gb_per_s / copy_gb_per_s,
        }),
        gflop_per_s: None,
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
