//! The lesson point (`kernels::catalogue::Lesson`): what the kernel did,
//! counted by the CPU emulator over its first launch at one planned run,
//! against what the exercise's lesson asks (`Behaviour`). Nothing here
//! starts a process: `grade::lesson` makes the counted run.
//!
//! Threat model. The counts come from the course's binary, its host code
//! the course's, running the student's PTX on the emulator. The emulator
//! counts each warp instruction as it interprets it and hands its lines to
//! the host code through an entry point of its own, never through memory
//! the kernel can reach, so a kernel can neither write nor hide a count;
//! its `printf` goes to stdout, where it spoils the report rather than
//! forging one. Only a count, or the kernel's wrong answer there, costs
//! the point: a run that brought back neither (no emulator in the bundle,
//! a run that did not end well, a report that could not be read) leaves it
//! unassessed, out of the maximum, so no trouble of the node's costs an
//! honest kernel a point. What that leaves a student: a kernel that tells
//! the emulator from a GPU and breaks only there, on a GPU node, escapes
//! the count (and earns no lesson point either); and a count is a ratio
//! over the whole launch, so a kernel that pads its scattered loads with
//! neighbourly ones it throws away (`volatile`, or the compiler drops
//! them) lowers it, paying in time, which the speed point sees.

use kernels::catalogue::Behaviour;
use kernels::catalogue::points::LESSON;
use kernels::emulator_counters::LaunchCounters;
use serde_json::Value;

use crate::confine::runner::{Ended, Outcome};
use crate::plan::runs::{self as plan, Params, Tag};
use crate::record::outcome::{CheckName, CheckOutcome, NotStarted};
use crate::record::results::Check;

fn check(assessed: bool, passed: bool, outcome: CheckOutcome) -> Check {
    Check {
        name: CheckName::Lesson,
        assessed,
        passed,
        points: 0,
        max_points: LESSON,
        outcome,
    }
}

/// The lesson point as it stands before anything runs: assessed, earned
/// by no kernel yet.
pub fn not_assessed() -> Check {
    check(true, false, CheckOutcome::NoKernel)
}

/// The lesson point when the kernel could not be run in the course's host
/// code: lost, as every run of it is.
pub fn unrunnable(reason: NotStarted) -> Check {
    check(true, false, CheckOutcome::Unrunnable { reason })
}

/// The lesson point of a kernel that did not pass the planned run `lost`:
/// lost, as the PTX, memory-safety and speed points are.
pub fn lost_a_run(lost: Tag) -> Check {
    check(true, false, CheckOutcome::NotMeasured { run: lost })
}

/// Not assessed, for `why` (the node's doing, never the kernel's loss).
pub fn not_counted(run: &plan::Run, why: impl Into<String>) -> Check {
    check(
        false,
        false,
        CheckOutcome::NotCounted {
            run: run.tag,
            reason: why.into(),
        },
    )
}

/// The lesson point from the counted run of `run` (as the emulator made
/// it: `outcome`), for a lesson that `shows`; its point where the kernel
/// `counts` (its PTX shows the exercise, and it passed every planned run).
pub fn judge(shows: Behaviour, run: &plan::Run, outcome: &Outcome, counts: bool) -> Check {
    let launch = match counted(outcome) {
        Ok(launch) => launch,
        Err(Uncounted::WrongAnswer) => return lost_a_run(run.tag),
        Err(Uncounted::Why(why)) => return not_counted(run, why),
    };
    let Some(measure) = measure(shows, &run.params, &launch) else {
        return not_counted(
            run,
            format!("the kernel {} made no global loads to count", launch.kernel),
        );
    };
    let limit = limit(shows);
    let passed = measure <= limit;
    let mut point = check(
        true,
        passed,
        CheckOutcome::Counted {
            run: run.tag,
            shows,
            kernel: launch.kernel,
            measure,
            limit,
        },
    );
    point.points = u32::from(passed && counts) * LESSON;
    point
}

/// The most `shows`' measure may be.
pub fn limit(shows: Behaviour) -> f64 {
    match shows {
        Behaviour::CoalescedLoads => Behaviour::MAX_SECTORS_OVER_FEWEST,
        Behaviour::TiledLoads => Behaviour::MAX_TILED_REQUESTS,
    }
}

/// Why a counted run has no launch to judge.
enum Uncounted {
    /// The course's host code found the kernel's answer wrong: the
    /// kernel's own doing (a race the GPU's runs missed, or worse), lost as
    /// a planned run lost is.
    WrongAnswer,
    /// Anything else, for this reason: not assessed.
    Why(String),
}

/// The first launch the run counted, or why there is none to judge.
fn counted(outcome: &Outcome) -> Result<LaunchCounters, Uncounted> {
    let why = |text: &str| Uncounted::Why(text.to_owned());
    // A wrong answer ends the course's binary with its own code, and a
    // report that says so.
    let report: Option<Value> = serde_json::from_str(outcome.stdout.trim()).ok();
    if let Some(report) = &report
        && report["check"]["passed"] == false
    {
        return Err(Uncounted::WrongAnswer);
    }
    if outcome.ended != Ended::Exited(0) {
        return Err(Uncounted::Why(format!("the run ended {:?}", outcome.ended)));
    }
    let report = report.ok_or_else(|| why("its report could not be read"))?;
    let launches: Vec<LaunchCounters> = serde_json::from_value(report["counters"].clone())
        .map_err(|_| why("its report holds no counters"))?;
    launches
        .into_iter()
        .next()
        .ok_or_else(|| why("no launch was counted"))
}

/// What `shows` measures of `launch`, a launch of the run with `params`;
/// None where it has nothing to measure.
pub fn measure(shows: Behaviour, params: &Params, launch: &LaunchCounters) -> Option<f64> {
    let loads = launch.total.global_load;
    match shows {
        Behaviour::CoalescedLoads => {
            (loads.ideal > 0).then(|| loads.transactions as f64 / loads.ideal as f64)
        }
        Behaviour::TiledLoads => {
            let Params::Matmul(p) = params else {
                return None;
            };
            let blocks: u64 = launch.grid.iter().map(|&d| u64::from(d)).product();
            let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
            let warps = blocks * threads.div_ceil(32);
            let naive = warps * 2 * u64::from(p.width);
            (loads.requests > 0 && naive > 0).then(|| loads.requests as f64 / naive as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue::{ExerciseId, RunTag};
    use kernels::emulator_counters::{Counts, Traffic};
    use std::time::Duration;

    fn launch(grid: [u32; 3], block: [u32; 3], loads: Traffic) -> LaunchCounters {
        LaunchCounters {
            kernel: "dot".into(),
            grid,
            block,
            shared: 0,
            dynamic_shared: 0,
            registers: 8,
            total: Counts {
                global_load: loads,
                ..Counts::default()
            },
            lines: vec![],
        }
    }

    fn outcome(report: Value) -> Outcome {
        Outcome {
            ended: Ended::Exited(0),
            stdout: report.to_string(),
            stderr: String::new(),
            flooded: false,
            duration: Duration::from_millis(5),
            peak_memory: None,
            out_of_memory: None,
        }
    }

    fn report(passed: bool, launches: &[LaunchCounters]) -> Value {
        serde_json::json!({
            "check": {"passed": passed},
            "counters": launches,
        })
    }

    fn planned(exercise: ExerciseId, tag: RunTag) -> plan::Run {
        crate::plan::exercise::plan(exercise, 5)
            .into_iter()
            .find(|r| r.tag == tag)
            .unwrap()
    }

    /// A warp's 32 lanes reading 32 neighbouring words is 4 sectors, the
    /// fewest; each lane walking a run of its own is 32 sectors for the
    /// same 128 bytes.
    #[test]
    fn coalesced_loads_pass_and_contiguous_runs_lose_the_point() {
        let run = planned(ExerciseId::DotGm, RunTag::GridSmallerThanN);
        let warps = 1000;
        let strided = Traffic {
            requests: warps,
            transactions: 4 * warps,
            ideal: 4 * warps,
        };
        let runs = Traffic {
            transactions: 32 * warps,
            ..strided
        };
        let grid = ([4, 1, 1], [1024, 1, 1]);
        let judged = |loads, counts| {
            let counted = outcome(report(true, &[launch(grid.0, grid.1, loads)]));
            judge(Behaviour::CoalescedLoads, &run, &counted, counts)
        };
        let good = judged(strided, true);
        assert!(
            good.assessed && good.passed && good.points == LESSON,
            "{good:?}"
        );
        assert!(judged(strided, false).points == 0, "the kernel earns it");
        let bad = judged(runs, true);
        assert!(bad.assessed && !bad.passed && bad.points == 0, "{bad:?}");
        assert!(matches!(bad.outcome, CheckOutcome::Counted { measure, .. } if measure == 8.0));
        // Four neighbouring words a thread at a time: within the limit.
        let unrolled = Traffic {
            transactions: 16 * warps,
            ..strided
        };
        assert!(judged(unrolled, true).passed);
    }

    #[test]
    fn tiled_loads_are_requests_a_warp_against_a_naive_kernel_s_two_w() {
        let run = planned(ExerciseId::MatmulTiled, RunTag::LargestBlock);
        let Params::Matmul(p) = &run.params else {
            unreachable!()
        };
        let w = u64::from(p.width);
        let edge = 32u32;
        let blocks = u32::try_from(w.div_ceil(32)).unwrap();
        let grid = [blocks, blocks, 1];
        let block = [edge, edge, 1];
        let warps = u64::from(blocks * blocks) * 32;
        let requests = |per_warp: u64| Traffic {
            requests: warps * per_warp,
            transactions: 0,
            ideal: 0,
        };
        let tiled = 2 * w.div_ceil(32);
        let judged = |per_warp| {
            let counted = outcome(report(true, &[launch(grid, block, requests(per_warp))]));
            judge(Behaviour::TiledLoads, &run, &counted, true)
        };
        assert!(judged(tiled).passed);
        // Naive, and one operand tiled: more than half of 2·W.
        assert!(!judged(2 * w).passed);
        assert!(!judged(w + w.div_ceil(32)).passed);
    }

    #[test]
    fn only_counts_and_wrong_answers_cost_the_point_and_anything_else_leaves_it_unassessed() {
        let run = planned(ExerciseId::DotGm, RunTag::GridSmallerThanN);
        let some = [launch(
            [1, 1, 1],
            [32, 1, 1],
            Traffic {
                requests: 1,
                transactions: 32,
                ideal: 4,
            },
        )];
        let timed_out = Outcome {
            ended: Ended::TimedOut,
            ..outcome(report(true, &some))
        };
        let spoiled = Outcome {
            stdout: format!("printed by the kernel\n{}", report(true, &some)),
            ..outcome(report(true, &some))
        };
        // A wrong answer is the kernel's: lost, in the maximum.
        let wrong = Outcome {
            ended: Ended::Exited(1),
            ..outcome(report(false, &some))
        };
        let judged = judge(Behaviour::CoalescedLoads, &run, &wrong, true);
        assert!(judged.assessed && !judged.passed, "{judged:?}");
        assert_eq!(judged.outcome, CheckOutcome::NotMeasured { run: run.tag });
        for (what, made) in [
            ("timed out", timed_out),
            ("spoiled", spoiled),
            (
                "no counters",
                outcome(serde_json::json!({"check": {"passed": true}})),
            ),
            ("no launch", outcome(report(true, &[]))),
        ] {
            let judged = judge(Behaviour::CoalescedLoads, &run, &made, true);
            assert!(!judged.assessed && judged.points == 0, "{what}: {judged:?}");
            assert!(
                matches!(judged.outcome, CheckOutcome::NotCounted { .. }),
                "{what}"
            );
        }
        // A kernel that loads nothing from global memory has nothing to
        // count either.
        let none = [launch([1, 1, 1], [32, 1, 1], Traffic::default())];
        let judged = judge(
            Behaviour::CoalescedLoads,
            &run,
            &outcome(report(true, &none)),
            true,
        );
        assert!(!judged.assessed, "{judged:?}");
    }
}
