//! The lesson point's run (`kernels::catalogue::Lesson`): the kernel in the
//! course's host code on the CPU emulator, its counters asked for, at the
//! lesson's planned run capped as the emulator caps it. On a GPU node too:
//! the emulator runs on the node's cores, beside the GPU's runs. What the
//! counts amount to is the judge's (`judge::lesson`).

use std::path::Path;

use crate::grade::dispatch::Dispatch;
use crate::judge::lesson;
use crate::judge::score::Lesson;

/// The lesson point's run of `dispatch`'s exercise, made here where it can
/// be (`emulator`: the bundle's emulator library, checked against its
/// digest); None where the exercise counts no lesson or its plan has no
/// such run.
pub fn lesson(dispatch: &Dispatch, emulator: Option<&Path>) -> Option<Lesson> {
    let counted = dispatch.exercise.exercise().lesson?;
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
        let why = "the bundle carries no CPU emulator library";
        return Some(Lesson::Judged(lesson::not_counted(&run, why)));
    };
    let outcome = dispatch.bench.lesson_run(reference, ptx, &run, emulator);
    Some(Lesson::Made {
        shows: counted.shows,
        run,
        outcome,
    })
}
