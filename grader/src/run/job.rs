//! One job: a planned run made in its role, the binary started confined,
//! with the student's PTX in the course's binary (a kernel run) or the
//! tracer preloaded and its pipe read (a run of the student's binary), and
//! the CPU emulator's library in place of the driver where the kernels run
//! on it, and the timing gate where the lane gives one (`run::gate`). What
//! comes back is raw: how it ended, what it printed, its trace.
//! The judge says what it amounts to.

use std::os::fd::OwnedFd;
use std::path::Path;

use crate::build::reference::{Kept, REFERENCE_DIR};
use crate::confine::runner::{self, Limits, Outcome};
use crate::confine::sandbox::{self, Extras, Isolation};
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::TraceFailure;
use crate::run::gate::GateEnd;
use crate::run::trace::Trace;
use crate::run::traced;

/// A planned run, and how it is made.
pub struct Job<'a> {
    pub run: &'a plan::Run,
    pub role: Role,
    /// The binary: the course's for a kernel run, the student's otherwise.
    pub binary: &'a Path,
    /// A kernel run's PTX (on this machine), loaded in place of the
    /// binary's own.
    pub ptx: Option<&'a Kept>,
    /// A run of the student's binary: the tracer (on this machine).
    pub tracer: Option<&'a Path>,
}

/// What a job did.
pub struct Made {
    pub outcome: Outcome,
    /// The command as the bundle names it: the instructor reruns it from
    /// there.
    pub command: Vec<String>,
    /// A traced run's trace, or why there is none.
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
    let args = args(job.run);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Attached {
        files,
        mut descriptors,
        tracing,
    } = attached(job);
    // Never the student's binary, whose host code could say anything
    // (`grade::dispatch::using` never gives it one).
    let (gate, waited) = GateEnd::attach(gate.filter(|_| job.role == Role::KernelInCourseHost));
    descriptors.extend(gate);
    // The command, and with it the trace's write end and the gate's end,
    // is dropped once the run ends.
    let extras = Extras {
        files: &files,
        descriptors,
        driver,
        memory: job.run.memory,
        keeps_work_queues,
    };
    let mut outcome = runner::run_command_waiting(
        isolation.run_command_with(job.binary, &args, &[], extras),
        limits,
        &waited,
    );
    let trace = tracing.map(|t| t.and_then(traced::Tracing::finish));
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
/// in place of its own, or the tracer and its pipe's write end.
pub struct Attached<'a> {
    pub files: Vec<(&'static str, &'a Path)>,
    pub descriptors: Vec<(&'static str, OwnedFd)>,
    /// The trace being read, or why it cannot be; None untraced.
    pub tracing: Option<Result<traced::Tracing, TraceFailure>>,
}

/// [`Attached`] for `job`.
pub fn attached<'a>(job: &Job<'a>) -> Attached<'a> {
    let mut files: Vec<(&'static str, &'a Path)> = job
        .ptx
        .map(|ptx| (kernels::KERNEL_PTX_ENV, ptx.path.as_path()))
        .into_iter()
        .collect();
    let mut descriptors = Vec::new();
    let tracing = job.tracer.map(|library| {
        traced::start(library).map(|(tracing, attach)| {
            files.extend(attach.files);
            descriptors.push(attach.descriptor);
            tracing
        })
    });
    Attached {
        files,
        descriptors,
        tracing,
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

    /// What a run in `role` given a gate sees of it: the variable, or "none".
    fn sees_the_gate(role: Role) -> String {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("prints-the-gate");
        std::fs::write(
            &binary,
            "#!/bin/sh\necho \"${CUDA_COURSE_TIMING_GATE:-none}\"\n",
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
            tracer: None,
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

    #[test]
    fn only_the_course_s_binary_is_given_the_gate() {
        assert!(
            sees_the_gate(Role::KernelInCourseHost)
                .parse::<i32>()
                .is_ok()
        );
        assert_eq!(sees_the_gate(Role::StudentHost), "none");
    }
}
