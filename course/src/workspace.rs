//! The course workspace on disk: where it is, which steps of an exercise are
//! still to write, and what the last check found.

use std::fs;
use std::path::{Path, PathBuf};

use kernels::catalogue::{self, EXERCISES, Exercise, Progress};
use kernels::units::counted;

/// Why a verb could not do what was asked.
#[derive(Debug)]
pub enum Problem {
    /// The student asked for something that does not exist (exit 2).
    BadInput(String),
    /// Something the command needed failed (exit 1).
    Failed(String),
}

/// The exercise of this name, or exit 2 naming the ones there are.
pub fn exercise(name: &str) -> Result<&'static Exercise, Problem> {
    catalogue::find(name).ok_or_else(|| {
        Problem::BadInput(format!(
            "there is no exercise {name:?}; the exercises are: {}",
            catalogue::names()
        ))
    })
}

/// A course workspace: its root holds `Cargo.toml` and `exercises/`.
pub struct Workspace {
    pub root: PathBuf,
}

impl Workspace {
    /// `root` if given, else the nearest folder at or above the current one
    /// that holds a course.
    pub fn find(root: Option<PathBuf>) -> Result<Workspace, Problem> {
        if let Some(root) = root {
            return Ok(Workspace { root });
        }
        let here = std::env::current_dir()
            .map_err(|err| Problem::Failed(format!("cannot read the current folder: {err}")))?;
        here.ancestors()
            .find(|dir| dir.join("Cargo.toml").is_file() && dir.join("exercises").is_dir())
            .map(|dir| Workspace {
                root: dir.to_owned(),
            })
            .ok_or_else(|| {
                Problem::BadInput(format!(
                    "{} is not inside the course: run cargo course from the course's folder",
                    here.display()
                ))
            })
    }

    pub fn exercise_dir(&self, exercise: &Exercise) -> PathBuf {
        self.root.join("exercises").join(exercise.name)
    }

    /// Where cargo builds: `CARGO_TARGET_DIR` if set, else `target/`.
    pub fn target_dir(&self) -> PathBuf {
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .map(|dir| self.root.join(dir))
            .unwrap_or_else(|| self.root.join("target"))
    }

    /// What the sources of `exercise` show of its steps.
    pub fn progress(&self, exercise: &Exercise) -> Progress {
        let dir = self.exercise_dir(exercise);
        exercise.progress(|file| fs::read_to_string(dir.join(file.path())).unwrap_or_default())
    }

    /// The steps of `exercise` not written yet, in order.
    pub fn steps_left(&self, exercise: &Exercise) -> Vec<u32> {
        self.progress(exercise).left
    }

    /// The state of `exercise`: what the last check said if the sources have
    /// not changed since (so `list` and `next` say what `check` said), else
    /// what the sources show.
    pub fn state(&self, exercise: &Exercise) -> State {
        let left = self.steps_left(exercise);
        match self.last_check(exercise) {
            Some(Checked::Done) => State::Done,
            _ if left.len() == exercise.steps.len() => State::NotStarted,
            _ if !left.is_empty() => State::StepsLeft(left),
            Some(Checked::NotDone) => State::NotDone,
            Some(Checked::DoesNotBuild) => State::DoesNotBuild,
            None => State::Written,
        }
    }

    /// What the last `check` found, if the sources are as they were then.
    pub fn last_check(&self, exercise: &Exercise) -> Option<Checked> {
        let record = fs::read_to_string(self.record_path(exercise)).ok()?;
        let (fingerprint, outcome) = record.trim().split_once(' ')?;
        if fingerprint != self.fingerprint(exercise) {
            return None;
        }
        Checked::from_word(outcome)
    }

    /// Records what a check found, for `list` and `next`.
    pub fn record_check(&self, exercise: &Exercise, outcome: Checked) {
        let path = self.record_path(exercise);
        let record = format!("{} {}\n", self.fingerprint(exercise), outcome.word());
        // Losing the record only costs the student a re-check: not an error.
        let _ = fs::create_dir_all(path.parent().unwrap_or(Path::new(".")));
        let _ = fs::write(path, record);
    }

    fn record_path(&self, exercise: &Exercise) -> PathBuf {
        self.target_dir()
            .join("course")
            .join(format!("{}.checked", exercise.name))
    }

    /// FNV-1a over the exercise's sources, so an edit makes a record stale.
    fn fingerprint(&self, exercise: &Exercise) -> String {
        let src = self.exercise_dir(exercise).join("src");
        let mut names: Vec<PathBuf> = fs::read_dir(&src)
            .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
            .unwrap_or_default();
        names.sort();
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for path in names {
            let name = path.file_name().map(|n| n.as_encoded_bytes().to_vec());
            let bytes = [
                name.unwrap_or_default(),
                fs::read(&path).unwrap_or_default(),
            ];
            for byte in bytes.concat() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("{hash:016x}")
    }

    /// The first exercise in course order that is not done on this machine.
    pub fn next_exercise(&self) -> Option<&'static Exercise> {
        EXERCISES.iter().find(|e| self.state(e) != State::Done)
    }
}

/// What `check` concluded last time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    DoesNotBuild,
    /// It built, and check said "not done yet".
    NotDone,
    /// Check said "done".
    Done,
}

impl Checked {
    /// The record's word. ("passes", of records before a check's verdict
    /// was recorded, meant only that the run passed: read as no record.)
    fn word(self) -> &'static str {
        match self {
            Checked::DoesNotBuild => "does-not-build",
            Checked::NotDone => "not-done",
            Checked::Done => "done",
        }
    }

    fn from_word(word: &str) -> Option<Checked> {
        [Checked::DoesNotBuild, Checked::NotDone, Checked::Done]
            .into_iter()
            .find(|c| c.word() == word)
    }
}

/// Where an exercise stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Every step still to write.
    NotStarted,
    /// Some steps written; these are left.
    StepsLeft(Vec<u32>),
    /// Every step written, not checked since the last edit.
    Written,
    /// Checked: the build failed.
    DoesNotBuild,
    /// Checked: it builds, but check said it is not done (its run failed,
    /// or its kernel lacks what the exercise teaches).
    NotDone,
    /// Checked: done on this machine.
    Done,
}

impl State {
    /// A few words for `list`.
    pub fn describe(&self, exercise: &Exercise) -> String {
        let total = exercise.steps.len();
        match self {
            State::NotStarted => format!("not started ({})", counted(total, "step", "steps")),
            State::StepsLeft(left) => {
                format!("{} of {} left", left.len(), counted(total, "step", "steps"))
            }
            State::Written => "all steps written, not checked".to_owned(),
            State::DoesNotBuild => "does not build".to_owned(),
            State::NotDone => "checked, not done yet".to_owned(),
            State::Done => "done on this machine".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_exercise_names_the_valid_ones() {
        let Err(Problem::BadInput(message)) = exercise("dot-xx") else {
            panic!("dot-xx was accepted");
        };
        assert!(message.contains("vecadd-anyN, dot-gm"), "{message}");
    }
}
