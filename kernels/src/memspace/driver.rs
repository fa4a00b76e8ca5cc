//! memspace-timing's harness: flags, the data, the check of every sum and
//! the table, around the GPU code the student writes in src/main.rs.

use std::fmt::Write;
use std::process::ExitCode;

use clap::Parser;
use cust::memory::{CopyDestination, DeviceBuffer, DevicePointer};
use cust::stream::Stream;

use super::{NAME, Parameters, Pattern, Results, Row, SIZE, Space};
use crate::cli::{self, CommonArgs};
use crate::error::CourseError;
use crate::gpu::Gpu;
use crate::launch::{self, MAX_BLOCKS};
use crate::protocol::{Report, SCHEMA_VERSION, Timing};
use crate::stopwatch;

/// Times one sum over 4096 values, read from global, constant, register and
/// shared memory by every thread, and checks every thread's sum.
#[derive(Parser, Debug, Clone)]
#[command(name = NAME, allow_negative_numbers = true)]
pub struct Args {
    /// Threads per block, 1 to 1024.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,

    /// Blocks in the grid, 1 to 2147483647 [default: as many as the GPU runs at once].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_BLOCKS)))]
    pub blocks: Option<u32>,

    /// Which values a warp's threads read at each step: uniform (all the
    /// same one, which constant memory broadcasts) or per-thread (each its
    /// own, which constant memory serves one by one).
    #[arg(long, default_value = "uniform", value_parser = parse_pattern)]
    pub pattern: Pattern,

    #[command(flatten)]
    pub common: CommonArgs,
}

fn parse_pattern(text: &str) -> Result<Pattern, String> {
    text.parse()
}

/// What the student's GPU code is given.
pub struct Task {
    /// data\[j] = j, SIZE values.
    pub data: Box<[f32; SIZE]>,
    pub blocks: u32,
    pub threads: u32,
    pub runs: u32,
    /// Passed to the kernels: 1 for the per-thread pattern, 0 for uniform.
    pub per_thread: i32,
}

/// One space's sums (one per thread) and its median kernel time.
pub struct SpaceRun {
    pub space: Space,
    pub sums: Vec<f32>,
    pub ms: f64,
}

/// What the student's GPU code gives back: one run per space.
pub struct GpuOutput {
    pub runs: Vec<SpaceRun>,
}

/// The student's part: the four kernels, measured.
pub type MeasureOnGpu = fn(&Gpu, &Task) -> Result<GpuOutput, CourseError>;

/// Measures one space: fills `out` with NaN (so a thread that writes nothing
/// fails), times `launch` with events (median of `runs` after a warm-up),
/// and copies the sums back. `launch` gets `out`'s device pointer.
pub fn measure<E: Into<CourseError>>(
    stream: &Stream,
    out: &mut DeviceBuffer<f32>,
    runs: u32,
    space: Space,
    mut launch: impl FnMut(DevicePointer<f32>) -> Result<(), E>,
) -> Result<SpaceRun, CourseError> {
    out.set_32(f32::NAN.to_bits())?;
    let pointer = out.as_device_ptr();
    let ms = stopwatch::median_ms_checked(stream, runs, out, || launch(pointer))?;
    let mut sums = vec![f32::NAN; out.len()];
    out.copy_to(&mut sums)?;
    Ok(SpaceRun { space, sums, ms })
}

/// The exercise's `main`.
pub fn run_exercise(measure_on_gpu: MeasureOnGpu) -> ExitCode {
    // One run, or each of the grader's batch (`crate::batch`).
    crate::batch::each(|| {
        let args: Args = match cli::parse() {
            Ok(args) => args,
            Err(exit) => return exit,
        };
        cli::finish_with(NAME, &args.common, || run(&args, measure_on_gpu))
    })
}

fn run(
    args: &Args,
    measure_on_gpu: MeasureOnGpu,
) -> Result<(Report<Parameters, Results>, String), CourseError> {
    let gpu = Gpu::init()?;
    gpu.check_block(args.threads)?;
    let blocks = args.blocks.unwrap_or_else(|| {
        launch::wave_blocks(args.threads, gpu.residency()).min(u64::from(MAX_BLOCKS)) as u32
    });
    let params = Parameters {
        threads: args.threads,
        blocks,
        runs: args.common.runs,
        pattern: args.pattern,
    };
    gpu.check_fits(
        params.grid_threads() * 4 + (SIZE * 4) as u64,
        &format!(
            "--blocks {blocks} --threads {} (one sum per thread)",
            args.threads
        ),
    )?;
    let task = Task {
        data: super::data(),
        blocks,
        threads: args.threads,
        runs: params.runs,
        per_thread: i32::from(params.pattern == Pattern::PerThread),
    };

    let output = measure_on_gpu(&gpu, &task)?;

    let outputs: Vec<(Space, Vec<f32>)> = output
        .runs
        .iter()
        .map(|r| (r.space, r.sums.clone()))
        .collect();
    let check = super::check(&outputs, &params);
    let checksum = super::checksum(&outputs);
    let register_ms = output
        .runs
        .iter()
        .find(|r| r.space == Space::Register)
        .map_or(f64::NAN, |r| r.ms);
    let reads = params.grid_threads() as f64 * SIZE as f64;
    let rows: Vec<Row> = output
        .runs
        .iter()
        .map(|r| Row {
            space: r.space,
            ms: r.ms,
            g_reads_per_s: reads / (r.ms * 1e6),
            relative_to_register: r.ms / register_ms,
        })
        .collect();
    let table = table(&rows, &params);
    let timings = rows
        .iter()
        .map(|row| Timing::new(&format!("kernel-{}", row.space.name()), row.ms, params.runs))
        .collect();
    let report = Report {
        schema_version: SCHEMA_VERSION,
        exercise: NAME.to_owned(),
        device: gpu.info().clone(),
        parameters: params,
        results: Results {
            rows,
            checksum: Some(checksum),
        },
        check,
        timings,
        throughput: None,
        gflop_per_s: None,
        counters: None,
    };
    Ok((report, table))
}

/// The measurements for a person.
fn table(rows: &[Row], params: &Parameters) -> String {
    let mut out = format!(
        "pattern {}: {} blocks x {} threads, each summing {SIZE} values; median of {} runs\n\
         {:<10} {:>10} {:>12} {:>11}\n",
        params.pattern,
        params.blocks,
        params.threads,
        params.runs,
        "space",
        "kernel ms",
        "G reads/s",
        "x register"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<10} {:>10.3} {:>12.1} {:>11.2}",
            row.space.name(),
            row.ms,
            row.g_reads_per_s,
            row.relative_to_register
        );
    }
    out.push('\n');
    out
}
