//! The matmul exercises' harness: flags, inputs, the check of every entry,
//! the golden model's RMS and the report, around the GPU code the student
//! writes in the exercise's src/main.rs.

use std::process::ExitCode;

use clap::Parser;

use super::{
    DEFAULT_WIDTH, EMULATOR_WIDTH, Inputs, MAX_WIDTH, Parameters, Results, Variant, check,
    checksum, freivalds, rms_vs_golden,
};
use crate::cli::{self, CommonArgs, SeedArg};
use crate::error::CourseError;
use crate::fresh_inputs::Answers;
use crate::gpu::{self, Gpu};
use crate::protocol::{Real, Report, SCHEMA_VERSION, Timing};
use crate::seeded;

/// matmul-naive's flags.
#[derive(Parser, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct NaiveArgs {
    /// Width W of the square matrices M, N and P, 1 to 32768.
    #[arg(long, default_value_t = gpu::default_size(DEFAULT_WIDTH, EMULATOR_WIDTH), value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_WIDTH)))]
    pub width: u32,

    /// Edge of the square thread block, 1 to 32 (block × block threads, at
    /// most 1024).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub block: u32,

    #[command(flatten)]
    pub seed: SeedArg,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// matmul-tiled's flags.
#[derive(Parser, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct TiledArgs {
    /// Width W of the square matrices M, N and P, 1 to 32768.
    #[arg(long, default_value_t = gpu::default_size(DEFAULT_WIDTH, EMULATOR_WIDTH), value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_WIDTH)))]
    pub width: u32,

    /// Edge of the square tile, and of the thread block: 16 or 32 (the
    /// kernel is compiled for each).
    #[arg(long, default_value_t = 32, value_parser = parse_tile)]
    pub tile: u32,

    #[command(flatten)]
    pub seed: SeedArg,

    #[command(flatten)]
    pub common: CommonArgs,
}

fn parse_tile(text: &str) -> Result<u32, String> {
    match text {
        "16" => Ok(16),
        "32" => Ok(32),
        _ => Err("--tile takes 16 or 32, the two tile sizes the kernel is compiled for".into()),
    }
}

/// What the student's GPU code is given.
pub struct Task {
    /// M and N, row-major, width × width each.
    pub m: Vec<f32>,
    pub n: Vec<f32>,
    pub width: u32,
    /// Blocks are block × block threads (for matmul-tiled, the tile).
    pub block: u32,
    /// Timed kernel runs to take the median of.
    pub runs: u32,
}

impl Answers for Task {
    /// M and N drawn from `seed`, as `--seed` draws them.
    fn draw(&self, seed: u64) -> Result<Vec<Vec<f32>>, CourseError> {
        let (m, n) = Inputs { seed: Some(seed) }
            .matrices(self.width)
            .map_err(|err| CourseError::BadArguments(format!("--width {}: {err}", self.width)))?;
        Ok(vec![m, n])
    }

    fn task_inputs(&self) -> Vec<&[f32]> {
        vec![&self.m, &self.n]
    }

    fn output_len(&self) -> usize {
        self.m.len()
    }

    /// Freivalds' check ([`freivalds`]) with weights ±[½, 1) drawn from
    /// `salt`: O(W²), where the check of every entry is O(W³).
    fn check(
        &self,
        _seed: Option<u64>,
        inputs: &[&[f32]],
        output: &[f32],
        salt: u64,
    ) -> Result<(), String> {
        let [m, n] = inputs else {
            return Err("M and N were not given".into());
        };
        let x: Vec<f64> = (0..u64::from(self.width))
            .map(|j| {
                let h = f64::from(seeded::drawn(salt, 7, j));
                h.signum() * (0.5 + (h.abs().fract()) / 2.0)
            })
            .collect();
        match freivalds(m, n, output, self.width, &x) {
            None => Ok(()),
            Some((i, px, mnx)) => Err(format!(
                "row {i} of P weighed by random weights x is Σ_j P[{i}][j]·x_j = {px}, where \
                 M × N gives {mnx}"
            )),
        }
    }
}

/// What the student's GPU code gives back: P, row-major, and step times.
pub struct GpuOutput {
    pub p: Vec<f32>,
    pub h2d_ms: f64,
    pub kernel_ms: f64,
    pub d2h_ms: f64,
}

/// The student's part: P = M × N on the GPU.
pub type MatmulOnGpu = fn(&Gpu, &Task) -> Result<GpuOutput, CourseError>;

/// The exercise's `main` for `variant`.
pub fn run_exercise(variant: Variant, matmul_on_gpu: MatmulOnGpu) -> ExitCode {
    // One run, or each of the grader's batch (`crate::batch`).
    crate::batch::each(|| {
        let parsed = match variant {
            Variant::Naive => cli::parse_named::<NaiveArgs>(
                variant.name(),
                "P = M × N on the GPU, one thread per entry of P",
            )
            .map(|args| (args.width, args.block, args.seed, args.common)),
            Variant::Tiled => cli::parse_named::<TiledArgs>(
                variant.name(),
                "P = M × N on the GPU, with tiles of M and N staged in shared memory",
            )
            .map(|args| (args.width, args.tile, args.seed, args.common)),
        };
        let (width, block, seed, common) = match parsed {
            Ok(parsed) => parsed,
            Err(exit) => return exit,
        };
        let params = Parameters {
            width,
            block,
            runs: common.runs,
            seed: seed.seed,
        };
        cli::finish(variant.name(), &common, || {
            run(variant, params, matmul_on_gpu)
        })
    })
}

fn run(
    variant: Variant,
    params: Parameters,
    matmul_on_gpu: MatmulOnGpu,
) -> Result<Report<Parameters, Results>, CourseError> {
    let gpu = Gpu::init()?;
    let w = u64::from(params.width);
    gpu.check_fits(
        12 * w * w,
        &format!("--width {} (M, N and P)", params.width),
    )?;
    let (m, n) = params
        .inputs()
        .matrices(params.width)
        .map_err(|err| CourseError::BadArguments(format!("--width {}: {err}", params.width)))?;
    let task = Task {
        m,
        n,
        width: params.width,
        block: params.block,
        runs: params.runs,
    };

    let output = matmul_on_gpu(&gpu, &task)?;

    let check = check::check(variant, &params, &task.m, &task.n, &output.p);
    let (rms, golden_rows) = if output.p.len() as u64 == w * w {
        rms_vs_golden(&output.p, &task.m, &task.n, params.width)
    } else {
        (f64::NAN, 0)
    };
    let gflop_per_s = 2.0 * (w as f64).powi(3) / (output.kernel_ms * 1e6);
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        exercise: variant.name().to_owned(),
        device: gpu.info().clone(),
        results: Results {
            rms_vs_golden: Real(rms),
            golden_rows,
            checksum: Real(checksum(&output.p, params.width)),
        },
        check,
        timings: vec![
            Timing::new("h2d", output.h2d_ms, 1),
            Timing::new("kernel", output.kernel_ms, params.runs),
            Timing::new("d2h", output.d2h_ms, 1),
        ],
        parameters: params,
        throughput: None,
        gflop_per_s: Some(gflop_per_s),
        counters: None,
    })
}
