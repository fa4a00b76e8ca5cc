//! What an instructor chose when packaging an autograder (`grader
//! autograder gradescope|prairielearn`): the platform, the exercises an
//! upload is graded on, who sees what, the time the platform allows, and
//! the test plan's seed, if fixed. Written as `autograder.json` into the
//! package and read by every grading; the installed copy is open to root
//! alone, since a fixed seed is never shown to a student.

use std::path::Path;

use kernels::catalogue::ExerciseId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The file's name in the package and in the installed autograder.
pub const FILE: &str = "autograder.json";

/// The uid and gid student code runs as where bubblewrap cannot: no
/// account of a Debian or Ubuntu image has them (system accounts stop at
/// 999, people's start at 1000), and setup.sh names them
/// `cuda-course-student`.
pub const STUDENT_ID: u32 = 61_000;

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Gradescope,
    Prairielearn,
}

/// When Gradescope shows a test (its `visibility` values).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Visibility {
    Visible,
    AfterDueDate,
    AfterPublished,
    Hidden,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub platform: Platform,
    /// What an upload is graded on, in course order; one for a loose
    /// kernel.cu and main.rs to be taken as that exercise's.
    pub exercises: Vec<ExerciseId>,
    /// Gradescope: when the students see the tests (the submission check
    /// is always shown).
    pub visibility: Visibility,
    /// Gradescope: when they see what run_autograder printed.
    pub stdout_visibility: Visibility,
    /// A fixed test plan seed, never shown; None: a fresh one for every
    /// grading, shown in the commands that repeat each run.
    pub seed: Option<u64>,
    /// Seconds the platform gives a grading; the grader stops in time to
    /// write its results within them.
    pub time_limit: u64,
    /// Seconds one run of the student's code may take.
    pub run_timeout: u64,
    /// Seconds the student's build may take.
    pub build_timeout: u64,
    /// The uid and gid student code runs as where bubblewrap cannot.
    pub student: u32,
}

impl Settings {
    /// Reads and checks `dir/autograder.json`.
    pub fn load(dir: &Path) -> Result<Settings> {
        let path = dir.join(FILE);
        let text = std::fs::read_to_string(&path).map_err(Error::io(&path))?;
        let settings: Settings = serde_json::from_str(&text).map_err(|err| Error::Malformed {
            path: path.clone(),
            why: err.to_string(),
        })?;
        settings
            .check()
            .map_err(|why| Error::Malformed { path, why })?;
        Ok(settings)
    }

    /// The settings as the package's file holds them.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("settings are JSON") + "\n"
    }

    /// What makes settings unusable, in words.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.exercises.is_empty() {
            return Err("no exercise to grade: name at least one".into());
        }
        if self.student == 0 {
            return Err("student code never runs as root: give another uid".into());
        }
        // The runs' and the build's timeouts, and the grader's own steps,
        // must fit in what the platform gives.
        let least = self.build_timeout + self.run_timeout + MARGIN;
        if self.time_limit < least {
            return Err(format!(
                "a time limit of {} s leaves no room for a {} s build, a {} s run and {MARGIN} s \
                 to write the results: give at least {least} s",
                self.time_limit, self.build_timeout, self.run_timeout
            ));
        }
        Ok(())
    }

    /// Seconds the grading may take before the grader stops it, to write
    /// its results while the platform still waits.
    pub fn deadline(&self) -> u64 {
        self.time_limit.saturating_sub(MARGIN)
    }
}

/// Seconds kept back from the platform's limit for writing the results.
pub const MARGIN: u64 = 30;

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            platform: Platform::Gradescope,
            exercises: vec![ExerciseId::DotSm],
            visibility: Visibility::AfterDueDate,
            stdout_visibility: Visibility::Hidden,
            seed: Some(7),
            time_limit: 600,
            run_timeout: 60,
            build_timeout: 240,
            student: STUDENT_ID,
        }
    }

    #[test]
    fn settings_read_back_as_written_and_refuse_what_cannot_work() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), settings().to_json()).unwrap();
        assert_eq!(Settings::load(dir.path()).unwrap(), settings());
        let text = settings().to_json();
        assert!(text.contains("\"after_due_date\""), "{text}");
        assert!(text.contains("\"dot-sm\""), "{text}");

        let none = Settings {
            exercises: vec![],
            ..settings()
        };
        assert!(none.check().unwrap_err().contains("no exercise"));
        let tight = Settings {
            time_limit: 200,
            ..settings()
        };
        assert!(tight.check().unwrap_err().contains("at least 330 s"));
        std::fs::write(dir.path().join(FILE), "{\"platform\": \"moodle\"}").unwrap();
        assert!(Settings::load(dir.path()).is_err());
    }
}
