//! streams-overlap's harness: flags, the input, the two pipelines (all
//! chunks in one stream, then spread over several), the check, the bound and
//! the timeline, around the three stages the student writes.

use std::fmt::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use cust::event::Event;
use cust::stream::{Stream, StreamFlags, StreamWaitEventFlags};

use super::{NAME, Parameters, Results, bound_ms, chunks, input, poison};
use crate::checksum::Checksum;
use crate::cli::{self, CommonArgs};
use crate::error::CourseError;
use crate::gpu::{self, Gpu};
use crate::host_memory;
use crate::protocol::{Report, SCHEMA_VERSION, Timing};
use crate::stopwatch::record;
use crate::timeline::{self, Span, Stage};
use crate::timing_gate;
use crate::{stats, units};

/// Copies chunks in, transforms them and copies them out, first all in one
/// stream, then spread over several so copies and kernels overlap.
#[derive(Parser, Debug, Clone)]
#[command(name = NAME, allow_negative_numbers = true)]
pub struct Args {
    /// Elements (u32), 1 to 2147483648 [default: 2^26, 256 MiB each way; 2^20 on
    /// the CPU emulator].
    #[arg(long, default_value_t = gpu::default_size(1 << 26, 1 << 20), value_parser = clap::value_parser!(u64).range(1..=1 << 31))]
    pub n: u64,

    /// Streams to spread the chunks over, 1 to 32.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub streams: u32,

    /// Chunks to cut the job into, at least --streams and at most n
    /// [default: 8 per stream].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub chunks: Option<u32>,

    /// Steps of arithmetic per element, 0 to 100000: sets the kernel's time
    /// against the copies'. The default balances them on an H100 (10 on the CPU
    /// emulator).
    #[arg(long, default_value_t = gpu::default_size(DEFAULT_WORK, 10), value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub work: u32,

    /// Write the overlapped run's timeline to FILE as an SVG picture.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// Kernel steps per element that make the kernel take about as long as each
/// copy on an H100 over PCIe 5: 5.7 ms against 5.1 ms each way at the
/// default n (docs/src/streams-overlap.md).
pub const DEFAULT_WORK: u32 = 4000;

/// Chunks per stream by default: enough that filling and draining the
/// pipeline costs little (perfect overlap of C chunks loses (C − 1)/C of
/// the two faster stages' one-chunk time).
pub const CHUNKS_PER_STREAM: u32 = 8;

/// One chunk of the job, and the stream to queue its work on.
pub struct Chunk<'a> {
    pub stream: &'a Stream,
    /// The chunk's elements: the same range of the input and the output.
    pub range: Range<usize>,
}

/// The student's part: the three stages of one chunk, each queued on the
/// chunk's stream without waiting, and the buffers behind them.
pub trait Stages {
    /// Copies the chunk of the pinned input to the GPU.
    fn copy_in(&mut self, chunk: &Chunk) -> Result<(), CourseError>;
    /// Runs the kernel over the chunk.
    fn compute(&mut self, chunk: &Chunk) -> Result<(), CourseError>;
    /// Copies the chunk of the result back to the pinned output.
    fn copy_out(&mut self, chunk: &Chunk) -> Result<(), CourseError>;
    /// The pinned output, as the host sees it after a run.
    fn output(&self) -> &[u32];
    /// Fills the output, on the host and on the GPU, with `value`.
    fn fill_output(&mut self, value: u32) -> Result<(), CourseError>;
}

/// What the student's GPU code is given.
pub struct Task {
    /// input\[i] = i.
    pub input: Vec<u32>,
    pub work: u32,
    params: Parameters,
}

/// One pipeline's measurements: the median run's time and stage totals,
/// the last run's spans, and its output.
pub struct PipelineRun {
    pub ms: f64,
    /// Copy in, kernel, copy out: each stage's total over the chunks.
    pub stage_ms: [f64; 3],
    pub spans: Vec<Span>,
    pub output: Vec<u32>,
}

/// Both pipelines, as `measure_pipelines` returns them.
pub struct GpuOutput {
    pub serial: PipelineRun,
    pub overlapped: PipelineRun,
}

/// The student's part, start to end: buffers in, `measure_pipelines`, free.
pub type OverlapOnGpu = fn(&Gpu, &Task) -> Result<GpuOutput, CourseError>;

/// Runs the job with every chunk in one stream, then with the chunks spread
/// over the streams, each after a warm-up and `runs` times; the output is
/// filled with a value no element produces before each run. Under the
/// grader both hold the GPU alone ([`timing_gate`]).
pub fn measure_pipelines(
    gpu: &Gpu,
    task: &Task,
    stages: &mut dyn Stages,
) -> Result<GpuOutput, CourseError> {
    let p = &task.params;
    let during = |what: &'static str| move |err| CourseError::from(err).during(what);
    let streams: Vec<Stream> = (0..p.streams)
        .map(|_| Stream::new(StreamFlags::DEFAULT, None).map_err(during("creating streams")))
        .collect::<Result<_, _>>()?;
    let ranges = chunks(task.input.len(), p.chunks as usize);
    let poison = poison(p.n, task.work);
    // Where each pipeline's output is kept, written before the GPU is held
    // alone: a gigabyte of fresh memory took 0.7 s to fault in, twice
    // inside the timed section of the largest run.
    let kept = |what| {
        host_memory::try_filled(what, p.n, |_| 0u32)
            .map_err(|err| CourseError::BadArguments(format!("--n {}: {err}", p.n)))
    };
    let mut kept = [
        kept("the serial pipeline's output")?,
        kept("the overlapped pipeline's output")?,
    ];
    let [serial_kept, overlapped_kept] = &mut kept;
    let mut measure = |lanes: &[Stream], kept: &mut Vec<u32>| -> Result<PipelineRun, CourseError> {
        let mut times = Vec::new();
        let mut stage_totals = Vec::new();
        let mut last = None;
        for run in 0..stats::WARMUP_RUNS + p.runs {
            stages.fill_output(poison)?;
            let (ms, spans) = run_pipeline(gpu.stream(), lanes, &ranges, stages)?;
            if run >= stats::WARMUP_RUNS {
                times.push(ms);
                stage_totals.push(stage_sums(&spans));
                last = Some(spans);
            }
        }
        let median_of = |f: fn(&[f64; 3]) -> f64| {
            stats::median(&stage_totals.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        Ok(PipelineRun {
            ms: stats::median(&times).unwrap_or(f64::NAN),
            stage_ms: [
                median_of(|s| s[0]),
                median_of(|s| s[1]),
                median_of(|s| s[2]),
            ],
            spans: last.unwrap_or_default(),
            output: host_memory::copied(stages.output(), std::mem::take(kept)),
        })
    };
    // Both pipelines, warm-ups included, with the GPU alone under the
    // grader: the overlap check compares their times.
    let alone = timing_gate::enter()?;
    let serial = measure(&streams[..1], serial_kept)?;
    let overlapped = measure(&streams, overlapped_kept)?;
    drop(alone);
    Ok(GpuOutput { serial, overlapped })
}

/// Queues every chunk's three stages, chunk k on stream k mod lanes, with an
/// event before and after each stage; returns the run's time and its spans.
fn run_pipeline(
    base: &Stream,
    lanes: &[Stream],
    ranges: &[Range<usize>],
    stages: &mut dyn Stages,
) -> Result<(f64, Vec<Span>), CourseError> {
    let start = record(base)?;
    for lane in lanes {
        wait(lane, record(base)?)?;
    }
    let mut marks = Vec::with_capacity(ranges.len());
    for (k, range) in ranges.iter().enumerate() {
        let lane = k % lanes.len();
        let chunk = Chunk {
            stream: &lanes[lane],
            range: range.clone(),
        };
        let before = record(chunk.stream)?;
        stages.copy_in(&chunk)?;
        let copied_in = record(chunk.stream)?;
        stages.compute(&chunk)?;
        let computed = record(chunk.stream)?;
        stages.copy_out(&chunk)?;
        let copied_out = record(chunk.stream)?;
        marks.push((lane, [before, copied_in, computed, copied_out]));
    }
    for lane in lanes {
        wait(base, record(lane)?)?;
    }
    let stop = record(base)?;
    stop.synchronize()
        .map_err(|err| CourseError::from(err).during("running the pipeline"))?;
    let since_start = |event: &Event| -> Result<f64, CourseError> {
        Ok(f64::from(event.elapsed_time_f32(&start).map_err(
            |err| CourseError::from(err).during("reading events"),
        )?))
    };
    let mut spans = Vec::with_capacity(3 * marks.len());
    for (lane, events) in &marks {
        let t = [
            since_start(&events[0])?,
            since_start(&events[1])?,
            since_start(&events[2])?,
            since_start(&events[3])?,
        ];
        for (i, stage) in [Stage::CopyIn, Stage::Compute, Stage::CopyOut]
            .into_iter()
            .enumerate()
        {
            spans.push(Span {
                lane: *lane,
                stage,
                start_ms: t[i],
                end_ms: t[i + 1],
            });
        }
    }
    Ok((since_start(&stop)?, spans))
}

fn wait(stream: &Stream, event: Event) -> Result<(), CourseError> {
    stream
        .wait_event(event, StreamWaitEventFlags::DEFAULT)
        .map_err(|err| CourseError::from(err).during("joining streams"))
}

/// Each stage's total time over a run's spans.
fn stage_sums(spans: &[Span]) -> [f64; 3] {
    let total = |stage| {
        spans
            .iter()
            .filter(|s| s.stage == stage)
            .map(|s| s.end_ms - s.start_ms)
            .sum()
    };
    [
        total(Stage::CopyIn),
        total(Stage::Compute),
        total(Stage::CopyOut),
    ]
}

/// The exercise's `main`.
pub fn run_exercise(overlap_on_gpu: OverlapOnGpu) -> ExitCode {
    // One run, or each of the grader's batch (`crate::batch`).
    crate::batch::each(|| {
        let args: Args = match cli::parse() {
            Ok(args) => args,
            Err(exit) => return exit,
        };
        cli::finish_with(NAME, &args.common, || run(&args, overlap_on_gpu))
    })
}

/// Flag combinations no single flag's range can refuse.
fn validate(args: &Args) -> Result<Parameters, CourseError> {
    let chunks = args.chunks.unwrap_or(args.streams * CHUNKS_PER_STREAM);
    if chunks < args.streams {
        return Err(CourseError::BadArguments(format!(
            "--chunks {chunks} is fewer than --streams {}: every stream needs at least one chunk",
            args.streams
        )));
    }
    if u64::from(chunks) > args.n {
        return Err(CourseError::BadArguments(format!(
            "--chunks {chunks} is more than the {} elements: a chunk needs at least one",
            args.n
        )));
    }
    if let Some(path) = &args.timeline {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        if folder.is_some_and(|f| !f.is_dir()) || path.is_dir() {
            return Err(CourseError::BadArguments(format!(
                "--timeline {}: not a file in an existing folder",
                path.display()
            )));
        }
    }
    Ok(Parameters {
        n: args.n,
        streams: args.streams,
        chunks,
        work: args.work,
        runs: args.common.runs,
    })
}

fn run(
    args: &Args,
    overlap_on_gpu: OverlapOnGpu,
) -> Result<(Report<Parameters, Results>, String), CourseError> {
    let params = validate(args)?;
    let gpu = Gpu::init()?;
    gpu.check_fits(
        8 * params.n,
        &format!("--n {} (input and output)", params.n),
    )?;
    let task = Task {
        input: input(params.n)
            .map_err(|err| CourseError::BadArguments(format!("--n {}: {err}", params.n)))?,
        work: params.work,
        params: params.clone(),
    };

    let output = overlap_on_gpu(&gpu, &task)?;

    let check = super::check(
        &[
            ("serial", &output.serial.output),
            ("overlapped", &output.overlapped.output),
        ],
        &params,
    );
    let [copy_in_ms, kernel_ms, copy_out_ms] = output.serial.stage_ms;
    let bound = bound_ms(output.serial.stage_ms, params.chunks);
    let results = Results {
        serial_ms: output.serial.ms,
        overlapped_ms: output.overlapped.ms,
        speedup: output.serial.ms / output.overlapped.ms,
        copy_in_ms,
        kernel_ms,
        copy_out_ms,
        bound_ms: bound,
        ratio_to_bound: bound / output.overlapped.ms,
        checksum: Some(Checksum::of(
            output
                .serial
                .output
                .iter()
                .chain(&output.overlapped.output)
                .copied(),
        )),
    };
    if let Some(path) = &args.timeline {
        let title = format!(
            "{} streams, {} chunks, work {}: {:.2} ms (one stream: {:.2} ms)",
            params.streams, params.chunks, params.work, output.overlapped.ms, output.serial.ms
        );
        let picture = timeline::svg(&title, params.streams as usize, &output.overlapped.spans);
        std::fs::write(path, picture).map_err(|err| {
            CourseError::BadArguments(format!(
                "--timeline {}: could not write it: {err}",
                path.display()
            ))
        })?;
    }
    let summary = summary(&params, &results);
    let report = Report {
        schema_version: SCHEMA_VERSION,
        exercise: NAME.to_owned(),
        device: gpu.info().clone(),
        timings: vec![
            Timing::new("serial", results.serial_ms, params.runs),
            Timing::new("overlapped", results.overlapped_ms, params.runs),
        ],
        parameters: params,
        results,
        check,
        throughput: None,
        gflop_per_s: None,
        counters: None,
    };
    Ok((report, summary))
}

/// The measurements for a person.
fn summary(params: &Parameters, r: &Results) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} elements ({} each way), {} streams, {} chunks, work {}; median of {} runs",
        units::count(params.n),
        units::bytes(4 * params.n),
        params.streams,
        params.chunks,
        params.work,
        params.runs
    );
    let _ = writeln!(
        out,
        "one stream  {:>9.3} ms  (copy in {:.3} + kernel {:.3} + copy out {:.3})",
        r.serial_ms, r.copy_in_ms, r.kernel_ms, r.copy_out_ms
    );
    let _ = writeln!(
        out,
        "overlapped  {:>9.3} ms  speedup {:.2}x",
        r.overlapped_ms, r.speedup
    );
    let _ = writeln!(
        out,
        "bound       {:>9.3} ms  perfect overlap; the overlapped run reaches {:.2} of it\n",
        r.bound_ms, r.ratio_to_bound
    );
    out
}
