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
use std::time::Duration;

use kernels::catalogue::ExerciseId;
use kernels::exit_code::Exit;

use crate::build::reference::Kept;
use crate::confine::runner::{Ended, Limits, Outcome};
use crate::confine::sandbox::Isolation;
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::Tool;
use crate::record::results::Sanitized;
use crate::run::budget::{self, Budget};
use crate::run::job::{self, Job, Made};
use crate::run::lane::{Ending, ExerciseLane, Lane, Use};
use crate::run::{batch, sanitizer};

/// Where one exercise's runs are made: the sandbox and limits of the
/// grading, the CPU emulator's library where the kernels run on it, the
/// GPU's lanes, and the exercise's own budget of remakes alone.
pub struct Bench<'a> {
    pub isolation: &'a Isolation,
    pub limits: Limits,
    /// The emulator's library, where the kernels run on it.
    pub driver: Option<&'a Path>,
    pub lane: &'a Lane,
    /// What the exercise's runs may still take of the GPU alone, and
    /// whether one has held it without passing (`run::budget`).
    pub budget: &'a Budget,
    /// Whether the exercise's runs keep several work queues (its verdicts
    /// read how streams overlap: `grade::dispatch::reads_overlap`).
    pub keeps_work_queues: bool,
}

impl Bench<'_> {
    /// The limits of a run of `run`, in either role: once a run of the
    /// exercise has held the GPU without passing, [`budget::AFTER_HOLDING`]
    /// at most (the runs above 2^31 elements keep the whole timeout).
    pub fn limits(&self, run: &plan::Run) -> Limits {
        Limits {
            timeout: self.budget.timeout(self.limits.timeout, run.memory > 0),
            ..self.limits
        }
    }

    /// Makes `job` within `limits`, using the GPU as `using` says; a run
    /// that ended in a way another process on the GPU could have caused is
    /// made again alone, within the exercise's budget
    /// ([`Lane::run_confirmed`]). A wrong answer is the kernel's own
    /// (contexts do not share memory) and stands.
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
            self.budget,
            (limits.timeout, job.run.memory > 0),
            |gate, timeout| {
                job::make(
                    job,
                    self.isolation,
                    Limits { timeout, ..limits },
                    self.driver,
                    gate,
                    self.keeps_work_queues,
                )
            },
            |made: &Made| budget::Ended {
                ending: ending(&made.outcome.ended),
                failed_after: (made.outcome.ended != Ended::Exited(0))
                    .then_some(made.outcome.duration),
            },
        )
    }

    /// `jobs` (runs of one binary in one role) made in one process
    /// (`run::batch`), a short share, as each of its runs would be: each
    /// run's [`Made`] where its exit code is one `takes` takes, None where
    /// it is to be made alone. Beside others a batch takes about what one
    /// run does (1.7 s on an H200 at `--jobs 16`), and a long share waits
    /// while any timed run is in flight, which left the GPU idle once most
    /// runs were in batches (`bench/runs/2026-11-29-h200-student-batches`, "The student's runs
    /// in one process", 2026-11-29).
    ///
    /// A batch is counted in the exercise's budget as a run: one that left
    /// a run to be made alone after [`budget::AFTER_HOLDING`] or more held
    /// its share without passing, and the exercise's later runs get that
    /// long (a host that sleeps just under the timeout and exits 3 holds
    /// one batch, not a batch and then each run for the whole timeout).
    pub fn batch(&self, jobs: &[Job], takes: impl Fn(i32) -> bool) -> Vec<Option<Made>> {
        let limits = Limits {
            timeout: (self.budget).timeout(self.limits.timeout.min(batch::TIMEOUT), false),
            ..self.limits
        };
        let phase = match jobs.first().map(|job| job.role) {
            Some(Role::StudentHost) => "the student's runs in batches",
            _ => "runs in batches",
        };
        let (made, took) = self.lane.run_as(phase, Use::Shared, |_| {
            let started = std::time::Instant::now();
            let made = batch::make(
                jobs,
                takes,
                self.isolation,
                limits,
                self.driver,
                self.keeps_work_queues,
            );
            (made, started.elapsed())
        });
        let all_taken = made.iter().all(Option::is_some);
        let ended = budget::Ended {
            ending: Ending::Own,
            failed_after: (!all_taken).then_some(took),
        };
        self.budget.count(ended, false);
        made
    }

    /// compute-sanitizer's tools over `exercise`'s kernel (`ptx`) in the
    /// course's host code (`reference`) at each of `runs`, each made once
    /// (the tools slow it down many times), with how long the kernel's
    /// plain run of it took, which the tools' limits follow: the tools'
    /// records. A tool that
    /// can find nothing in the kernel's PTX ([`sanitizer::not_needed`]) is
    /// not run; where the PTX cannot be read now (it was when the kernel
    /// ran), every tool runs.
    pub fn sanitize(
        &self,
        exercise: ExerciseId,
        reference: &Path,
        ptx: &Kept,
        runs: &[(&plan::Run, Option<Duration>)],
    ) -> Vec<Sanitized> {
        let ptx_text = crate::build::ptx_check::read(&ptx.path).ok();
        let left_out: Vec<(Tool, &str)> = sanitizer::TOOLS
            .iter()
            .filter_map(|&tool| {
                let why = sanitizer::not_needed(tool, ptx_text.as_deref()?, exercise)?;
                Some((tool, why))
            })
            .collect();
        let tool_runs: Vec<sanitizer::ToolRun> = runs
            .iter()
            .map(|&(run, plain)| tool_run(run, plain))
            .collect();
        sanitizer::sanitize(
            self.isolation,
            ExerciseLane {
                lane: self.lane,
                budget: self.budget,
            },
            reference,
            &tool_runs,
            &[(kernels::KERNEL_PTX_ENV, ptx.path.as_path())],
            &left_out,
            self.limits,
        )
    }

    /// The kernel (`ptx`) in the course's host code (`reference`) at `run`
    /// on the CPU emulator (`emulator`, its library), counted: the lesson
    /// point's run (`grade::lesson`). A CPU's work on a GPU node too, made
    /// once (nothing a neighbour does changes a count), sharing the lane.
    pub fn lesson_run(
        &self,
        reference: &Path,
        ptx: &Kept,
        run: &plan::Run,
        emulator: &Path,
    ) -> Outcome {
        let job = Job::kernel(run, reference, ptx);
        let made = self.lane.run_as("lesson runs", Use::Shared, |_| {
            job::make_counted(&job, self.isolation, self.limits, emulator)
        });
        made.outcome
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
            broker: None,
            canary: false,
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
/// The grader's plans pass only arguments the course's binaries accept, so
/// a run that ends refusing its arguments (`Exit::BadArguments`) refused
/// them for the GPU memory it found free, which neighbours hold: a
/// classmate's runs must never cost an honest one its verdict.
pub fn ending(ended: &Ended) -> Ending {
    match ended {
        Ended::Exited(code)
            if *code == Exit::CudaError.code() || *code == Exit::BadArguments.code() =>
        {
            Ending::Neighbours
        }
        Ended::Exited(_) => Ending::Own,
        Ended::TimedOut => Ending::OutOfTime,
        Ended::Signalled(_) | Ended::DidNotStart(_) => Ending::Neighbours,
    }
}

/// What the tools go over at `run`, whose kernel's plain run took `plain`:
/// its arguments made once, the tools' cut of the run where they go over
/// fewer of its elements, and racecheck's where it goes over a few of its
/// blocks.
fn tool_run(run: &plan::Run, plain: Option<Duration>) -> sanitizer::ToolRun {
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
        plain,
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

    /// A bench on `lane`, unsandboxed, with a timeout of `seconds`.
    fn bench<'a>(
        lane: &'a Lane,
        budget: &'a Budget,
        keeps_work_queues: bool,
        seconds: u64,
    ) -> Bench<'a> {
        static UNSANDBOXED: Isolation = Isolation::Unsandboxed;
        Bench {
            lane,
            budget,
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
        // "needs ... of GPU memory, but ... has ... free": a neighbour's.
        let memory = Exit::BadArguments.code();
        assert_eq!(ending(&Ended::Exited(memory)), Ending::Neighbours);
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
        let (lane, budget) = (Lane::new(1, None), Budget::default());
        for (keeps, ms) in [(false, "ms=1"), (true, "ms=2")] {
            let bench = bench(&lane, &budget, keeps, 10);
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
    fn a_run_that_held_the_gpu_shortens_the_later_runs_of_both_roles_but_the_large_ones() {
        let plan = crate::plan::exercise::plan(ExerciseId::VecaddAnyN, 1);
        let small = plan.iter().find(|r| r.memory == 0).unwrap();
        let large = plan.iter().find(|r| r.memory > 0).unwrap();
        let (lane, budget) = (Lane::new(1, None), Budget::default());
        let bench = bench(&lane, &budget, false, 600);
        let whole = Duration::from_secs(600);
        assert_eq!(bench.limits(small).timeout, whole);
        // A run out of time alone: the kernel hangs by itself.
        let out_of_time = |()| budget::Ended {
            ending: Ending::OutOfTime,
            failed_after: Some(whole),
        };
        let ten_minutes = (whole, false);
        lane.run_confirmed(
            "hangs",
            Use::Alone,
            &budget,
            ten_minutes,
            |_, _| (),
            |&()| out_of_time(()),
        );
        assert!(budget.held());
        assert_eq!(bench.limits(small).timeout, budget::AFTER_HOLDING);
        assert_eq!(bench.limits(large).timeout, whole);
    }

    #[test]
    #[cfg(unix)]
    fn a_batch_that_held_its_share_without_passing_shortens_the_exercise_s_runs() {
        use std::os::unix::fs::PermissionsExt;
        // A batch that answers nothing (each run left to be made alone),
        // at once, then after sleeping past AFTER_HOLDING (its timeout).
        let dir = tempfile::tempdir().unwrap();
        let script = |name: &str, body: &str| {
            let binary = dir.path().join(name);
            std::fs::write(&binary, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
            binary
        };
        let (quick, slow) = (
            script("quick", "exit 3"),
            script("slow", "sleep 60; exit 3"),
        );
        let plan = crate::plan::exercise::plan(ExerciseId::DotSm, 1);
        let ptx = Kept {
            path: quick.clone(),
            digest: String::new(),
        };
        let jobs = |binary| -> Vec<Job> {
            plan[..2]
                .iter()
                .map(|run| Job {
                    run,
                    role: Role::KernelInCourseHost,
                    binary,
                    ptx: Some(&ptx),
                    broker: None,
                    canary: false,
                })
                .collect()
        };
        let (lane, budget) = (Lane::new(2, None), Budget::default());
        let timeout = budget::AFTER_HOLDING.as_secs() + 1;
        let bench = bench(&lane, &budget, false, timeout);
        let made = bench.batch(&jobs(&quick), |code| code == 0);
        assert!(made.iter().all(Option::is_none));
        assert!(!budget.held(), "a quick batch holds nothing");
        let made = bench.batch(&jobs(&slow), |code| code == 0);
        assert!(made.iter().all(Option::is_none));
        assert!(budget.held());
        assert_eq!(bench.limits(&plan[0]).timeout, budget::AFTER_HOLDING);
    }
}
