//! `grader build`: the seed (a fresh one, or the class's when some
//! students are rebuilt), the bundle built with progress told to the
//! caller, and what the build found said on the terminal.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use kernels::catalogue::ExerciseId;

use crate::build::bundle::{self, Bundle, Item, Progress, Request};
use crate::confine::sandbox::Isolation;
use crate::error::{Error, Result};

/// What `grader build` was asked.
pub struct Options<'a> {
    pub course: &'a Path,
    pub submissions: &'a Path,
    pub bundle: &'a Path,
    /// All when empty.
    pub exercises: &'a [ExerciseId],
    /// All when empty; with some, everyone else's items and the class's
    /// seed are kept from the bundle there.
    pub students: &'a [String],
    /// The test plans' seed; a fresh one when None.
    pub seed: Option<u64>,
    pub jobs: Option<usize>,
    pub target: Option<&'a Path>,
    pub isolation: &'a Isolation,
    pub build_timeout: Duration,
}

/// How far `grader build` is.
pub enum Step<'a> {
    /// About to build `submissions`, with this seed.
    Seeded { seed: u64, submissions: &'a Path },
    /// The bundle's own progress.
    Bundle(&'a Progress<'a>),
}

/// Builds the bundle and says what it found.
pub fn build(options: Options, progress: &dyn Fn(Step)) -> Result<Bundle> {
    // Regrading some students: the rest of the bundle, and its seed, stay.
    let earlier = if options.students.is_empty() || !options.bundle.join("bundle.json").exists() {
        None
    } else {
        Some(bundle::load(options.bundle)?)
    };
    let seed = seed(options.seed, earlier.as_ref().map(|b| b.seed))?.unwrap_or_else(fresh_seed);
    say_if_unsandboxed(options.isolation);
    progress(Step::Seeded {
        seed,
        submissions: options.submissions,
    });
    let bundle_progress = |step: &Progress| progress(Step::Bundle(step));
    let built = bundle::build(Request {
        course: options.course,
        submissions: options.submissions,
        bundle: options.bundle,
        exercises: options.exercises,
        students: options.students,
        earlier,
        seed,
        jobs: options.jobs,
        target: options.target,
        isolation: options.isolation,
        build_timeout: options.build_timeout,
        progress: &bundle_progress,
    })?;
    // Those built now: with --student, the others' items are the earlier
    // build's.
    let fresh: Vec<Item> = built
        .items
        .iter()
        .filter(|i| options.students.is_empty() || options.students.contains(&i.student))
        .cloned()
        .collect();
    for line in submission_problems(&fresh) {
        eprintln!("grader: {line}");
    }
    eprintln!(
        "grader: built {} into {} (seed {seed}): {}",
        options.submissions.display(),
        options.bundle.display(),
        build_counts(&fresh)
    );
    Ok(built)
}

fn fresh_seed() -> u64 {
    fastrand::u64(..)
}

/// The seed to build with: the one given, else the earlier batch's; a
/// given seed that differs from the earlier batch's is an error, since one
/// results.json holds one seed.
pub fn seed(given: Option<u64>, earlier: Option<u64>) -> Result<Option<u64>> {
    match (given, earlier) {
        (Some(given), Some(earlier)) if given != earlier => Err(Error::Usage(format!(
            "--seed {given}: the class was graded with seed {earlier}; regrade some students \
             with that seed (leave --seed out), or grade the whole class again"
        ))),
        (Some(given), _) => Ok(Some(given)),
        (None, earlier) => Ok(earlier),
    }
}

/// Said once per command, before any student code is touched.
pub fn say_if_unsandboxed(isolation: &Isolation) {
    if !isolation.is_sandboxed() {
        eprintln!("grader: warning: --no-sandbox: student code builds and runs with your rights");
    }
}

/// What the build says about a bundle's items: exercises submitted, how
/// many did not build, how many were not submitted; nobody's missing work
/// is counted as built or failed.
pub fn build_counts(items: &[Item]) -> String {
    let students: BTreeSet<&str> = items.iter().map(|i| i.student.as_str()).collect();
    let submitted = items.iter().filter(|i| i.absent.is_none()).count();
    let unbuilt = items
        .iter()
        .filter(|i| i.absent.is_none() && i.build_errors.is_some())
        .count();
    format!(
        "{} students, {submitted} exercises submitted, {unbuilt} did not build, {} not submitted",
        students.len(),
        items.len() - submitted
    )
}

/// Each student's problems with their submission, once per student, as
/// lines for the terminal.
pub fn submission_problems(items: &[Item]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    items
        .iter()
        .filter(|i| seen.insert(i.student.as_str()))
        .flat_map(|i| i.problems.iter().map(|p| format!("{}: {p}", i.student)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_other_than_the_class_s_is_refused() {
        assert_eq!(seed(None, Some(4)).unwrap(), Some(4));
        assert_eq!(seed(Some(4), Some(4)).unwrap(), Some(4));
        assert_eq!(seed(Some(5), None).unwrap(), Some(5));
        let err = seed(Some(5), Some(4)).unwrap_err();
        assert!(
            matches!(&err, Error::Usage(why) if why.contains("graded with seed 4")),
            "{err}"
        );
    }
}
