//! Several of an exercise's runs of one binary, made in one process
//! (`kernels::batch`, where the wire format and the threat model are): one
//! CUDA context for all of them, where a process of its own for each made
//! the driver build and tear down one per run, one at a time across the
//! machine. The course's binary with the student's kernel, or with the
//! grader's canary; or the student's own binary through one broker, its
//! record cut at each run's mark. A student's kernel's run is taken from the batch only
//! where it passed with nothing on stderr, the canary's (the grader's own
//! kernel) where it reported, a student's binary's where it passed and its
//! share of the trace then shows the work (`grade::batches`); every other
//! run is made in a process of its own afterwards, exactly as without
//! batches, so every verdict but a pass comes from a process of its own,
//! and a pass is the same in both.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kernels::batch::{self, Frame};

use crate::build::canary::os_random;
use crate::confine::runner::{self, Ended, Limits, Outcome};
use crate::confine::sandbox::{self, BrokerClient, Extras, Isolation};
use crate::plan::runs::Role;
use crate::run::brokered::Serving;
use crate::run::job::{self, Job, Made};
use crate::run::trace::Trace;

/// A batch's timeout, where the grading's is longer: an exercise's runs
/// that share the GPU take about 2 s each beside others (on an H200 at
/// `--jobs 16`), so a batch past this holds a kernel that hangs, and its
/// runs are made in processes of their own, each within the grading's
/// timeout; a batch that merely ran long costs its runs a second making,
/// never a verdict.
pub const TIMEOUT: Duration = Duration::from_secs(40);

/// Makes `jobs` (runs of one binary in one role: the course's binary with
/// one PTX, or a student's own binary through the broker) in one process
/// within `limits`: each a run's [`Made`] where its frame ended with an
/// exit code `takes` takes and wrote nothing to stderr (the CPU emulator's
/// findings go there) and, brokered, where its share of the record was
/// marked; None where it is to be made alone. A student's run taken here
/// is the grader's only once it is judged a pass (`grade::runs`).
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
    if !jobs.iter().all(|j| batchable(j, first)) {
        return none();
    }
    let runs: Vec<Vec<String>> = jobs.iter().map(|j| job::args(j.run)).collect();
    let Some(file) = BatchFile::write(&runs) else {
        return none();
    };
    let serving = Serving {
        isolation,
        driver,
        memory: 0,
        keeps_work_queues,
        timeout: limits.timeout,
        batch: true,
    };
    let job::Attached {
        mut files,
        descriptors,
        client,
        brokering,
    } = job::attached(first, &serving);
    let brokering = match brokering {
        Some(Ok(brokering)) => Some(brokering),
        Some(Err(_)) => return none(),
        None => None,
    };
    files.push((batch::VARIABLE, file.path.as_path()));
    let extras = Extras {
        files: &files,
        descriptors,
        driver: driver.filter(|_| client.is_none()),
        broker_client: client.map(|library| BrokerClient {
            library,
            emulated: driver.is_some(),
        }),
        memory: 0,
        keeps_work_queues,
        runs_the_canary: first.runs_the_canary(),
    };
    // The command, and with it the student's end of the broker's socket,
    // is dropped once the process ends.
    let outcome = runner::run_command(
        isolation.run_command_with(first.binary, &[], &[], extras),
        limits,
    );
    let frames = batch::read(&file.nonce, jobs.len(), &outcome.stdout, &outcome.stderr);
    let traces = match brokering.map(|b| b.finish_batch(&file.nonce)) {
        Some(Ok(traces)) => traces,
        // A trace that cannot be read gives no run.
        Some(Err(_)) => return none(),
        None => vec![],
    };
    drop(file);
    let mut frames = frames.into_iter();
    let mut traces = traces.into_iter();
    jobs.iter()
        .map(|job| {
            let frame = frames.next();
            // A brokered run without its share of the record is made alone.
            let trace = match job.broker {
                Some(_) => Some(traces.next()?),
                None => None,
            };
            frame
                .filter(|f| takes(f.exit))
                .filter(|f| f.stderr.trim().is_empty())
                .map(|frame| made(job, frame, trace, isolation))
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

/// Whether `job` is made as `first` is: the same binary in the same role,
/// the course's with the same PTX and no broker, a student's through the
/// same broker and no PTX.
fn batchable(job: &Job, first: &Job) -> bool {
    let same_ptx = job.ptx.map(|p| &p.path) == first.ptx.map(|p| &p.path);
    job.role == first.role
        && job.binary == first.binary
        && same_ptx
        && job.canary == first.canary
        && job.broker == first.broker
        && match job.role {
            Role::KernelInCourseHost => job.ptx.is_some() && job.broker.is_none(),
            Role::StudentHost => job.ptx.is_none() && job.broker.is_some(),
        }
}

/// What a process of its own would have given for `job`, from its frame.
fn made(job: &Job, frame: Frame, trace: Option<Trace>, isolation: &Isolation) -> Made {
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
        trace: trace.map(Ok),
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
                broker: None,
                canary: false,
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
    fn the_student_s_binary_is_given_a_batch_only_through_the_broker() {
        // Without the broker's record its runs' calls could not be told
        // apart; the grader does not start it.
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

    /// A stand-in for a student's binary through a broker that records
    /// what it is sent: for each of the batch file's runs it sends records
    /// of launches, its mark (`marks` says which index, if any), and
    /// prints its frame (passed, nothing on stderr).
    fn brokered_batch(marks: &[Option<usize>]) -> Vec<Option<Made>> {
        brokered_batch_in(&Isolation::Unsandboxed, "", marks)
    }

    /// [`brokered_batch`] in `isolation`, running `first` before anything.
    fn brokered_batch_in(
        isolation: &Isolation,
        first: &str,
        marks: &[Option<usize>],
    ) -> Vec<Option<Made>> {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("student-binary");
        let mut script = format!(
            "#!/bin/bash
{first}
nonce=$(head -n 1 \"${var}\")
t=\"$CUDA_COURSE_BROKER_FD\"\n",
            var = batch::VARIABLE,
        );
        for (index, mark) in marks.iter().enumerate() {
            // Run k launches k + 1 times.
            for launch in 0..=index {
                script += &format!(
                    "printf '{seq} 42 cuLaunchKernel 0 kernel=vecadd\\n' >&\"$t\"\n",
                    seq = 10 * index + launch
                );
            }
            if let Some(mark) = mark {
                script += &format!("printf '# batch %s {mark}\\n' \"$nonce\" >&\"$t\"\n");
            }
            script += &format!(
                "printf '\\n%s {index} 0 1500 {{\"r\":{index}}}\\n' \"$nonce\"; \
                 printf '\\n%s {index}\\n' \"$nonce\" >&2\n"
            );
        }
        std::fs::write(&binary, script).unwrap();
        std::fs::set_permissions(&binary, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        // A broker that records what its client sends, as sent.
        let broker = crate::run::brokered::Broker {
            binary: dir.path().join("broker"),
            client: dir.path().join("libcuda.so.1"),
            canary: None,
        };
        std::fs::write(
            &broker.binary,
            "#!/bin/bash\ncat <&\"$CUDA_COURSE_BROKER_SERVE_FD\" >&\"$CUDA_COURSE_BROKER_RECORD_FD\"\n",
        )
        .unwrap();
        std::fs::set_permissions(
            &broker.binary,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(&broker.client, "").unwrap();
        let plan = crate::plan::exercise::plan(kernels::catalogue::ExerciseId::VecaddAnyN, 1);
        let jobs: Vec<Job> = plan[..marks.len()]
            .iter()
            .map(|run| Job {
                run,
                role: Role::StudentHost,
                binary: &binary,
                ptx: None,
                broker: Some(&broker),
                canary: false,
            })
            .collect();
        let limits = Limits {
            timeout: Duration::from_secs(10),
            max_output: 1 << 16,
        };
        make(&jobs, |code| code == 0, isolation, limits, None, false)
    }

    /// Each run's launches as its trace shows them, or None.
    fn launches(made: &[Option<Made>]) -> Vec<Option<usize>> {
        made.iter()
            .map(|m| {
                let trace = m.as_ref()?.trace.as_ref()?.as_ref().ok()?;
                Some(trace.calls.iter().filter(|c| c.is_launch()).count())
            })
            .collect()
    }

    #[test]
    fn a_brokered_batch_s_runs_are_each_judged_by_their_own_calls() {
        let made = brokered_batch(&[Some(0), Some(1), Some(2)]);
        assert_eq!(
            reports(&made),
            [Some("{\"r\":0}"), Some("{\"r\":1}"), Some("{\"r\":2}")]
        );
        assert_eq!(launches(&made), [Some(1), Some(2), Some(3)]);
        // A run without its mark, and every later one, is made alone: its
        // calls cannot be told from the next run's.
        let unmarked = brokered_batch(&[Some(0), None, Some(2)]);
        assert_eq!(launches(&unmarked), [Some(1), None, None]);
        assert_eq!(reports(&unmarked)[1..], [None, None]);
        // Marks out of order end the cut there.
        let swapped = brokered_batch(&[Some(1), Some(0), Some(2)]);
        assert_eq!(launches(&swapped), [None, None, None]);
    }

    #[test]
    fn a_student_s_batch_changes_nothing_the_grader_reads_and_leaves_nothing_behind() {
        // A hostile student's binary given a batch: it rewrites its batch
        // file (another nonce, another run: had it worked, it says so on
        // stdout, and no frame is then read) and leaves a child in a
        // session of its own. Its runs are as an honest batch's.
        let isolation = Isolation::choose(false).expect("bubblewrap is installed");
        let attack = format!(
            "{{ printf 'ffff\\n--n\\n1\\n' > \"${var}\"; }} 2>/dev/null && echo rewrote-the-batch\n\
             setsid sleep 61.25 >/dev/null 2>&1 &",
            var = batch::VARIABLE,
        );
        let made = brokered_batch_in(&isolation, &attack, &[Some(0), Some(1)]);
        assert_eq!(reports(&made), [Some("{\"r\":0}"), Some("{\"r\":1}")]);
        assert_eq!(launches(&made), [Some(1), Some(2)]);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            crate::confine::sandbox::processes_with("61.25"),
            0,
            "the batch's setsid child outlived it"
        );
    }

    #[test]
    fn a_line_that_is_no_frame_leaves_every_run_to_a_process_of_its_own() {
        let printed = made_by("echo 'a kernel printf'", |_| true);
        assert_eq!(reports(&printed), [None, None, None]);
    }
}
