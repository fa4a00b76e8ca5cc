//! Which of an exercise's runs are made first in one process
//! (`run::batch`): the runs of the course's binary that share the GPU, the
//! kernel's and the canary's, and the student's own binary's, through one
//! broker. A run a batch does not give is made by `grade::runs` in a process of its
//! own, and so is any a batch gave that is not then judged a pass, so a
//! failing verdict never comes from a batch. On the CPU emulator a process
//! costs little (no driver makes a context), so a failing kernel's batch
//! would be a run lost: there only the canary's runs, which always report,
//! are batched.

use kernels::catalogue::points::KERNEL_SHARE;
use kernels::exit_code::Exit;

use crate::grade::dispatch::{Dispatch, canary_using, using};
use crate::plan::runs::{self as plan, Role};
use crate::run::job::{Job, Made};
use crate::run::lane::Use;

/// The runs each batch made, by plan index; None where a run is to be made
/// alone.
pub struct Batches {
    /// The student's kernel in the course's binary.
    pub kernel: Vec<Option<Made>>,
    /// The canary's PTX in the course's binary: the result to expect.
    pub canary: Vec<Option<Made>>,
    /// The student's own binary with the canary's kernel, brokered.
    pub student: Vec<Option<Made>>,
}

/// Makes `dispatch`'s batches.
pub fn make(dispatch: &Dispatch) -> Batches {
    let Dispatch {
        exercise,
        emulate,
        hosts,
        ..
    } = dispatch;
    let (exercise, emulate) = (*exercise, *emulate);
    // Only a pass: a failing verdict comes from a process of its own.
    let passed = |code| code == Exit::Passed.code();
    // A report with the canary's result, which moves off the exact answer
    // by design and so fails the course's check: that is its result.
    let reported = Exit::reached_the_check;
    let host_runs = |run: &plan::Run| run.points > KERNEL_SHARE.min(run.points);
    let kernel = match &hosts.kernel {
        Ok((reference, ptx)) if !emulate => {
            let shares = chosen(dispatch, &|run| {
                using(exercise, run, Role::KernelInCourseHost, emulate) == Use::Shared
            });
            let job = |run| Job::kernel(run, reference, ptx);
            batched(dispatch, &shares, job, passed)
        }
        _ => vec![],
    };
    let canary = match (&hosts.broker, &hosts.canary) {
        (Ok(_), Ok((_, canary_ptx, reference))) => {
            let shares = chosen(dispatch, &|run| {
                canary_using(run) == Use::Shared && host_runs(run)
            });
            let job = |run| Job {
                run,
                role: Role::KernelInCourseHost,
                binary: reference,
                ptx: Some(canary_ptx),
                broker: None,
                canary: true,
            };
            batched(dispatch, &shares, job, reported)
        }
        _ => vec![],
    };
    // The student's own binary's runs (with the canary's kernel), brokered,
    // the same way; a run is the batch's only where it is then judged a
    // pass. Not on the CPU emulator: there the grader's class took 115.2 s
    // at `--jobs 2` with them against 108.9 s without, on 2 cores
    // (`bench/runs/2026-11-29-h200-student-batches`, 2026-11-29, night).
    let student = match (&hosts.broker, &hosts.canary) {
        (Ok(broker), Ok((binary, _, _))) if !emulate && hosts.unbrokered.is_none() => {
            let shares = chosen(dispatch, &|run| {
                using(exercise, run, Role::StudentHost, emulate) == Use::Shared && host_runs(run)
            });
            let job = |run| Job {
                run,
                role: Role::StudentHost,
                binary,
                ptx: None,
                broker: Some(broker),
                canary: false,
            };
            // The judge, against the canary, says whether it passed.
            batched(dispatch, &shares, job, reported)
        }
        _ => vec![],
    };
    Batches {
        kernel,
        canary,
        student,
    }
}

/// The plan's indices of the runs that fit the node and that `wanted`
/// marks.
fn chosen(dispatch: &Dispatch, wanted: &dyn Fn(&plan::Run) -> bool) -> Vec<usize> {
    let plan = dispatch.plan;
    (0..plan.len())
        .filter(|&i| dispatch.short[i].is_none() && wanted(&plan[i]))
        .collect()
}

/// The plan's runs at `chosen` (indices), each made as `job` says, all in
/// one process ([`Bench::batch`](crate::run::bench::Bench::batch)): by
/// plan index, each run's [`Made`] where its exit code is one `takes`
/// takes, None where it is to be made alone.
fn batched<'j>(
    dispatch: &'j Dispatch<'_>,
    chosen: &[usize],
    job: impl Fn(&'j plan::Run) -> Job<'j>,
    takes: impl Fn(i32) -> bool,
) -> Vec<Option<Made>> {
    let plan = dispatch.plan;
    let mut by_index: Vec<Option<Made>> = plan.iter().map(|_| None).collect();
    // One run gains nothing from a batch.
    if chosen.len() < 2 {
        return by_index;
    }
    let jobs: Vec<Job> = chosen.iter().map(|&i| job(&plan[i])).collect();
    let made = dispatch.bench.batch(&jobs, takes);
    for (&i, made) in chosen.iter().zip(made) {
        by_index[i] = made;
    }
    by_index
}

/// The batch's [`Made`] for the plan's run `index`, if it has one.
pub fn take(batch: &mut [Option<Made>], index: usize) -> Option<Made> {
    batch.get_mut(index).and_then(Option::take)
}
