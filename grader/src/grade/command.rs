//! `grader run`, and the run half of `grader grade` and `grader check`:
//! where the kernels run, said once; who is graded (some students, a
//! shard); the exercises graded `--jobs` at a time on each GPU, each student
//! told to the caller as they are done; the reports written from
//! results.json.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use crate::build::bundle;
use crate::build::command::say_if_unsandboxed;
use crate::confine::runner::Limits;
use crate::confine::sandbox::Isolation;
use crate::error::{Error, Result};
use crate::grade::grading::{self, Settings};
use crate::grade::shard::{self, Shard};
use crate::record::reports;
use crate::record::results::Results;

/// How runs are made.
#[derive(Clone, Copy, Debug)]
pub struct Running {
    /// How long a run may take before it is stopped.
    pub timeout: Duration,
    /// Skip students results.json holds, graded from the same inputs.
    pub resume: bool,
    /// Leave compute-sanitizer out: the memory-safety point is not
    /// assessed.
    pub no_sanitize: bool,
    /// Run the kernels on the bundle's CPU emulator.
    pub emulate: bool,
    /// Never the emulator: without a GPU, stop.
    pub no_emulate: bool,
    /// Exercises graded at once on each GPU; None: the machine's cores,
    /// shared among the GPUs.
    pub jobs: Option<usize>,
}

/// What one `grader run` grades.
pub struct Run<'a> {
    pub bundle: &'a Path,
    pub out: &'a Path,
    pub running: Running,
    pub isolation: Isolation,
    /// Only these students; all when empty.
    pub students: Vec<String>,
    /// Only this slice of the class, for `grader merge`.
    pub shard: Option<Shard>,
    /// Over these GPUs, `--jobs` exercises at a time on each.
    pub gpus: Option<Vec<u32>>,
    /// On the CPU emulator ([`device`] decides it).
    pub emulate: bool,
}

/// How far a grading is.
pub enum Progress<'a> {
    /// About to grade this many students.
    Students(usize),
    /// This student is graded and in results.json.
    Graded(&'a str),
    /// Everyone is graded.
    Done,
}

/// Where the kernels run (true: the CPU emulator), said once, before any
/// student is built or graded.
pub fn device(running: &Running) -> Result<bool> {
    let emulate = crate::run::device::choose(running.emulate, running.no_emulate)?;
    if emulate {
        eprintln!(
            "grader: {}: kernels run on the CPU emulator, at capped sizes; every report says so",
            if running.emulate {
                "--emulate"
            } else {
                "no NVIDIA GPU is usable here (--no-emulate refuses to grade without one)"
            }
        );
        if !running.no_sanitize {
            eprintln!(
                "grader: compute-sanitizer is left out on the emulator, which checks every \
                 access itself: its findings cost the memory-safety point"
            );
        }
    }
    Ok(emulate)
}

/// Grades the bundle into OUT and writes the reports there.
pub fn run(mut run: Run, progress: &mut dyn FnMut(Progress)) -> Result<Results> {
    eprintln!(
        "grader: grading the bundle {} into {}",
        run.bundle.display(),
        run.out.display()
    );
    let gpus = match &run.gpus {
        Some(_) if run.emulate => {
            return Err(Error::Usage(
                "--gpus spreads runs over NVIDIA GPUs, and these runs are on the CPU emulator; \
                 leave --gpus out, or grade on a GPU node"
                    .to_owned(),
            ));
        }
        Some(indices) => crate::confine::gpus::find(indices)?,
        None => vec![],
    };
    // Read once: every step below is handed this one.
    let bundle = bundle::load(run.bundle)?;
    if let Some(shard) = run.shard {
        run.students = shard::begin(
            &bundle,
            run.bundle,
            run.out,
            shard,
            run.running.resume,
            run.isolation.description(),
            run.emulate,
        )?;
        eprintln!("grader: shard {shard}: {} students", run.students.len());
        if run.students.is_empty() {
            // A class smaller than its shards: this one holds nobody.
            return Results::load(&run.out.join("results.json"));
        }
    }
    say_if_unsandboxed(&run.isolation);
    let settings = Settings {
        limits: Limits {
            timeout: run.running.timeout,
            max_output: 1 << 20,
        },
        resume: run.running.resume,
        sanitize: !run.running.no_sanitize,
        only: run.students.clone(),
        emulate: run.emulate,
        isolation: run.isolation,
        jobs: run.running.jobs.unwrap_or_else(|| default_jobs(gpus.len())),
        unbrokered: Default::default(),
    };
    let students: BTreeSet<&str> = (bundle.items.iter())
        .map(|i| i.student.as_str())
        .filter(|s| run.students.is_empty() || run.students.iter().any(|r| r == s))
        .collect();
    progress(Progress::Students(students.len()));
    let graded = |student: &str| progress(Progress::Graded(student));
    let results = grading::run(&bundle, run.bundle, run.out, &settings, &gpus, graded);
    progress(Progress::Done);
    let results = results?;
    reports::write(&results, run.out).map_err(Error::io(run.out))?;
    Ok(results)
}

/// Exercises at a time on each of `gpus` GPUs (0: the GPUs the runs see, or
/// the emulator) when `--jobs` is not given: the machine's cores, shared.
pub fn default_jobs(gpus: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / gpus.max(1)).max(1)
}
