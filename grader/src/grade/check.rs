//! `grader check`: a student's own exercise graded as a class of one, with
//! the grader's runs and the feedback it would give, before they submit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kernels::catalogue::ExerciseId;

use crate::build::command::{self, Options};
use crate::confine::sandbox::Isolation;
use crate::error::{Error, Result};
use crate::grade::command::{Progress, Run, Running};
use crate::record::results::Student;

/// The student's graded exercise, and the feedback they read.
pub struct Checked {
    pub student: Student,
    pub feedback: String,
}

/// What `grader check` is asked: the exercise in `folder` (default:
/// exercises/EXERCISE of the course), graded with `seed` or a fresh one.
pub struct Check<'a> {
    pub course: &'a Path,
    pub exercise: ExerciseId,
    pub folder: Option<PathBuf>,
    pub running: Running,
    pub isolation: Isolation,
    pub seed: Option<u64>,
}

/// Builds and grades the exercise, telling the build's and the run's
/// progress to the callers.
pub fn check(
    check: Check,
    built: &dyn Fn(command::Step),
    graded: &mut dyn FnMut(Progress),
) -> Result<Checked> {
    let Check {
        course,
        exercise,
        folder,
        running,
        isolation,
        seed,
    } = check;
    let emulate = crate::grade::command::device(&running)?;
    let folder = folder.unwrap_or_else(|| course.join("exercises").join(exercise.name()));
    let work = course.join("target").join("grader-check");
    let class = work.join("submission").join("you");
    // The class of one: a copy of the student's exercise under their name.
    let _ = std::fs::remove_dir_all(work.join("submission"));
    copy_exercise(&folder, &class.join(exercise.name())).map_err(Error::io(&folder))?;
    command::build(
        Options {
            course,
            submissions: &work.join("submission"),
            bundle: &work.join("bundle"),
            exercises: &[exercise],
            students: &[],
            seed,
            jobs: None,
            // Where the grader's own tests keep the class dependencies too
            // (cargo's CARGO_TARGET_TMPDIR), so they compile once there.
            target: Some(&course.join("target").join("tmp").join("grader-deps")),
            isolation: &isolation,
            build_timeout: Duration::from_secs(300),
        },
        built,
    )?;
    let mut results = crate::grade::command::run(
        Run {
            bundle: &work.join("bundle"),
            out: &work.join("grading"),
            running,
            isolation,
            students: vec![],
            shard: None,
            gpus: None,
            emulate,
        },
        graded,
    )?;
    let student = results
        .students
        .remove("you")
        .ok_or_else(|| Error::Usage(format!("{} held no exercise", folder.display())))?;
    let feedback = crate::record::reports::feedback("you", &student, results.seed)
        + &crate::record::reports::emulated(&results);
    Ok(Checked { student, feedback })
}

/// Copies an exercise's src/ (the overlay takes nothing else). Links are
/// copied as links, so that check refuses them as grading would.
fn copy_exercise(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to.join("src"))?;
    for entry in std::fs::read_dir(from.join("src"))? {
        let entry = entry?;
        let copy = to.join("src").join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, copy)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), copy)?;
        }
    }
    Ok(())
}
