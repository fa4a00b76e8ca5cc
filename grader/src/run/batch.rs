//! Several of an exercise's runs of the course's binary, made in one
//! process (`kernels::batch`, where the wire format and the threat model
//! are): one CUDA context for all of them, where a process of its own for
//! each made the driver build and tear down one per run, one at a time
//! across the machine. A student's kernel's run is taken from the batch
//! only where it passed with nothing on stderr, the canary's (the grader's
//! own kernel) where it reported; every other run is made in a process of
//! its own afterwards, exactly as without batches, so every verdict but a
//! pass comes from a process of its own, and a pass is the same in both.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kernels::batch::{self, Frame};

use crate::build::canary::os_random;
use crate::confine::runner::{self, Ended, Limits, Outcome};
use crate::confine::sandbox::{self, Extras, Isolation};
use crate::plan::runs::Role;
use crate::run::job::{self, Job, Made};

/// A batch's timeout, where the grading's is longer: an exercise's runs
/// that share the GPU take about 2 s each beside others (on an H200 at
/// `--jobs 16`), so a batch past this holds a kernel that hangs, and its
/// runs are made in processes of their own, each within the grading's
/// timeout; a batch that merely ran long costs its runs a second making,
/// never a verdict.
pub const TIMEOUT: Duration = Duration::from_secs(40);

/// Makes `jobs` (runs of one binary with one PTX, the course's binary's:
/// never the student's, whose host code could write any frame) in one
/// process within `limits`: each a run's [`Made`] where its frame ended
/// with an exit code `takes` takes and wrote nothing to stderr (the CPU
/// emulator's findings go there), None where it is to be made alone.
/// `driver` and `keeps_work_queues` as for [`job::make`].
pub fn make(
    jobs: &[Job],
    takes: impl Fn(i32) -> bool,
    isolation: &Isolation,
    limits: Limits,
    driver: Option<&Path>,
    keeps_work_queues: bool,
) -> Vec<Option<Made>> {
    let none = || jobs.iter().map(|_| None).collect();
    let Some(first) = jobs.first() else {
        return vec![];
    };
    let ptx = match first.ptx {
        Some(ptx) if jobs.iter().all(|j| same_binary_and_ptx(j, first)) => ptx,
        _ => return none(),
    };
    let runs: Vec<Vec<String>> = jobs.iter().map(|j| job::args(j.run)).collect();
    let Some(file) = BatchFile::write(&runs) else {
        return none();
    };
    let files = [
        (kernels::KERNEL_PTX_ENV, ptx.path.as_path()),
        (batch::VARIABLE, file.path.as_path()),
    ];
    let extras = Extras {
        files: &files,
        descriptors: vec![],
        driver,
        memory: 0,
        keeps_work_queues,
    };
    let outcome = runner::run_command(
        isolation.run_command_with(first.binary, &[], &[], extras),
        limits,
    );
    let frames = batch::read(&file.nonce, jobs.len(), &outcome.stdout, &outcome.stderr);
    drop(file);
    let mut frames = frames.into_iter();
    jobs.iter()
        .map(|job| {
            frames
                .next()
                .filter(|f| takes(f.exit))
                .filter(|f| f.stderr.trim().is_empty())
                .map(|frame| made(job, frame, isolation))
        })
        .collect()
}

/// A batch file (`kernels::batch::file`) in the temporary folder, under a
/// nonce of its own drawn from the OS; removed when dropped.
pub struct BatchFile {
    pub nonce: String,
    pub path: PathBuf,
}

impl BatchFile {
    /// The file for `runs` (each its arguments), or None where no nonce
    /// could be drawn or no file written.
    pub fn write(runs: &[Vec<String>]) -> Option<BatchFile> {
        let mut random = [0u8; 16];
        os_random(&mut random).ok()?;
        let nonce: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let path = std::env::temp_dir().join(format!("cuda-course-batch-{nonce}"));
        std::fs::write(&path, batch::file(&nonce, runs)).ok()?;
        Some(BatchFile { nonce, path })
    }
}

impl Drop for BatchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether `job` is a run of the course's binary (never the student's,
/// whose host code could write any frame) with `first`'s binary and PTX.
fn same_binary_and_ptx(job: &Job, first: &Job) -> bool {
    job.role == Role::KernelInCourseHost
        && job.binary == first.binary
        && job.tracer.is_none()
        && job.ptx.map(|p| &p.path) == first.ptx.map(|p| &p.path)
}

/// What a process of its own would have given for `job`, from its frame.
fn made(job: &Job, frame: Frame, isolation: &Isolation) -> Made {
    let mut ended = Ended::Exited(frame.exit);
    if isolation.is_sandboxed() {
        ended = sandbox::ended_inside(ended);
    }
    Made {
        outcome: Outcome {
            ended,
            stdout: frame.report,
            stderr: frame.stderr,
            flooded: false,
            duration: frame.took,
            peak_memory: None,
            out_of_memory: None,
        },
        command: job::command(job),
        trace: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::reference::Kept;

    /// A stand-in for the course's binary, made as `role`: it answers the
    /// batch file's three runs with the frames below (passed; failed the
    /// check; passed with a line on stderr), then runs `extra`.
    fn made_as(role: Role, extra: &str, takes: impl Fn(i32) -> bool) -> Vec<Option<Made>> {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("course-binary");
        let script = format!(
            "#!/bin/sh\n\
             nonce=$(head -n 1 \"${var}\")\n\
             printf '\\n%s 0 0 1500 {{\"r\":0}}\\n' \"$nonce\"; printf '\\n%s 0\\n' \"$nonce\" >&2\n\
             printf '\\n%s 1 1 1500 {{\"r\":1}}\\n' \"$nonce\"; printf '\\n%s 1\\n' \"$nonce\" >&2\n\
             printf '\\n%s 2 0 1500 {{\"r\":2}}\\n' \"$nonce\"; printf 'finding\\n%s 2\\n' \"$nonce\" >&2\n\
             {extra}\n",
            var = batch::VARIABLE,
        );
        std::fs::write(&binary, script).unwrap();
        std::fs::set_permissions(&binary, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let ptx = Kept {
            path: binary.clone(),
            digest: String::new(),
        };
        let plan = crate::plan::exercise::plan(kernels::catalogue::ExerciseId::VecaddAnyN, 1);
        let jobs: Vec<Job> = plan[..3]
            .iter()
            .map(|run| Job {
                run,
                role,
                binary: &binary,
                ptx: Some(&ptx),
                tracer: None,
            })
            .collect();
        let limits = Limits {
            timeout: Duration::from_secs(10),
            max_output: 1 << 16,
        };
        make(&jobs, takes, &Isolation::Unsandboxed, limits, None, false)
    }

    fn made_by(extra: &str, takes: impl Fn(i32) -> bool) -> Vec<Option<Made>> {
        made_as(Role::KernelInCourseHost, extra, takes)
    }

    fn reports(made: &[Option<Made>]) -> Vec<Option<&str>> {
        made.iter()
            .map(|m| m.as_ref().map(|m| m.outcome.stdout.trim()))
            .collect()
    }

    #[test]
    fn a_run_is_taken_only_with_an_exit_code_taken_and_nothing_on_stderr() {
        let passed = made_by("", |code| code == 0);
        assert_eq!(reports(&passed), [Some("{\"r\":0}"), None, None]);
        let first = passed[0].as_ref().unwrap();
        assert_eq!(first.outcome.ended, Ended::Exited(0));
        assert_eq!(first.outcome.duration, Duration::from_micros(1500));
        // The command the instructor reruns is the run's own.
        assert!(
            first.command.iter().any(|a| a == "--json"),
            "{:?}",
            first.command
        );
        let reported = made_by("", |code| code == 0 || code == 1);
        assert_eq!(
            reports(&reported),
            [Some("{\"r\":0}"), Some("{\"r\":1}"), None]
        );
    }

    #[test]
    fn the_student_s_binary_is_never_given_a_batch() {
        // Its host code could write any frame; the grader does not start it.
        let marker = tempfile::tempdir().unwrap();
        let started = marker.path().join("started");
        let touch = format!("touch '{}'", started.display());
        let made = made_as(Role::StudentHost, &touch, |_| true);
        assert_eq!(reports(&made), [None, None, None]);
        assert!(!started.exists());
        // The same stand-in as the course's binary is started.
        made_as(Role::KernelInCourseHost, &touch, |_| true);
        assert!(started.exists());
    }

    #[test]
    fn a_line_that_is_no_frame_leaves_every_run_to_a_process_of_its_own() {
        let printed = made_by("echo 'a kernel printf'", |_| true);
        assert_eq!(reports(&printed), [None, None, None]);
    }
}
