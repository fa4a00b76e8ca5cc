//! A run of a student's own binary through the grader's GPU broker
//! (`broker/`): the broker is started first, confined as the course's own
//! binaries are and with the GPU (or the CPU emulator's library), holding
//! one end of a socket pair; the student's binary gets the other end,
//! named by `kernels::broker_wire::FD_VARIABLE`, the broker's client as its
//! `libcuda.so.1`, and no GPU device. What the broker did for it comes
//! back as its record, on a pipe the grader reads (`run::trace`), once the
//! program ended and the broker with it. What the record must show is
//! `judge::evidence`'s.
//!
//! Threat model. Every record line is the broker's: the call it was asked
//! for, the result the driver gave it and, for copies, launches and
//! events, GPU times from its own events. The student's process can send
//! any request in any order or none (each is checked against what it
//! holds, and a flood is bounded by the broker's caps), compute anything
//! on the CPU, write anything to any descriptor it has (none of them is
//! the record's pipe, which only the broker holds), open no device node
//! (the sandbox has none) and load any library it can write (none reaches
//! the GPU without the socket). In the canary's runs the broker loads the
//! grader's canary in place of any module that defines one of the
//! exercise's kernel entries, so the program never holds the canary's
//! PTX and cannot compute its mark (`build::canary`). What it still
//! controls: the batch marks (its own runs' boundaries), the pid in its
//! hello, and its report, which the judge checks against the canary's
//! result and the record, never believes.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use kernels::trace_record::split_batch;

use crate::confine::runner::{self, Ended, Limits, Outcome};
use crate::confine::sandbox::{Extras, GPU_RUN_MEMORY, Isolation};
use crate::record::outcome::TraceFailure;
use crate::run::trace::{Collected, MAX_TRACE_BYTES, MAX_TRACE_RECORDS, Pipe, Reading, Trace};

/// The variables by which the broker is told its socket, its record's
/// pipe and the canary's PTX (`broker::cli`, where clap reads them).
const SERVE_FD_VARIABLE: &str = "CUDA_COURSE_BROKER_SERVE_FD";
const RECORD_FD_VARIABLE: &str = "CUDA_COURSE_BROKER_RECORD_FD";
const CANARY_VARIABLE: &str = "CUDA_COURSE_BROKER_CANARY";

/// How long the broker may take past the program's end: to resolve its
/// last GPU times and write a record of a few MiB.
const GRACE: Duration = Duration::from_secs(10);

/// What a brokered run needs, on this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Broker {
    /// `cuda-course-broker`.
    pub binary: PathBuf,
    /// The broker's client `libcuda.so.1`.
    pub client: PathBuf,
    /// The canary the broker loads in place of the exercise's kernels.
    pub canary: Option<Canary>,
}

/// The grader's canary PTX, and the kernel entries it stands in for.
#[derive(Debug, Clone, PartialEq)]
pub struct Canary {
    pub ptx: PathBuf,
    pub entries: Vec<String>,
}

/// The broker serving one run, and its record being read.
pub struct Brokering {
    serving: JoinHandle<Outcome>,
    reading: Reading,
}

/// What the student's run needs: the client as its driver, and its end
/// of the socket under `kernels::broker_wire::FD_VARIABLE`.
pub struct Attach<'a> {
    pub client: &'a Path,
    pub descriptor: (&'static str, OwnedFd),
}

/// How the broker is started for a run.
pub struct Serving<'a> {
    pub isolation: &'a Isolation,
    /// The CPU emulator's library as its backend; None for the GPU's.
    pub driver: Option<&'a Path>,
    /// Bytes the run holds beyond an ordinary run's (its plan's).
    pub memory: u64,
    pub keeps_work_queues: bool,
    /// The run's own timeout: the broker gets 10 s more, to write its record.
    pub timeout: Duration,
    /// A batch of runs in one process: frees are kept until the session
    /// ends, so no run is handed memory an earlier one wrote.
    pub batch: bool,
}

/// The most device memory a student's run may hold through the broker:
/// its plan's data with the headroom every GPU run has. Past it the
/// broker answers `CUDA_ERROR_OUT_OF_MEMORY`, so a program that holds all
/// it can takes no more than an honest run's room from its neighbours.
pub fn memory_cap(memory: u64) -> u64 {
    GPU_RUN_MEMORY + memory
}

/// Starts the broker for one run of a student's binary.
pub fn start<'a>(
    broker: &'a Broker,
    serving: &Serving,
) -> Result<(Brokering, Attach<'a>), TraceFailure> {
    let failed = |err: std::io::Error| TraceFailure::Pipe {
        error: err.to_string(),
    };
    let (ours, theirs) = UnixStream::pair().map_err(failed)?;
    let (reading, record) = Pipe::new().map_err(failed)?.split();
    let mut args = vec![
        "--memory-cap".to_owned(),
        memory_cap(serving.memory).to_string(),
    ];
    if serving.batch {
        args.push("--keep-frees".into());
    }
    let mut files: Vec<(&str, &Path)> = Vec::new();
    if let Some(canary) = &broker.canary {
        args.extend(["--entries".to_owned(), canary.entries.join(",")]);
        files.push((CANARY_VARIABLE, &canary.ptx));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let command = serving.isolation.run_command_with(
        &broker.binary,
        &args,
        &[],
        Extras {
            files: &files,
            descriptors: vec![
                (SERVE_FD_VARIABLE, OwnedFd::from(ours)),
                (RECORD_FD_VARIABLE, record),
            ],
            driver: serving.driver,
            broker_client: None,
            memory: serving.memory,
            keeps_work_queues: serving.keeps_work_queues,
            runs_the_canary: false,
        },
    );
    let limits = Limits {
        timeout: serving.timeout + GRACE,
        max_output: 64 << 10,
    };
    let serving = std::thread::spawn(move || runner::run_command(command, limits));
    Ok((
        Brokering { serving, reading },
        Attach {
            client: &broker.client,
            descriptor: (kernels::broker_wire::FD_VARIABLE, OwnedFd::from(theirs)),
        },
    ))
}

impl Brokering {
    /// The record, once the run's command (which held the student's end of
    /// the socket) is dropped: the broker then ends its session.
    pub fn finish(self) -> Result<Trace, TraceFailure> {
        let (text, truncated) = self.ended()?;
        let trace = Trace::parse_first(&text)?;
        whole(truncated)?;
        Ok(trace)
    }

    /// The records of a batch's runs under `nonce` (`kernels::batch`),
    /// each run's calls up to its mark, in order: one for each run marked.
    pub fn finish_batch(self, nonce: &str) -> Result<Vec<Trace>, TraceFailure> {
        let (text, truncated) = self.ended()?;
        let traces = match Trace::first_pid(&text)? {
            Some(pid) => split_batch(&text, nonce)
                .into_iter()
                .map(|run| Trace::parse(run, pid))
                .collect::<Result<_, _>>()?,
            None => vec![],
        };
        whole(truncated)?;
        Ok(traces)
    }

    /// The record's text and whether it was cut, once the broker ended
    /// well.
    fn ended(self) -> Result<(String, bool), TraceFailure> {
        let outcome = self.serving.join().map_err(|_| TraceFailure::Broker {
            why: "the thread that waited on it panicked".into(),
        })?;
        if outcome.ended != Ended::Exited(0) {
            let said = outcome.stderr.lines().last().unwrap_or("").trim();
            return Err(TraceFailure::Broker {
                why: format!("{:?}: {said}", outcome.ended),
            });
        }
        let Collected { text, truncated } = self.reading.finish(GRACE)?;
        Ok((text, truncated))
    }
}

/// A record that was cut is refused: the end is gone, and a copy back
/// after the last launch may be too.
fn whole(truncated: bool) -> Result<(), TraceFailure> {
    if truncated {
        return Err(TraceFailure::Truncated {
            mib: MAX_TRACE_BYTES >> 20,
            records: MAX_TRACE_RECORDS,
        });
    }
    Ok(())
}
