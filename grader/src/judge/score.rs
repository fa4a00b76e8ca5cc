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
    let checks = points::not_assessed(plan, sanitize, emulate);
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
fn kernel_lost(runs: &[Run]) -> Option<Tag> {
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
    use kernels::catalogue::points::{KERNEL_SHARE, MEMORY_SAFETY};

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

    fn scored(plan: &[plan::Run], runs: Vec<Run>, safety: Safety) -> Exercise {
        let item = Item {
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
        };
        let short = vec![None; plan.len()];
        let unmade = unmade(&item, plan, &short, (true, true), None);
        let made = Made {
            runs,
            skipped: vec![],
            safety,
            speed: None,
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

    fn graded_kernel_lost(plan: &[plan::Run], runs: Vec<Run>) -> Option<Tag> {
        scored(plan, runs, Safety::NotAssessed).kernel_lost
    }
}
