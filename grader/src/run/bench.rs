//! One exercise's bench: every process of an exercise's grading is made
//! here, as the dispatcher (`grade::exercise`) asks. A planned run in its
//! role, in its lane, made again alone where a neighbour could have ended
//! it ([`Bench::make`]); several runs of one binary in one process
//! ([`Bench::batch`]); compute-sanitizer's tools over the kernel
//! ([`Bench::sanitize`]); the course's own kernel's timed run
//! ([`Bench::course_run`]). Like nextest's executor, it decides nothing:
//! which runs are made, in what role and how they use the GPU is the
//! dispatcher's, and what they amount to the judge's. What comes back is
//! raw.

use std::path::Path;

use kernels::catalogue::ExerciseId;
use kernels::exit_code::Exit;

use crate::build::reference::Kept;
use crate::confine::runner::{Ended, Limits, Outcome};
use crate::confine::sandbox::Isolation;
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::Tool;
use crate::record::results::Sanitized;
use crate::run::job::{self, Job, Made};
use crate::run::lane::{AFTER_A_HANG, Ending, ExerciseLane, Hangs, Lane, Use};
use crate::run::{batch, sanitizer};

/// Where one exercise's runs are made: the sandbox and limits of the
/// grading, the CPU emulator's library where the kernels run on it, the
/// GPU's lanes, and the exercise's own record of runs out of time alone.
pub struct Bench<'a> {
    pub isolation: &'a Isolation,
    pub limits: Limits,
    /// The emulator's library, where the kernels run on it.
    pub driver: Option<&'a Path>,
    pub lane: &'a Lane,
    /// Whether a run of this exercise ran out of time alone.
    pub hangs: &'a Hangs,
    /// Whether the exercise's runs keep several work queues (its verdicts
    /// read how streams overlap: `grade::dispatch::reads_overlap`).
    pub keeps_work_queues: bool,
}

impl Bench<'_> {
    /// The limits of a kernel's run of `run`: a kernel that has hung alone
    /// gets less time in its later runs (the runs above 2^31 elements keep
    /// the whole timeout).
    pub fn kernel_limits(&self, run: &plan::Run) -> Limits {
        let timeout = if self.hangs.seen() && run.memory == 0 {
            self.limits.timeout.min(AFTER_A_HANG)
        } else {
            self.limits.timeout
        };
        Limits {
            timeout,
            ..self.limits
        }
    }

    /// Makes `job` within `limits`, using the GPU as `using` says; a run
    /// that ended in a way another process on the GPU could have caused is
    /// made again alone ([`Lane::run_confirmed`]). A wrong answer is the
    /// kernel's own (contexts do not share memory) and stands.
    pub fn make(&self, job: &Job, limits: Limits, using: Use) -> Made {
        let phase = match using {
            // A long share: streams' untimed run of the student's binary.
            Use::Shared | Use::SharedLong => "runs",
            Use::Alone => "timed runs",
            Use::Gated => "gated runs",
            Use::Memory(_) => "runs above 2^31",
        };
        self.lane.run_confirmed(
            phase,
            using,
            self.hangs,
            |gate| {
                job::make(
                    job,
                    self.isolation,
                    limits,
                    self.driver,
                    gate,
                    self.keeps_work_queues,
                )
            },
            |made: &Made| ending(&made.outcome.ended),
        )
    }

    /// `jobs` (runs of one binary in one role) made in one process
    /// (`run::batch`), a short share, as each of its runs would be: each
    /// run's [`Made`] where its exit code is one `takes` takes, None where
    /// it is to be made alone. Beside others a batch takes about what one
    /// run does (1.7 s on an H200 at `--jobs 16`), and a long share waits
    /// while any timed run is in flight, which left the GPU idle once most
    /// runs were in batches (`scripts/perf/README.md`, "The student's runs
    /// in one process", 2026-11-29).
    pub fn batch(&self, jobs: &[Job], takes: impl Fn(i32) -> bool) -> Vec<Option<Made>> {
        let limits = Limits {
            timeout: self.limits.timeout.min(batch::TIMEOUT),
            ..self.limits
        };
        let phase = match jobs.first().map(|job| job.role) {
            Some(Role::StudentHost) => "the student's runs in batches",
            _ => "runs in batches",
        };
        self.lane.run_as(phase, Use::Shared, |_| {
            batch::make(
                jobs,
                takes,
                self.isolation,
                limits,
                self.driver,
                self.keeps_work_queues,
            )
        })
    }

    /// compute-sanitizer's tools over `exercise`'s kernel (`ptx`) in the
    /// course's host code (`reference`) at each of `runs`, each made once
    /// (the tools slow it down many times): the tools' records. A tool that
    /// can find nothing in the kernel's PTX ([`sanitizer::not_needed`]) is
    /// not run; where the PTX cannot be read now (it was when the kernel
    /// ran), every tool runs.
    pub fn sanitize(
        &self,
        exercise: ExerciseId,
        reference: &Path,
        ptx: &Kept,
        runs: &[&plan::Run],
    ) -> Vec<Sanitized> {
        let ptx_text = crate::build::ptx_check::read(&ptx.path).ok();
        let left_out: Vec<(Tool, &str)> = sanitizer::TOOLS
            .iter()
            .filter_map(|&tool| {
                let why = sanitizer::not_needed(tool, ptx_text.as_deref()?, exercise)?;
                Some((tool, why))
            })
            .collect();
        let tool_runs: Vec<sanitizer::ToolRun> = runs.iter().map(|run| tool_run(run)).collect();
        sanitizer::sanitize(
            self.isolation,
            ExerciseLane {
                lane: self.lane,
                hangs: self.hangs,
            },
            reference,
            &tool_runs,
            &[(kernels::KERNEL_PTX_ENV, ptx.path.as_path())],
            &left_out,
            self.limits,
        )
    }

    /// The course's binary with its own kernel at `timed`, made as the
    /// student's kernel's run was (`grade::dispatch::using`): alone while
    /// it times, with the exercise's work queues.
    pub fn course_run(&self, reference: &Path, timed: &plan::Run) -> Outcome {
        let job = Job {
            run: timed,
            role: Role::KernelInCourseHost,
            binary: reference,
            ptx: None,
            tracer: None,
        };
        let made = self
            .lane
            .run_as("the course's timed runs", Use::Gated, |gate| {
                job::make(
                    &job,
                    self.isolation,
                    self.limits,
                    None,
                    gate,
                    self.keeps_work_queues,
                )
            });
        made.outcome
    }
}

/// Whether a process beside a run on the GPU could have made it end so.
pub fn ending(ended: &Ended) -> Ending {
    match ended {
        Ended::Exited(code) if *code == Exit::CudaError.code() => Ending::Neighbours,
        Ended::Exited(_) => Ending::Own,
        Ended::TimedOut => Ending::OutOfTime,
        Ended::Signalled(_) | Ended::DidNotStart(_) => Ending::Neighbours,
    }
}

/// What the tools go over at `run`: its arguments made once, the tools'
/// cut of the run where they go over fewer of its elements, and
/// racecheck's where it goes over a few of its blocks.
fn tool_run(run: &plan::Run) -> sanitizer::ToolRun {
    // The run's command line with other parameters, made once.
    let args_with = |params| {
        made_once(
            plan::Run {
                params,
                ..run.clone()
            }
            .args(),
        )
    };
    let (args, elements) = match run.params.sanitized() {
        Some((params, elements)) => (args_with(params), Some(elements)),
        None => (made_once(run.args()), None),
    };
    sanitizer::ToolRun {
        tag: run.tag,
        args,
        elements,
        racechecked: run
            .params
            .racechecked()
            .map(|(params, blocks)| (args_with(params), blocks)),
    }
}

/// A run's arguments made once (`--runs 1`): the tools slow a run down
/// many times, and one launch shows what they look for.
fn made_once(mut args: Vec<String>) -> Vec<String> {
    if let Some(at) = args.iter().position(|a| a == "--runs") {
        if let Some(runs) = args.get_mut(at + 1) {
            *runs = "1".to_owned();
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A bench on `lane`, unsandboxed, with a timeout of `seconds`.
    fn bench<'a>(
        lane: &'a Lane,
        hangs: &'a Hangs,
        keeps_work_queues: bool,
        seconds: u64,
    ) -> Bench<'a> {
        static UNSANDBOXED: Isolation = Isolation::Unsandboxed;
        Bench {
            lane,
            hangs,
            keeps_work_queues,
            driver: None,
            isolation: &UNSANDBOXED,
            limits: Limits {
                timeout: Duration::from_secs(seconds),
                max_output: 1 << 16,
            },
        }
    }

    #[test]
    fn only_endings_a_neighbour_could_cause_are_made_again_alone() {
        let cuda = Exit::CudaError.code();
        assert_eq!(ending(&Ended::Exited(cuda)), Ending::Neighbours);
        assert_eq!(ending(&Ended::TimedOut), Ending::OutOfTime);
        assert_eq!(ending(&Ended::Signalled(9)), Ending::Neighbours);
        assert_eq!(
            ending(&Ended::DidNotStart("slots".into())),
            Ending::Neighbours
        );
        // A wrong answer, or a pass, is the kernel's own.
        assert_eq!(ending(&Ended::Exited(0)), Ending::Own);
        assert_eq!(ending(&Ended::Exited(1)), Ending::Own);
    }

    #[test]
    fn the_tools_make_each_run_once() {
        let args = |runs: &str| vec!["--n".into(), "7".into(), "--runs".into(), runs.into()];
        assert_eq!(made_once(args("5")), args("1"));
        let without: Vec<String> = vec!["--n".into(), "7".into()];
        assert_eq!(made_once(without.clone()), without);
    }

    #[test]
    #[cfg(unix)]
    fn the_course_s_timed_run_has_the_work_queues_the_exercise_s_runs_have() {
        use std::os::unix::fs::PermissionsExt;
        // A course binary that reports a passing run whose kernel time says
        // whether its contexts were given one work queue: 1 ms with the
        // variable, 2 ms without.
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("reference");
        let (name, value) = crate::confine::sandbox::ONE_WORK_QUEUE;
        std::fs::write(
            &reference,
            format!("#!/bin/sh\nms=2; [ \"${name}\" = {value} ] && ms=1\necho \"ms=$ms\"\n"),
        )
        .unwrap();
        std::fs::set_permissions(&reference, std::fs::Permissions::from_mode(0o755)).unwrap();
        let timed = &crate::plan::exercise::plan(ExerciseId::VecaddAnyN, 1)[0];
        let (lane, hangs) = (Lane::new(1, None), Hangs::default());
        for (keeps, ms) in [(false, "ms=1"), (true, "ms=2")] {
            let bench = bench(&lane, &hangs, keeps, 10);
            let outcome = bench.course_run(&reference, timed);
            assert_eq!(
                outcome.stdout.trim(),
                ms,
                "keeps_work_queues {keeps}: {:?}",
                outcome.ended
            );
        }
    }

    #[test]
    fn a_kernel_that_hung_alone_gets_less_time_but_for_its_large_runs() {
        let plan = crate::plan::exercise::plan(ExerciseId::VecaddAnyN, 1);
        let small = plan.iter().find(|r| r.memory == 0).unwrap();
        let large = plan.iter().find(|r| r.memory > 0).unwrap();
        let (lane, hangs) = (Lane::new(1, None), Hangs::default());
        let bench = bench(&lane, &hangs, false, 600);
        let whole = Duration::from_secs(600);
        assert_eq!(bench.kernel_limits(small).timeout, whole);
        // A run out of time alone: the kernel hangs by itself.
        lane.run_confirmed("hangs", Use::Alone, &hangs, |_| (), |()| Ending::OutOfTime);
        assert!(hangs.seen());
        assert_eq!(bench.kernel_limits(small).timeout, AFTER_A_HANG);
        assert_eq!(bench.kernel_limits(large).timeout, whole);
    }
}
