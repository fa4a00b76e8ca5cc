//! One student's one exercise, dispatched: this room decides which runs an
//! exercise needs and has them made (`run::bench`), and the judge turns
//! them into verdicts and points (`judge::run`, `judge::score`), starting
//! nothing. In stages: the plan and what it could earn; the binary as it
//! was built, or nothing runs; what each role runs (`grade::hosts`); the
//! runs that go first in one process (`grade::batches`); each planned run
//! made twice, the student's PTX through the course's binary (the kernel's
//! points: host code the student did not write) and the student's own
//! binary with the tracer (the host's points), each judged as it comes
//! back (`grade::runs`); then the memory-safety point's tools
//! (`grade::tools`), the speed point's course run and the lesson point's
//! counted run on the emulator (`grade::lesson`); then the score. The
//! PTX, memory-safety and speed points go only to a kernel that passed
//! every planned run it made, and nothing earns points unless the kernel's
//! PTX shows what the exercise is about.

use std::path::Path;

use crate::build::bundle::{Bundle, Item};
use crate::build::digest;
use crate::confine::runner::Limits;
use crate::confine::sandbox::Isolation;
use crate::grade::dispatch::{Dispatch, reads_overlap};
use crate::grade::{batches, hosts, lesson, runs, tools};
use crate::judge::score::{self, Made, Speed};
use crate::plan::runs as plan;
use crate::record::outcome::{RefusedBinary, Shortfall};
use crate::record::results::Exercise;
use crate::run::bench::Bench;
use crate::run::budget::Budget;
use crate::run::lane::Lane;

/// What every exercise of a grading is graded with.
pub struct Context<'a> {
    /// The bundle and its folder.
    pub bundle: &'a Bundle,
    pub bundle_dir: &'a Path,
    pub isolation: &'a Isolation,
    pub limits: Limits,
    /// Assess the memory-safety point: compute-sanitizer on a GPU, the
    /// emulator's findings on it.
    pub sanitize: bool,
    /// The kernels run on the CPU emulator: capped plans, its findings.
    pub emulate: bool,
    /// The emulator's library, where the kernels run on it.
    pub driver: Option<&'a Path>,
    /// The bundle's emulator library, checked, wherever the kernels run:
    /// the lesson point's runs are the emulator's (`grade::lesson`).
    pub emulator: Option<&'a Path>,
    /// The GPU's lanes: which runs share it, which have it alone.
    pub lane: &'a Lane,
    /// Exercises whose host runs are made without the broker on this node.
    pub unbrokered: &'a crate::grade::preflight::Unbrokered,
}

/// Grades `item`.
pub fn grade(context: &Context, item: &Item) -> Exercise {
    let planned = crate::plan::emulated::plan(item.exercise, context.bundle.seed, context.emulate);
    let short = shortfalls(context.lane, &planned.runs);
    let inputs = inputs(
        context.bundle,
        context.bundle_dir,
        context.sanitize,
        context.emulate,
        item,
    );
    let settings = (context.sanitize, context.emulate);
    let graded = score::unmade(item, &planned.runs, &short, settings, inputs);
    let Some(binary) = &item.binary else {
        return graded;
    };
    // The binary as built, or nothing runs: a bundle changed since (by a
    // run, or by hand) is not graded.
    let found = digest::file(&context.bundle_dir.join(binary)).ok();
    if item.digest.is_none() || found != item.digest {
        let refused = RefusedBinary {
            expected: item.digest.clone(),
            found,
        };
        return Exercise {
            refused_binary: Some(refused),
            ..graded
        };
    }
    // Shared by every run, batch and tool of this exercise (`run::budget`).
    let budget = Budget::default();
    let dispatch = Dispatch {
        exercise: item.exercise,
        emulate: context.emulate,
        plan: &planned.runs,
        short: &short,
        counts: item.ptx_missing.is_empty(),
        hosts: hosts::Hosts {
            unbrokered: context.unbrokered.get(&item.exercise).cloned(),
            ..hosts::hosts(context.bundle, context.bundle_dir, item)
        },
        bench: Bench {
            isolation: context.isolation,
            limits: context.limits,
            driver: context.driver,
            lane: context.lane,
            budget: &budget,
            keeps_work_queues: reads_overlap(item.exercise),
        },
    };
    let batches = batches::make(&dispatch);
    let (runs, course) = runs::make(&dispatch, batches);
    let safety = tools::safety(&dispatch, context.sanitize, &runs);
    let speed = (dispatch.plan.iter())
        .find(|r| r.timed)
        .filter(|_| !dispatch.emulate)
        .map(|timed| Speed {
            timed,
            unrunnable: dispatch.hosts.kernel.as_ref().err().cloned(),
            course,
        });
    let lesson = lesson::lesson(&dispatch, &runs, context.emulator);
    let made = Made {
        runs,
        skipped: planned.skipped,
        safety,
        speed,
        lesson,
    };
    score::score(item.exercise, graded, made, dispatch.counts)
}

/// Whether each run above 2^31 elements fits this node, decided once for
/// the item, so that its maximum is the same whether or not anything was
/// built: per planned run, why it does not fit, None where it does.
fn shortfalls(lane: &Lane, plan: &[plan::Run]) -> Vec<Option<Shortfall>> {
    plan.iter()
        .map(|run| {
            (run.memory > 0)
                .then(|| lane.shortfall(run.memory))
                .flatten()
        })
        .collect()
}

/// The digest of what an item's grade depends on: the binary as it is now
/// and as it was built, the test plan, what the build found, and the
/// trusted code its runs go through (reference binary, PTX, tracer).
/// `sanitize` and `emulate` are the grading's settings; nothing is run.
pub fn inputs(
    bundle: &Bundle,
    bundle_dir: &Path,
    sanitize: bool,
    emulate: bool,
    item: &Item,
) -> Option<String> {
    let plan = crate::plan::emulated::plan(item.exercise, bundle.seed, emulate).runs;
    let binary = item
        .binary
        .as_ref()
        .map(|b| digest::file(&bundle_dir.join(b)).ok());
    let reference = bundle.reference.get(item.exercise.name());
    Some(digest::bytes(
        format!(
            "{binary:?}\n{:?}\n{plan:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{reference:?}\n{:?}\n{:?}\n\
             sanitize {}\ncanary {:?}\nemulator {:?}",
            item.digest,
            item.build_errors,
            item.refused,
            item.ptx_missing,
            item.absent,
            item.ptx,
            bundle.broker,
            sanitize,
            item.canary,
            bundle.emulator,
        )
        .as_bytes(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue::ExerciseId;

    #[test]
    fn a_binary_that_is_not_the_one_built_is_refused_and_not_filed_as_a_build_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        let binary = dir.path().join("bin/dot-sm--ann");
        std::fs::write(&binary, "built").unwrap();
        let built = digest::file(&binary).unwrap();
        // Changed since the build, by a run or by hand.
        std::fs::write(&binary, "changed").unwrap();
        let changed = digest::file(&binary).unwrap();
        let bundle = Bundle {
            schema_version: crate::build::bundle::BUNDLE_SCHEMA,
            seed: 1,
            reference: Default::default(),
            broker: None,
            items: vec![],
            emulator: None,
        };
        let item = Item {
            student: "ann".into(),
            exercise: ExerciseId::DotSm,
            problems: vec![],
            absent: None,
            refused: vec![],
            build_errors: None,
            binary: Some("bin/dot-sm--ann".into()),
            digest: Some(built.clone()),
            ptx_missing: vec![],
            ptx: None,
            canary: None,
        };
        let lane = Lane::new(1, None);
        let context = Context {
            bundle: &bundle,
            bundle_dir: dir.path(),
            isolation: &Isolation::Unsandboxed,
            limits: Limits {
                timeout: std::time::Duration::from_secs(1),
                max_output: 1 << 10,
            },
            sanitize: true,
            emulate: true,
            driver: None,
            emulator: None,
            lane: &lane,
            unbrokered: &Default::default(),
        };
        let graded = grade(&context, &item);
        assert_eq!(graded.build_errors, None, "it built");
        let refused = RefusedBinary {
            expected: Some(built),
            found: Some(changed),
        };
        assert_eq!(graded.refused_binary.as_ref(), Some(&refused));
        assert!(graded.runs.is_empty() && graded.points == 0);
        assert!(lane.spent().is_empty(), "nothing ran");
        // Its maximum is the exercise's, as for any binary that ran.
        let unchanged = Item {
            digest: Some(digest::file(&binary).unwrap()),
            binary: None,
            ..item.clone()
        };
        assert_eq!(graded.max_points, grade(&context, &unchanged).max_points);
        // Unreadable, or a bundle that recorded no digest: refused too.
        std::fs::remove_file(&binary).unwrap();
        let graded = grade(&context, &item);
        assert_eq!(graded.refused_binary.and_then(|r| r.found), None);
        let no_digest = Item {
            digest: None,
            ..item
        };
        let graded = grade(&context, &no_digest);
        assert_eq!(graded.refused_binary.map(|r| r.expected), Some(None));
    }
}
