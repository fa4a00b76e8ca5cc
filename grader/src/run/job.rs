//! One job: a planned run made in its role, the binary started confined,
//! with the student's PTX in the course's binary (a kernel run) or the
//! tracer preloaded and its pipe read (a run of the student's binary), and
//! the CPU emulator's library in place of the driver where the kernels run
//! on it. What comes back is raw: how it ended, what it printed, its trace.
//! The judge says what it amounts to.

use std::path::Path;

use crate::build::reference::{Kept, REFERENCE_DIR};
use crate::confine::runner::{self, Limits, Outcome};
use crate::confine::sandbox::{self, Extras, Isolation};
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::TraceFailure;
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
/// the CPU emulator's library when the kernels run on it.
pub fn make(job: &Job, isolation: &Isolation, limits: Limits, driver: Option<&Path>) -> Made {
    let mut args = job.run.args();
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let tracing = job.tracer.map(traced::start);
    let mut files: Vec<(&str, &Path)> = job
        .ptx
        .map(|ptx| (kernels::KERNEL_PTX_ENV, ptx.path.as_path()))
        .into_iter()
        .collect();
    let mut descriptor = None;
    let tracing = match tracing {
        Some(Ok((tracing, attach))) => {
            files.extend(attach.files);
            descriptor = Some(attach.descriptor);
            Some(Ok(tracing))
        }
        Some(Err(why)) => Some(Err(why)),
        None => None,
    };
    // The command, and with it the trace's write end, is dropped once the
    // run ends.
    let extras = Extras {
        files: &files,
        descriptor,
        driver,
        memory: job.run.memory,
    };
    let mut outcome = runner::run_command(
        isolation.run_command_with(job.binary, &args, &[], extras),
        limits,
    );
    let trace = tracing.map(|t| t.and_then(traced::Tracing::finish));
    if isolation.is_sandboxed() {
        outcome.ended = sandbox::ended_inside(outcome.ended);
    }
    let name = job.binary.file_name().unwrap_or_default().to_string_lossy();
    let mut command = vec![match job.role {
        Role::KernelInCourseHost => format!("{REFERENCE_DIR}/{name}"),
        Role::StudentHost => name.into_owned(),
    }];
    command.extend(args.iter().map(|a| a.to_string()));
    Made {
        outcome,
        command,
        trace,
    }
}
