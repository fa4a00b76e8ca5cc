//! An exercise's planned runs, each made in its roles and judged as it
//! comes back (`judge::run`): the student's kernel in the course's binary
//! (the kernel's points: host code the student did not write), then, where
//! the run has host points, the canary's PTX in the course's binary (the
//! result to expect) and the student's own binary with the canary's kernel
//! and the tracer (the host's points). A run a batch made stands only as a
//! pass; the course's own kernel is timed right after the student's
//! kernel's timed run.

use std::path::Path;

use kernels::catalogue::points::KERNEL_SHARE;

use crate::confine::runner::Outcome;
use crate::grade::batches::{Batches, take};
use crate::grade::dispatch::{Dispatch, canary_using, pass_or_alone, using};
use crate::judge::points::theirs_ms;
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::{NotStarted, Skip, Verdict};
use crate::record::results::{self, Run};
use crate::run::brokered::Broker;
use crate::run::job::{Job, Made};

/// Makes every planned run of `dispatch` in each of its roles, taking what
/// the `batches` made: the runs' records, judged, in plan order, and the
/// course's own kernel's timed run where it was made.
pub fn make(dispatch: &Dispatch, mut batches: Batches) -> (Vec<Run>, Option<Outcome>) {
    // The speed point's run, on a GPU, and the course's own kernel's time
    // at it, taken right after the student's kernel's: the two timed runs
    // of an exercise then wait for the GPU alone in the same drain, before
    // its sanitizer tools and its runs above 2^31 elements (tens of
    // seconds of long shares each run alone would wait behind), and on a
    // GPU in the same state.
    let timed = (dispatch.plan.iter())
        .find(|r| r.timed)
        .filter(|_| !dispatch.emulate);
    let mut runs = vec![];
    let mut course = None;
    for (index, (run, short)) in dispatch.plan.iter().zip(dispatch.short).enumerate() {
        let kernel_points = KERNEL_SHARE.min(run.points);
        if let Some(shortfall) = short {
            let skip = Skip::Memory {
                shortfall: shortfall.clone(),
            };
            runs.push(results::skipped(dispatch.exercise.name(), run, skip));
            continue;
        }
        if run.memory > 0 && !dispatch.counts {
            // Tens of seconds of the node's time that could earn nothing.
            let why = NotStarted::PtxLacks;
            runs.push(not_run(run, Role::KernelInCourseHost, kernel_points, why));
            continue;
        }
        let batched = take(&mut batches.kernel, index);
        let kernel = kernel_run(dispatch, run, kernel_points, batched);
        if let (Ok((reference, _)), true) = (&dispatch.hosts.kernel, timed == Some(run)) {
            if theirs_ms(&kernel).is_some() {
                course = Some(dispatch.bench.course_run(reference, run));
            }
        }
        runs.push(kernel);
        let host_points = run.points - kernel_points;
        if host_points == 0 {
            // A kernel-only run: the student's binary is not asked.
            continue;
        }
        let batched = (
            take(&mut batches.canary, index),
            take(&mut batches.student, index),
        );
        runs.push(host_run(dispatch, run, host_points, batched));
    }
    (runs, course)
}

/// `run` of the student's kernel in the course's binary, worth `points`,
/// from its batch where it passed there (`batched`), else made alone.
fn kernel_run(dispatch: &Dispatch, run: &plan::Run, points: u32, batched: Option<Made>) -> Run {
    let (reference, ptx) = match &dispatch.hosts.kernel {
        Ok(host) => host,
        Err(why) => return not_run(run, Role::KernelInCourseHost, points, why.clone()),
    };
    let job = Job::kernel(run, reference, ptx);
    let limits = dispatch.bench.limits(run);
    let judged = |made| {
        crate::judge::run::judge(
            dispatch.exercise,
            &job,
            made,
            points,
            dispatch.counts,
            (limits.timeout.as_secs_f64(), dispatch.emulate),
            None,
        )
    };
    // The batch took only an exit that passed the course's check; the
    // grader's recheck may still fail it, and then the run is made again
    // alone as any other failure.
    pass_or_alone(batched, judged, || {
        let using = using(dispatch.exercise, run, job.role, dispatch.emulate);
        dispatch.bench.make(&job, limits, using)
    })
}

/// `run` of the student's own binary through the broker, worth `points`,
/// judged against the canary's result from the course's binary; each from
/// its batch where there is one (`batched`: the canary's, the student's),
/// the student's only where it is then judged a pass.
fn host_run(
    dispatch: &Dispatch,
    run: &plan::Run,
    points: u32,
    (canary_batched, student_batched): (Option<Made>, Option<Made>),
) -> Run {
    let hosts = &dispatch.hosts;
    if hosts.unbrokered.is_some() {
        return unbrokered_host_run(dispatch, run, points, student_batched);
    }
    let (broker, (binary, canary_ptx, reference)) = match (&hosts.broker, &hosts.canary) {
        (Ok(broker), Ok(canary)) => (broker, canary),
        (Err(why), _) | (_, Err(why)) => {
            return not_run(run, Role::StudentHost, points, why.clone());
        }
    };
    let limits = dispatch.bench.limits(run);
    // The canary's result, from the course's host code.
    let course = Job {
        run,
        role: Role::KernelInCourseHost,
        binary: reference,
        ptx: Some(canary_ptx),
        broker: None,
        canary: true,
    };
    let made =
        canary_batched.unwrap_or_else(|| dispatch.bench.make(&course, limits, canary_using(run)));
    let canary = crate::judge::run::canary_report(&made);
    let canary = Some(canary.as_ref().map_err(Clone::clone));
    student_run(
        dispatch,
        run,
        points,
        (binary, Some(broker)),
        canary,
        student_batched,
    )
}

/// `run` of the student's own binary, worth `points`, made without the
/// broker on a node where it cannot serve the exercise
/// (`grade::preflight`, which said so): the student's own kernel, its
/// report rechecked as a kernel run's is, and no record to judge. Its
/// points rest on the report alone, as the grader warned.
fn unbrokered_host_run(
    dispatch: &Dispatch,
    run: &plan::Run,
    points: u32,
    student_batched: Option<Made>,
) -> Run {
    let binary = match &dispatch.hosts.canary {
        Ok((binary, _, _)) => binary,
        Err(why) => return not_run(run, Role::StudentHost, points, why.clone()),
    };
    student_run(dispatch, run, points, (binary, None), None, student_batched)
}

/// `run` of the student's `binary` (through `broker` where there is one),
/// worth `points`, judged against `canary` where there is one; from its
/// batch where that run is then judged a pass, else made alone.
fn student_run(
    dispatch: &Dispatch,
    run: &plan::Run,
    points: u32,
    (binary, broker): (&Path, Option<&Broker>),
    canary: Option<Result<&serde_json::Value, NotStarted>>,
    student_batched: Option<Made>,
) -> Run {
    let limits = dispatch.bench.limits(run);
    let job = Job {
        run,
        role: Role::StudentHost,
        binary,
        ptx: None,
        broker,
        canary: false,
    };
    let judged = |made| {
        crate::judge::run::judge(
            dispatch.exercise,
            &job,
            made,
            points,
            dispatch.counts,
            (limits.timeout.as_secs_f64(), dispatch.emulate),
            canary.clone(),
        )
    };
    pass_or_alone(student_batched, judged, || {
        let using = using(dispatch.exercise, run, job.role, dispatch.emulate);
        dispatch.bench.make(&job, limits, using)
    })
}

/// A planned run that could not be made in `role`, and why.
fn not_run(run: &plan::Run, role: Role, points: u32, reason: NotStarted) -> Run {
    Run::not_made(run, Some(role), Verdict::DidNotStart { reason }, points)
}
