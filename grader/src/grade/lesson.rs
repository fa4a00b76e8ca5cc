//! The lesson point's run (`kernels::catalogue::Lesson`): the kernel in the
//! course's host code on the CPU emulator, its counters asked for, at the
//! lesson's planned run capped as the emulator caps it. On a GPU node too:
//! the emulator runs on the node's cores, beside the GPU's runs. What the
//! counts amount to is the judge's (`judge::lesson`).

use std::path::Path;

use crate::grade::dispatch::Dispatch;
use crate::judge::lesson;
use crate::judge::score::{self, Lesson};
use crate::record::results::Run;

/// The lesson point's run of `dispatch`'s exercise, made here where it can
/// be (`emulator`: the bundle's emulator library, checked against its
/// digest) and where it could earn anything: not for a kernel that lost one
/// of `runs`, its planned runs as made. None where the exercise counts no
/// lesson or its plan has no such run.
pub fn lesson(dispatch: &Dispatch, runs: &[Run], emulator: Option<&Path>) -> Option<Lesson> {
    let counted = dispatch.exercise.exercise().lesson?;
    if let Some(lost) = score::kernel_lost(runs) {
        return Some(Lesson::Judged(lesson::lost_a_run(lost)));
    }
    let mut run = (dispatch.plan.iter())
        .find(|r| r.tag == counted.run)?
        .clone();
    // The emulator's plan is capped already.
    if !dispatch.emulate {
        run.params.cap();
    }
    let (reference, ptx) = match &dispatch.hosts.kernel {
        Ok(kernel) => kernel,
        Err(reason) => return Some(Lesson::Judged(lesson::unrunnable(reason.clone()))),
    };
    let Some(emulator) = emulator else {
        let why = "the bundle's CPU emulator library could not be used (the grader's warning \
                   says why)";
        return Some(Lesson::Judged(lesson::not_counted(&run, why)));
    };
    let outcome = dispatch.bench.lesson_run(reference, ptx, &run, emulator);
    Some(Lesson::Made {
        shows: counted.shows,
        run,
        outcome,
    })
}
