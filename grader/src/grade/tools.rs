//! How the memory-safety point is assessed, and the runs it needs: on a
//! GPU, compute-sanitizer's tools over the kernel in the course's host
//! code at the exercise's first planned run, its smallest, and at an
//! edge-shape run of moderate size (`sanitized_runs`), unless the kernel
//! cannot run there or did not finish one of those runs plain; on the CPU
//! emulator, its findings in the runs already made, with no run of its
//! own.

use std::path::PathBuf;
use std::time::Duration;

use kernels::catalogue::{Emulated, ExerciseId};

use crate::build::reference::Kept;
use crate::grade::dispatch::Dispatch;
use crate::judge::points::Tools;
use crate::judge::score::Safety;
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::{NotStarted, Verdict};
use crate::record::results::Run;
use crate::run::bench::Bench;

/// How `dispatch`'s memory-safety point is assessed (`sanitize`: the
/// grading's setting), with `runs`, its runs as made: the tools made here
/// where they are.
pub fn safety(dispatch: &Dispatch, sanitize: bool, runs: &[Run]) -> Safety {
    if !sanitize || dispatch.plan.is_empty() {
        return Safety::NotAssessed;
    }
    if dispatch.emulate {
        return Safety::Emulator;
    }
    let ran = |tag| {
        runs.iter()
            .find(|r| r.role == Some(Role::KernelInCourseHost) && r.tag == tag)
    };
    let sanitized: Vec<(&plan::Run, Option<&Run>)> =
        sanitized_runs(dispatch.exercise, dispatch.plan)
            .into_iter()
            .map(|r| (r, ran(r.tag)))
            .collect();
    let tools = tools(
        &dispatch.bench,
        dispatch.exercise,
        &dispatch.hosts.kernel,
        &sanitized,
    );
    Safety::Tools(tools)
}

/// compute-sanitizer's tools over the kernel in the course's host code
/// (`kernel_host`) at each of `runs`, each with the kernel's plain run of
/// it; none where there is no run, the kernel cannot be run there, or it
/// did not finish one of them plain.
fn tools(
    bench: &Bench,
    exercise: ExerciseId,
    kernel_host: &Result<(PathBuf, Kept), NotStarted>,
    runs: &[(&plan::Run, Option<&Run>)],
) -> Tools {
    let Some((first, _)) = runs.first() else {
        return Tools::NoRun;
    };
    let (reference, ptx) = match kernel_host {
        Ok(host) => host,
        Err(reason) => return Tools::Unrunnable(reason.clone()),
    };
    // A kernel that did not finish a run plain would not under the tools
    // either, which slow it down many times: the node's time for nothing.
    if let Some((run, _)) = runs
        .iter()
        .find(|(_, ran)| ran.is_some_and(|r| matches!(r.verdict, Verdict::TimedOut { .. })))
    {
        return Tools::TimedOut(run.tag);
    }
    // How long each plain run took: the tools' limits follow it.
    let plain: Vec<(&plan::Run, Option<Duration>)> = runs
        .iter()
        .map(|(run, ran)| {
            let took = ran.map(|r| Duration::from_secs_f64(r.duration_ms.max(0.0) / 1e3));
            (*run, took)
        })
        .collect();
    Tools::Ran {
        first: first.tag,
        records: bench.sanitize(exercise, reference, ptx, &plain),
    }
}

/// The runs compute-sanitizer goes over: the first planned run, the
/// smallest, and the first after it of moderate size (neither timed nor
/// past 2^31, and made on the CPU emulator too, so seconds of work): an
/// edge shape, where an access one past the end or a race between warps
/// shows that one element does not.
fn sanitized_runs(exercise: ExerciseId, plan: &[plan::Run]) -> Vec<&plan::Run> {
    let moderate = |run: &&plan::Run| {
        let spec = exercise.exercise().run(run.tag);
        !run.timed
            && run.memory == 0
            && spec.is_some_and(|s| !s.past_int && s.emulated == Emulated::Capped)
    };
    plan.iter()
        .take(1)
        .chain(plan.iter().skip(1).find(moderate))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confine::runner::Limits;
    use crate::confine::sandbox::Isolation;
    use crate::run::budget::Budget;
    use crate::run::lane::Lane;

    #[test]
    fn a_kernel_that_timed_out_is_not_run_again_under_the_sanitizer() {
        let plan = crate::plan::exercise::plan(ExerciseId::VecaddAnyN, 1);
        let first = &plan[0];
        let verdict = Verdict::TimedOut { seconds: 1.0 };
        let ran = Run::not_made(first, Some(Role::KernelInCourseHost), verdict, 1);
        // A reference binary that cannot exist: were it run, the record
        // would say the tool could not start it.
        let host = Ok((
            PathBuf::from("/nonexistent/reference"),
            Kept {
                path: PathBuf::from("/nonexistent/kernel.ptx"),
                digest: String::new(),
            },
        ));
        let (lane, budget) = (Lane::new(1, None), Budget::default());
        let isolation = Isolation::Unsandboxed;
        let bench = Bench {
            isolation: &isolation,
            limits: Limits {
                timeout: std::time::Duration::from_secs(1),
                max_output: 1 << 16,
            },
            driver: None,
            lane: &lane,
            budget: &budget,
            keeps_work_queues: false,
        };
        let run = |ran| tools(&bench, ExerciseId::VecaddAnyN, &host, &[(first, ran)]);
        assert_eq!(run(Some(&ran)), Tools::TimedOut(first.tag));
        assert!(lane.spent().is_empty(), "nothing was made");
        // Not run, nothing to go over, no kernel: nothing is made either.
        assert_eq!(
            tools(&bench, ExerciseId::VecaddAnyN, &host, &[]),
            Tools::NoRun
        );
        let no_ptx = Err(NotStarted::NoPtx);
        assert_eq!(
            tools(&bench, ExerciseId::VecaddAnyN, &no_ptx, &[(first, None)]),
            Tools::Unrunnable(NotStarted::NoPtx)
        );
        assert!(lane.spent().is_empty(), "nothing was made");
    }

    #[test]
    fn the_tools_go_over_the_smallest_run_and_an_edge_shape_of_moderate_size() {
        for &id in &kernels::catalogue::ALL_IDS {
            let plan = crate::plan::exercise::plan(id, 7);
            let runs = sanitized_runs(id, &plan);
            assert_eq!(runs.first(), plan.first().as_ref(), "{id}");
            assert!(runs.len() <= 2, "{id}");
            for run in runs.iter().skip(1) {
                assert!(!run.timed && run.memory == 0, "{id} {}", run.tag);
            }
        }
    }
}
