//! One job: a planned run made in its role, the binary started confined,
//! with the student's PTX in the course's binary (a kernel run), or
//! through the grader's broker, its record read (a run of the student's
//! binary: `run::brokered`), the CPU emulator's library in place of the
//! driver where the kernels run on it (the broker's backend, for a
//! student's binary), and the timing gate where the lane gives one
//! (`run::gate`). What comes back is raw: how it ended, what it printed,
//! the broker's record. The judge says what it amounts to.

use std::os::fd::OwnedFd;
use std::path::Path;

use crate::build::reference::{Kept, REFERENCE_DIR};
use crate::confine::runner::{self, Limits, Outcome};
use crate::confine::sandbox::{self, BrokerClient, Extras, Isolation};
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::TraceFailure;
use crate::run::brokered::{self, Broker, Brokering, Serving};
use crate::run::gate::GateEnd;

use crate::run::trace::Trace;

/// A planned run, and how it is made.
pub struct Job<'a> {
    pub run: &'a plan::Run,
    pub role: Role,
    /// The binary: the course's for a kernel run, the student's otherwise.
    pub binary: &'a Path,
    /// A kernel run's PTX (on this machine), loaded in place of the
    /// binary's own.
    pub ptx: Option<&'a Kept>,
    /// A run of the student's binary: the broker it reaches the GPU
    /// through (on this machine).
    pub broker: Option<&'a Broker>,
    /// The course's binary given the grader's canary's PTX, whose result
    /// is the one to expect of the student's host code.
    pub canary: bool,
}

impl<'a> Job<'a> {
    /// The student's kernel (`ptx`) in the course's binary (`reference`) at
    /// `run`: a kernel run.
    pub fn kernel(run: &'a plan::Run, reference: &'a Path, ptx: &'a Kept) -> Job<'a> {
        Job {
            run,
            role: Role::KernelInCourseHost,
            binary: reference,
            ptx: Some(ptx),
            broker: None,
            canary: false,
        }
    }

    /// Whether the run's kernel is the grader's canary: the course's binary
    /// given its PTX, or a student's binary whose broker loads it.
    pub fn runs_the_canary(&self) -> bool {
        self.canary || self.broker.is_some_and(|broker| broker.canary.is_some())
    }
}

/// What a job did.
pub struct Made {
    pub outcome: Outcome,
    /// The command as the bundle names it: the instructor reruns it from
    /// there.
    pub command: Vec<String>,
    /// A brokered run's record, or why there is none.
    pub trace: Option<Result<Trace, TraceFailure>>,
}

/// Makes `job`, confined as `isolation` says, within `limits`; `driver` is
/// the CPU emulator's library when the kernels run on it; `gate` the timing
/// gate the run's process is given, the course's binary's only (the time
/// it waits there is not counted against its timeout); `keeps_work_queues`
/// whether its contexts keep several work queues (`Extras`).
pub fn make(
    job: &Job,
    isolation: &Isolation,
    limits: Limits,
    driver: Option<&Path>,
    gate: Option<GateEnd>,
    keeps_work_queues: bool,
) -> Made {
    make_with(job, &[], isolation, limits, driver, gate, keeps_work_queues)
}

/// Makes `job` on the CPU emulator (`emulator`, its library) with the
/// emulator's counters asked for (`--counters`): the lesson point's run
/// (`grade::lesson`), on a GPU node too. One work queue, no gate.
pub fn make_counted(job: &Job, isolation: &Isolation, limits: Limits, emulator: &Path) -> Made {
    make_with(
        job,
        &["--counters"],
        isolation,
        limits,
        Some(emulator),
        None,
        false,
    )
}

/// [`make`], with `extra` arguments after the run's own.
fn make_with(
    job: &Job,
    extra: &[&str],
    isolation: &Isolation,
    limits: Limits,
    driver: Option<&Path>,
    gate: Option<GateEnd>,
    keeps_work_queues: bool,
) -> Made {
    let args = args(job.run);
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .chain(extra.iter().copied())
        .collect();
    let serving = Serving {
        isolation,
        driver,
        memory: job.run.memory,
        keeps_work_queues,
        timeout: limits.timeout,
        batch: false,
    };
    let Attached {
        files,
        mut descriptors,
        client,
        brokering,
    } = attached(job, &serving);
    // Never the student's binary, whose host code could say anything
    // (`grade::dispatch::using` never gives it one).
    let (gate, waited) = GateEnd::attach(gate.filter(|_| job.role == Role::KernelInCourseHost));
    descriptors.extend(gate);
    // The command, and with it the trace's write end and the gate's end,
    // is dropped once the run ends.
    let extras = Extras {
        files: &files,
        descriptors,
        // The emulator runs in the broker where there is one.
        driver: driver.filter(|_| client.is_none()),
        broker_client: client.map(|library| BrokerClient {
            library,
            emulated: driver.is_some(),
        }),
        memory: job.run.memory,
        keeps_work_queues,
        runs_the_canary: job.runs_the_canary(),
    };
    let mut outcome = runner::run_command_waiting(
        isolation.run_command_with(job.binary, &args, &[], extras),
        limits,
        &waited,
    );
    let trace = brokering.map(|b| b.and_then(Brokering::finish));
    if isolation.is_sandboxed() {
        outcome.ended = sandbox::ended_inside(outcome.ended);
    }
    Made {
        outcome,
        command: command(job),
        trace,
    }
}

/// What a job's process is given besides its arguments: the PTX it loads
/// in place of its own, or the broker's client and its end of the socket.
pub struct Attached<'a> {
    pub files: Vec<(&'static str, &'a Path)>,
    pub descriptors: Vec<(&'static str, OwnedFd)>,
    /// The broker's client, the run's `libcuda.so.1`.
    pub client: Option<&'a Path>,
    /// The broker serving the run, or why it could not start; None for a
    /// run of the course's binary.
    pub brokering: Option<Result<Brokering, TraceFailure>>,
}

/// [`Attached`] for `job`, its broker (if it has one) started as
/// `serving` says.
pub fn attached<'a>(job: &Job<'a>, serving: &Serving) -> Attached<'a> {
    let files: Vec<(&'static str, &'a Path)> = job
        .ptx
        .map(|ptx| (kernels::KERNEL_PTX_ENV, ptx.path.as_path()))
        .into_iter()
        .collect();
    let mut descriptors = Vec::new();
    let mut client = None;
    let brokering = job.broker.map(|broker| {
        brokered::start(broker, serving).map(|(brokering, attach)| {
            client = Some(attach.client);
            descriptors.push(attach.descriptor);
            brokering
        })
    });
    Attached {
        files,
        descriptors,
        client,
        brokering,
    }
}

/// A planned run's arguments, for a report in JSON.
pub fn args(run: &plan::Run) -> Vec<String> {
    let mut args = run.args();
    args.push("--json".into());
    args
}

/// `job`'s command as the bundle names it: the instructor reruns it from
/// there.
pub fn command(job: &Job) -> Vec<String> {
    let name = job.binary.file_name().unwrap_or_default().to_string_lossy();
    let mut command = vec![match job.role {
        Role::KernelInCourseHost => format!("{REFERENCE_DIR}/{name}"),
        Role::StudentHost => name.into_owned(),
    }];
    command.extend(args(job.run));
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::time::Duration;

    /// What a run in `role` (of the canary's PTX where `canary`) given a
    /// gate sees of `variable`: its value, or "none".
    fn sees(role: Role, canary: bool, variable: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("prints-a-variable");
        std::fs::write(
            &binary,
            format!("#!/bin/sh\necho \"${{{variable}:-none}}\"\n"),
        )
        .unwrap();
        std::fs::set_permissions(&binary, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let run = &crate::plan::exercise::plan(kernels::catalogue::ExerciseId::VecaddAnyN, 1)[0];
        let job = Job {
            run,
            role,
            binary: &binary,
            ptx: None,
            broker: None,
            canary,
        };
        let (_ours, theirs) = UnixStream::pair().unwrap();
        let gate = GateEnd {
            descriptor: theirs.into(),
            waited: Arc::default(),
        };
        let limits = Limits {
            timeout: Duration::from_secs(10),
            max_output: 1 << 10,
        };
        let made = make(
            &job,
            &Isolation::Unsandboxed,
            limits,
            None,
            Some(gate),
            false,
        );
        made.outcome.stdout.trim().to_owned()
    }

    fn sees_the_gate(role: Role) -> String {
        sees(role, false, "CUDA_COURSE_TIMING_GATE")
    }

    #[test]
    fn only_the_course_s_binary_is_given_the_gate() {
        assert!(
            sees_the_gate(Role::KernelInCourseHost)
                .parse::<i32>()
                .is_ok()
        );
        assert_eq!(sees_the_gate(Role::StudentHost), "none");
    }

    #[test]
    fn only_a_run_of_the_canary_is_told_so() {
        let told = |role, canary| sees(role, canary, kernels::CANARY_RUN_ENV);
        assert_eq!(told(Role::KernelInCourseHost, true), "1");
        assert_eq!(told(Role::KernelInCourseHost, false), "none");
        assert_eq!(told(Role::StudentHost, false), "none");
    }

    #[test]
    fn a_student_s_binary_runs_the_canary_where_its_broker_loads_it() {
        let run = &crate::plan::exercise::plan(kernels::catalogue::ExerciseId::VecaddAnyN, 1)[0];
        let broker = |canary| Broker {
            binary: "broker".into(),
            client: "libcuda.so.1".into(),
            canary,
        };
        let (with, without) = (
            broker(Some(crate::run::brokered::Canary {
                ptx: "canary.ptx".into(),
                entries: vec!["vecadd".into()],
            })),
            broker(None),
        );
        let job = |broker| Job {
            run,
            role: Role::StudentHost,
            binary: std::path::Path::new("student"),
            ptx: None,
            broker,
            canary: false,
        };
        assert!(job(Some(&with)).runs_the_canary());
        assert!(!job(Some(&without)).runs_the_canary());
        assert!(!job(None).runs_the_canary());
    }
}
