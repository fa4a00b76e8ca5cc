//! One exercise's grade from what its grading made, starting nothing: the
//! record before any run ([`unmade`]: what the build found, the checks as
//! they stand, what it could earn), then, from the runs as judged, the
//! tools' records and the course's timed run ([`Made`]), the first run the
//! kernel lost, the memory-safety and speed points, the integrity flags
//! and the sums ([`score`]). The runs are made by the dispatcher
//! (`grade::exercise`), which has each judged as it comes back
//! (`judge::run`).

use kernels::catalogue::ExerciseId;
use kernels::catalogue::points::PTX;

use crate::build::bundle::Item;
use crate::confine::runner::Outcome;
use crate::judge::lesson;
use crate::judge::points::{self, Tools};
use crate::plan::emulated::Skipped;
use crate::plan::runs::{self as plan, Role, Tag};
use crate::record::outcome::{
    Failure, Integrity, IntegrityEvidence, NotStarted, Shortfall, Skip, Verdict,
};
use crate::record::results::{self, Exercise, Run};

/// The record of `item` before any run: what the build found, the checks
/// of `plan` as they stand before anything runs (`sanitize`, `emulate`:
/// the grading's settings), the digest of its `inputs`, and what it could
/// earn: every run that fits the node made (`short`: per planned run, why
/// it does not fit), every point assessed.
pub fn unmade(
    item: &Item,
    plan: &[plan::Run],
    short: &[Option<Shortfall>],
    (sanitize, emulate): (bool, bool),
    inputs: Option<String>,
) -> Exercise {
    let mut checks = points::not_assessed(plan, sanitize, emulate);
    if item.exercise.exercise().lesson.is_some() && !plan.is_empty() {
        checks.push(lesson::not_assessed());
    }
    let max_points = PTX
        + plan
            .iter()
            .zip(short)
            .filter(|(_, short)| short.is_none())
            .map(|(r, _)| r.points)
            .sum::<u32>()
        + points::assessed_max(&checks);
    Exercise {
        refused: item.refused.clone(),
        build_errors: item.build_errors.clone(),
        refused_binary: None,
        ptx_missing: item.ptx_missing.clone(),
        runs: vec![],
        points: 0,
        max_points,
        sanitizer: vec![],
        checks,
        inputs,
        absent: item.absent.clone(),
        integrity: vec![],
        kernel_lost: None,
    }
}

/// How the memory-safety point was assessed.
pub enum Safety {
    /// Not (`--no-sanitize`, or a plan without runs): it stays as
    /// [`unmade`] left it.
    NotAssessed,
    /// On the CPU emulator: its findings in the runs of the kernel.
    Emulator,
    /// compute-sanitizer's tools, as the dispatcher made them.
    Tools(Tools),
}

/// The speed point's run, on a GPU, and what it needs.
pub struct Speed<'a> {
    pub timed: &'a plan::Run,
    /// Why the kernel could not be run in the course's host code.
    pub unrunnable: Option<NotStarted>,
    /// The course's own kernel's run at `timed`, made right after the
    /// student's kernel's wherever that gave a time.
    pub course: Option<Outcome>,
}

/// What an exercise's grading made, for [`score`].
pub struct Made<'a> {
    /// Each planned run's record in each role it was made in, or why it
    /// was not, each judged, in plan order.
    pub runs: Vec<Run>,
    /// The planned runs left out on the CPU emulator.
    pub skipped: Vec<Skipped>,
    pub safety: Safety,
    /// None where the plan has no timed run, or on the emulator.
    pub speed: Option<Speed<'a>>,
    /// The lesson point as its counted run left it (`grade::lesson`);
    /// None where the exercise counts no lesson.
    pub lesson: Option<Lesson>,
}

/// The lesson point's counted run, for [`score`].
pub enum Lesson {
    /// Judged: what the counts showed, or why there were none.
    Judged(crate::record::results::Check),
    /// The counted run was made and came back (`outcome`), for the lesson
    /// that `shows`, at `run`.
    Made {
        shows: kernels::catalogue::Behaviour,
        run: plan::Run,
        outcome: Outcome,
    },
}

/// `graded` ([`unmade`]) with what its grading `made`: the runs, the first
/// the kernel lost, the checks, the integrity flags and the sums. The PTX,
/// memory-safety and speed points need a kernel that passes every planned
/// run it made in the course's host code (runs left out count neither
/// way): a kernel that shows the right instructions but writes a formula,
/// never reading its inputs, earns none of them. Nothing earns points
/// unless the kernel's PTX shows what the exercise is about (`counts`).
pub fn score(exercise: ExerciseId, mut graded: Exercise, made: Made, counts: bool) -> Exercise {
    graded.runs = made.runs;
    graded.runs.extend(made.skipped.into_iter().map(|s| {
        let skip = Skip::Emulator {
            too_slow: s.too_slow.to_owned(),
        };
        results::skipped(exercise.name(), &s.run, skip)
    }));
    graded.kernel_lost = kernel_lost(&graded.runs);
    let earns = counts && graded.kernel_lost.is_none();
    match made.safety {
        Safety::NotAssessed => {}
        Safety::Emulator => {
            let check = points::emulator_safety(&graded.runs, earns);
            points::set(&mut graded.checks, check);
        }
        Safety::Tools(tools) => {
            points::set(&mut graded.checks, points::memory_safety(&tools, earns));
            if let Tools::Ran { records, .. } = tools {
                graded.sanitizer = records;
            }
        }
    }
    if let Some(speed) = made.speed {
        let asks = exercise.exercise().speed_fraction();
        let check = points::speed(
            &graded.runs,
            speed.unrunnable.as_ref(),
            speed.timed,
            speed.course.as_ref(),
            asks,
            earns,
        );
        points::set(&mut graded.checks, check);
    }
    // A kernel that lost a run has lost the lesson point whatever was
    // counted (or not): the point stays in its maximum.
    match (made.lesson, graded.kernel_lost) {
        (None, _) => {}
        (Some(Lesson::Judged(check)), _) => points::set(&mut graded.checks, check),
        (Some(Lesson::Made { .. }), Some(lost)) => {
            points::set(&mut graded.checks, lesson::lost_a_run(lost));
        }
        (
            Some(Lesson::Made {
                shows,
                run,
                outcome,
            }),
            None,
        ) => points::set(
            &mut graded.checks,
            lesson::judge(shows, &run, &outcome, earns),
        ),
    }
    // A report the evidence contradicts: the exercise's host points go.
    graded.integrity = integrity(&graded.runs);
    if !graded.integrity.is_empty() {
        for run in &mut graded.runs {
            if run.role == Some(Role::StudentHost) {
                run.points = 0;
            }
        }
    }
    graded.points = u32::from(earns) * PTX
        + graded.runs.iter().map(|r| r.points).sum::<u32>()
        + graded.checks.iter().map(|c| c.points).sum::<u32>();
    graded.max_points = PTX
        + graded.runs.iter().map(|r| r.max_points).sum::<u32>()
        + points::assessed_max(&graded.checks);
    graded
}

/// The first planned run the kernel lost in the course's host code; a run
/// that found no GPU is the node's doing, not the kernel's.
pub fn kernel_lost(runs: &[Run]) -> Option<Tag> {
    runs.iter()
        .find(|r| r.role == Some(Role::KernelInCourseHost) && r.lost() && !no_gpu(&r.verdict))
        .map(|r| r.tag)
}

/// A run that found no GPU: the node's doing, not the kernel's, so it
/// withholds no point that needs a correct kernel.
fn no_gpu(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::CudaError { name: Some(name), .. } if name == "CUDA_ERROR_NO_DEVICE")
}

/// The integrity flags `runs` show: each run of the canary build that
/// reported the exercise's exact answer.
fn integrity(runs: &[Run]) -> Vec<Integrity> {
    runs.iter()
        .filter(|r| {
            matches!(
                r.verdict,
                Verdict::Failed {
                    failure: Failure::CpuAnswer
                }
            )
        })
        .map(|r| Integrity {
            tag: r.tag,
            evidence: IntegrityEvidence::CpuAnswer,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::outcome::CheckName;
    use kernels::catalogue::points::{KERNEL_SHARE, LESSON, MEMORY_SAFETY};

    const EXERCISE: ExerciseId = ExerciseId::DotSm;

    /// Every planned run made in both roles, each as `verdict` says (by
    /// plan index and role), its points where it passed.
    fn made(plan: &[plan::Run], verdict: impl Fn(usize, Role) -> Verdict) -> Vec<Run> {
        let mut runs = vec![];
        for (i, run) in plan.iter().enumerate() {
            let kernel = KERNEL_SHARE.min(run.points);
            for (role, points) in [
                (Role::KernelInCourseHost, kernel),
                (Role::StudentHost, run.points - kernel),
            ] {
                let mut record = Run::not_made(run, Some(role), verdict(i, role), points);
                if record.verdict.passed() {
                    record.points = points;
                }
                runs.push(record);
            }
        }
        runs
    }

    fn item() -> Item {
        Item {
            student: "ann".into(),
            exercise: EXERCISE,
            problems: vec![],
            absent: None,
            refused: vec![],
            build_errors: None,
            binary: None,
            digest: None,
            ptx_missing: vec![],
            ptx: None,
            canary: None,
        }
    }

    fn scored(plan: &[plan::Run], runs: Vec<Run>, safety: Safety) -> Exercise {
        let item = item();
        let short = vec![None; plan.len()];
        let unmade = unmade(&item, plan, &short, (true, true), None);
        let made = Made {
            runs,
            skipped: vec![],
            safety,
            speed: None,
            lesson: None,
        };
        score(EXERCISE, unmade, made, true)
    }

    #[test]
    fn a_kernel_that_passes_everything_earns_every_point() {
        let plan = crate::plan::exercise::plan(EXERCISE, 3);
        let all: u32 = plan.iter().map(|r| r.points).sum();
        let graded = scored(&plan, made(&plan, |_, _| Verdict::Passed), Safety::Emulator);
        assert_eq!(graded.kernel_lost, None);
        assert_eq!(graded.points, PTX + all + MEMORY_SAFETY);
        assert_eq!(graded.points, graded.max_points);
        assert_eq!(graded.inflated(EXERCISE.name()), None);
    }

    #[test]
    fn a_kernel_that_lost_a_run_keeps_no_ptx_or_check_point_and_no_gpu_is_not_its_loss() {
        let plan = crate::plan::exercise::plan(EXERCISE, 3);
        let wrong = Verdict::Failed {
            failure: Failure::CpuAnswer,
        };
        let lost_second = |i, role| match (i, role) {
            (1, Role::KernelInCourseHost) => Verdict::Inconsistent {
                code: 0,
                passed: false,
            },
            _ => Verdict::Passed,
        };
        let graded = scored(&plan, made(&plan, lost_second), Safety::Emulator);
        assert_eq!(graded.kernel_lost, Some(plan[1].tag));
        let safety = graded
            .checks
            .iter()
            .find(|c| c.name == CheckName::MemorySafety);
        assert_eq!(safety.map(|c| (c.passed, c.points)), Some((true, 0)));
        let runs: u32 = graded.runs.iter().map(|r| r.points).sum();
        assert_eq!(graded.points, runs, "only the runs' own points");
        // The node found no GPU: nothing the kernel lost.
        let no_gpu = |i, role| match (i, role) {
            (1, Role::KernelInCourseHost) => Verdict::CudaError {
                name: Some("CUDA_ERROR_NO_DEVICE".into()),
                message: String::new(),
            },
            _ => Verdict::Passed,
        };
        assert_eq!(
            graded_kernel_lost(&plan, made(&plan, no_gpu)),
            None,
            "the node's doing"
        );
        // A CPU answer: an integrity flag, and no host points at all.
        let cpu_answer = |i, role| match (i, role) {
            (0, Role::StudentHost) => wrong.clone(),
            _ => Verdict::Passed,
        };
        let graded = scored(&plan, made(&plan, cpu_answer), Safety::NotAssessed);
        assert_eq!(graded.integrity.len(), 1);
        assert_eq!(graded.integrity[0].tag, plan[0].tag);
        let host: u32 = (graded.runs.iter())
            .filter(|r| r.role == Some(Role::StudentHost))
            .map(|r| r.points)
            .sum();
        assert_eq!(host, 0);
        assert_eq!(graded.inflated(EXERCISE.name()), None);
    }

    /// dot-gm's grade with its lesson's counted run come back `coalesced`
    /// or not, every planned run as `verdict` says.
    fn with_lesson(coalesced: bool, verdict: impl Fn(usize, Role) -> Verdict) -> Exercise {
        let exercise = ExerciseId::DotGm;
        let plan = crate::plan::exercise::plan(exercise, 3);
        let item = Item { exercise, ..item() };
        let short = vec![None; plan.len()];
        let unmade = unmade(&item, &plan, &short, (true, true), None);
        let lesson = exercise.exercise().lesson.unwrap();
        let run = plan.iter().find(|r| r.tag == lesson.run).unwrap().clone();
        let sectors = if coalesced { 4 } else { 32 };
        let report = serde_json::json!({
            "check": {"passed": true},
            "counters": [{
                "kernel": "dot", "grid": [3, 1, 1], "block": [1024, 1, 1],
                "shared": 0, "dynamic_shared": 0, "registers": 8,
                "total": {
                    "inst": 1, "lanes": 32,
                    "global_load": {"requests": 1, "transactions": sectors, "ideal": 4},
                    "global_store": {"requests": 0, "transactions": 0, "ideal": 0},
                    "global_atomic": {"requests": 0, "transactions": 0, "ideal": 0},
                    "shared_load": {"requests": 0, "transactions": 0, "ideal": 0},
                    "shared_store": {"requests": 0, "transactions": 0, "ideal": 0}
                },
                "lines": []
            }]
        });
        let outcome = Outcome {
            ended: crate::confine::runner::Ended::Exited(0),
            stdout: report.to_string(),
            stderr: String::new(),
            flooded: false,
            duration: std::time::Duration::from_millis(3),
            peak_memory: None,
            out_of_memory: None,
        };
        let made = Made {
            runs: made(&plan, verdict),
            skipped: vec![],
            safety: Safety::Emulator,
            speed: None,
            lesson: Some(Lesson::Made {
                shows: lesson.shows,
                run,
                outcome,
            }),
        };
        score(exercise, unmade, made, true)
    }

    fn lesson_of(graded: &Exercise) -> &crate::record::results::Check {
        (graded.checks.iter())
            .find(|c| c.name == CheckName::Lesson)
            .unwrap()
    }

    #[test]
    fn the_lesson_point_is_the_count_s_and_a_kernel_that_lost_a_run_loses_it_in_its_maximum() {
        let all_pass = |_, _| Verdict::Passed;
        let good = with_lesson(true, all_pass);
        assert_eq!(lesson_of(&good).points, LESSON);
        assert_eq!(good.points, good.max_points);
        let uncoalesced = with_lesson(false, all_pass);
        assert!(lesson_of(&uncoalesced).assessed && !lesson_of(&uncoalesced).passed);
        assert_eq!(uncoalesced.points + LESSON, uncoalesced.max_points);
        // Lost a run: the count is not read, and the point is lost, in the
        // same maximum.
        let lost_first = |i, role| match (i, role) {
            (0, Role::KernelInCourseHost) => Verdict::Inconsistent {
                code: 0,
                passed: false,
            },
            _ => Verdict::Passed,
        };
        let lost = with_lesson(true, lost_first);
        let check = lesson_of(&lost);
        assert!(
            check.assessed && !check.passed && check.points == 0,
            "{check:?}"
        );
        assert_eq!(lost.max_points, good.max_points);
    }

    fn graded_kernel_lost(plan: &[plan::Run], runs: Vec<Run>) -> Option<Tag> {
        scored(plan, runs, Safety::NotAssessed).kernel_lost
    }
}
