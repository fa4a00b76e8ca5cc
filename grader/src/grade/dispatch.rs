//! What every stage of one exercise's dispatch shares ([`Dispatch`]: the
//! exercise, its plan, what its runs run, the bench they are made on), and
//! the decisions the stages have in common about each run: how it uses the
//! GPU ([`using`]), and that a run a batch made stands only as a pass
//! ([`pass_or_alone`]).

use kernels::catalogue::ExerciseId;

use crate::grade::hosts::Hosts;
use crate::plan::demands::Demand;
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::Shortfall;
use crate::record::results::Run;
use crate::run::bench::Bench;
use crate::run::lane::Use;

/// One exercise's grading, as its stages share it.
pub struct Dispatch<'a> {
    pub exercise: ExerciseId,
    /// The kernels run on the CPU emulator: capped plans, its findings,
    /// nothing timed.
    pub emulate: bool,
    pub plan: &'a [plan::Run],
    /// Per planned run: why it does not fit the node now (above 2^31
    /// elements), None where it does.
    pub short: &'a [Option<Shortfall>],
    /// Whether the kernel's PTX shows what the exercise is about, so that
    /// its runs can earn their points.
    pub counts: bool,
    pub hosts: Hosts,
    pub bench: Bench<'a>,
}

/// The run a batch `made`, `judged`, where that is a pass; otherwise the
/// run made again in a process of its own (`alone`), whose verdict stands
/// whatever it is: a failing verdict never comes from a batch.
pub fn pass_or_alone<M>(
    made: Option<M>,
    judged: impl Fn(M) -> Run,
    alone: impl FnOnce() -> M,
) -> Run {
    match made.map(&judged) {
        Some(run) if run.verdict.passed() => run,
        _ => judged(alone()),
    }
}

/// Whether the exercise's verdicts read how its streams overlap in time:
/// its runs are timed, and keep the driver's several work queues per
/// context (`sandbox::ONE_WORK_QUEUE`).
pub fn reads_overlap(exercise: ExerciseId) -> bool {
    crate::plan::exercise::demands(exercise).contains(&Demand::OverlapInTime)
}

/// How the canary's run in the course's binary uses the GPU: its result is
/// all the grader reads of it (`plan::exercise::canary_agrees`), never a
/// time, so it shares the GPU at every run, timed ones included, and a run
/// above 2^31 elements reserves its memory.
pub fn canary_using(run: &plan::Run) -> Use {
    if run.memory > 0 {
        Use::Memory(run.memory)
    } else {
        Use::Shared
    }
}

/// How a planned run made in `role` uses the GPU. Where its verdict reads
/// a time, alone while it times: for the course's binary, the speed
/// point's run and streams' runs (whose feedback shows the overlap), which
/// say when through the timing gate (`run::gate`); for the student's own
/// binary, whose host code could say anything, streams' run whose overlap
/// in time the judge asks (`plan::exercise::overlap_timed_at`), alone for
/// the whole process. The student's binary at streams' other run, 5 GiB
/// of host memory and seconds of process, reads no time and shares the
/// GPU for long, so no run waiting to be alone waits behind it; at the
/// speed point's run it reads no time either (the speed point is the
/// kernel's, in the course's binary) and shares. A run above 2^31
/// elements, which no timed run is, would be alone rather than share the
/// node's memory unreserved; otherwise such a run reserves its memory, and
/// the others share. On the CPU emulator nothing is timed.
pub fn using(exercise: ExerciseId, run: &plan::Run, role: Role, emulate: bool) -> Use {
    let overlap = reads_overlap(exercise);
    let timed = match role {
        Role::KernelInCourseHost => run.timed || overlap,
        Role::StudentHost => crate::plan::exercise::overlap_timed_at(exercise, run.tag),
    };
    if emulate {
        Use::Shared
    } else if timed && role == Role::KernelInCourseHost && run.memory == 0 {
        Use::Gated
    } else if timed {
        Use::Alone
    } else if run.memory > 0 {
        Use::Memory(run.memory)
    } else if overlap && role == Role::StudentHost {
        Use::SharedLong
    } else {
        Use::Shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::outcome::{Failure, Skip, Verdict};
    use crate::record::results;

    #[test]
    fn a_batch_s_run_stands_only_as_a_pass_and_a_remade_one_whatever_it_is() {
        let plan = crate::plan::exercise::plan(ExerciseId::DotSm, 1);
        // A made run stands for its verdict here: Some(failure) or a pass.
        let judged = |failure: Option<Failure>| {
            let mut run = results::skipped(
                "dot-sm",
                &plan[0],
                Skip::Emulator {
                    too_slow: String::new(),
                },
            );
            run.verdict = match failure {
                None => Verdict::Passed,
                Some(failure) => Verdict::Failed { failure },
            };
            run
        };
        let remade = std::cell::Cell::new(0);
        let alone = |failure: Option<Failure>| {
            let remade = &remade;
            move || {
                remade.set(remade.get() + 1);
                failure
            }
        };
        let wrong = || Some(Failure::CpuAnswer);
        // A pass from the batch stands; nothing is made again.
        let run = pass_or_alone(Some(None), judged, alone(wrong()));
        assert_eq!((run.verdict.passed(), remade.get()), (true, 0));
        // A failure from the batch is made again alone, and the remade
        // verdict stands, a pass or a failure.
        let run = pass_or_alone(Some(wrong()), judged, alone(None));
        assert_eq!((run.verdict.passed(), remade.get()), (true, 1));
        let run = pass_or_alone(Some(wrong()), judged, alone(wrong()));
        assert_eq!(
            (run.verdict.clone(), remade.get()),
            (judged(wrong()).verdict, 2)
        );
        // No run from the batch: made alone.
        let run = pass_or_alone(None, judged, alone(None));
        assert_eq!((run.verdict.passed(), remade.get()), (true, 3));
    }

    #[test]
    fn runs_whose_verdict_reads_a_time_have_the_gpu_alone_and_large_runs_reserve_memory() {
        for exercise in kernels::catalogue::EXERCISES {
            let id = ExerciseId::from_name(exercise.name).unwrap();
            // Only streams' runs keep the driver's several work queues.
            assert_eq!(reads_overlap(id), id == ExerciseId::StreamsOverlap, "{id}");
            for run in crate::plan::exercise::plan(id, 7) {
                let overlap = id == ExerciseId::StreamsOverlap;
                // No timed run is above 2^31: the gate would let it share
                // the node's memory unreserved.
                assert!(
                    !(run.timed || overlap) || run.memory == 0,
                    "{id} {}",
                    run.tag
                );
                for role in [Role::KernelInCourseHost, Role::StudentHost] {
                    let want = match role {
                        // The course's binary, alone while it times.
                        Role::KernelInCourseHost if run.timed || overlap => Use::Gated,
                        // The student's, alone throughout where its
                        // overlap is timed: never a gate.
                        Role::StudentHost if overlap && run.tag == plan::Tag::UnevenChunks => {
                            Use::Alone
                        }
                        // Its other run, past the grid: long, untimed.
                        Role::StudentHost if overlap => Use::SharedLong,
                        _ if run.memory > 0 => Use::Memory(run.memory),
                        // The student's binary at the speed point's run too.
                        _ => Use::Shared,
                    };
                    assert_eq!(
                        using(id, &run, role, false),
                        want,
                        "{id} {} {role:?}",
                        run.tag
                    );
                    // Nothing is timed on the emulator.
                    let emulated = using(id, &run, role, true);
                    assert_eq!(emulated, Use::Shared, "{id} {}", run.tag);
                }
            }
        }
    }
}
