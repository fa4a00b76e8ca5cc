//! What a grading batch found, as written to results.json: a versioned
//! schema holding every run's raw record, written atomically (a temporary
//! file renamed over the old one) after each student, so a killed grader
//! loses nothing already written and `--resume` can skip who is done.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::plan::runs as plan;

/// Bumped when a field changes meaning or disappears.
pub const RESULTS_SCHEMA: u32 = 1;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    pub schema_version: u32,
    /// The seed the test plans were drawn from: a regrade with it repeats
    /// every run.
    pub seed: u64,
    /// How student code was confined: the sandbox, or `None` when it was
    /// run with `--no-sandbox`, which every report then says.
    #[serde(default)]
    pub sandbox: Option<String>,
    /// Only in a shard's results (`grader run --shard`): which shard of
    /// which bundle, for `grader merge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// The kernels ran on the CPU emulator (`--emulate`), at its capped
    /// sizes: every report says so.
    #[serde(default)]
    pub emulated: bool,
    pub students: BTreeMap<String, Student>,
}

/// What a shard's results.json says of the shard: which one it is, of
/// which bundle, and whom it must hold.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ShardRecord {
    /// K of K/N, from 1.
    pub index: u32,
    /// N of K/N.
    pub count: u32,
    /// The sha256 of the bundle's bundle.json: shards of one bundle.
    pub bundle: String,
    /// The students of this slice, sorted: the shard is complete when its
    /// results hold them all.
    pub students: Vec<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Student {
    /// Problems with the submission as a whole (two copies of an exercise,
    /// links).
    pub problems: Vec<String>,
    pub exercises: BTreeMap<String, Exercise>,
}

impl Student {
    pub fn points(&self) -> (u32, u32) {
        self.exercises
            .values()
            .fold((0, 0), |(got, max), e| (got + e.points, max + e.max_points))
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Exercise {
    /// Files not taken from the submission, and why.
    pub refused: Vec<String>,
    /// The build's errors, when it failed: nvcc's or rustc's.
    pub build_errors: Option<String>,
    /// What the PTX lacks of what the exercise is about; empty when it has it all.
    pub ptx_missing: Vec<String>,
    pub runs: Vec<Run>,
    pub points: u32,
    pub max_points: u32,
    /// What compute-sanitizer found, per tool (none with --no-sanitize).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sanitizer: Vec<Sanitized>,
    /// The points that are not a run's: memory safety, speed. Their
    /// points are in `points` and `max_points` only where assessed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// sha256 of what was graded: the binary's digest and the test plan;
    /// `--resume` regrades the exercise when they differ.
    #[serde(default)]
    pub inputs: Option<String>,
    /// Why nothing was graded, when the student did not submit it (not
    /// found, or two differing copies): grades.csv leaves its cell blank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
}

/// A point that is not a run's.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Check {
    /// [`MEMORY_SAFETY`] or [`SPEED`].
    pub name: String,
    /// False where the point was not assessed (the message says why): it
    /// then counts in neither `points` nor `max_points`.
    pub assessed: bool,
    pub passed: bool,
    pub points: u32,
    pub max_points: u32,
    /// What was found, for the student.
    pub message: String,
}

/// compute-sanitizer's memcheck and racecheck found nothing.
pub const MEMORY_SAFETY: &str = "memory safety";
/// The kernel reached a fraction of the course's kernel's speed.
pub const SPEED: &str = "speed";

/// One compute-sanitizer run of an exercise.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Sanitized {
    /// memcheck or racecheck.
    pub tool: String,
    pub clean: bool,
    /// The tool's summary line, or why there is none.
    pub summary: String,
    /// The first hazard the tool reported, with its `kernel.cu` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
}

/// One run's raw record.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Run {
    pub about: String,
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    pub duration_ms: f64,
    pub verdict: Verdict,
    /// The parsed JSON report, when there was one.
    pub report: Option<Value>,
    pub points: u32,
    pub max_points: u32,
    /// A kernel run: the file name of the student's PTX, which the course's
    /// reference binary (the command's first word) loaded in place of its
    /// own. Absent for a run of the student's own binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_ptx: Option<String>,
    /// A run of the student's binary: how many driver calls its trace
    /// recorded (the tracer was preloaded and its pipe read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_calls: Option<usize>,
}

/// A verdict as results.json keeps it.

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Verdict {
    pub passed: bool,
    /// "passed", "failed", "timed-out", ...: one word to sort and count by.
    pub kind: String,
    /// The explanation a student reads.
    pub message: String,
}

/// The verdict kind of a planned run left out (on the emulator, or where
/// the node lacks the memory it needs).
pub const SKIPPED: &str = "skipped";

/// The record of a run left out: no points either way, its own kind.
pub fn skipped(exercise: &str, run: &plan::Run, why: &str) -> Run {
    let mut command = vec![exercise.to_owned()];
    command.extend(run.args());
    Run {
        about: run.about(),
        command,
        exit_code: None,
        duration_ms: 0.0,
        verdict: Verdict {
            passed: false,
            kind: SKIPPED.to_owned(),
            message: why.to_owned(),
        },
        report: None,
        points: 0,
        max_points: 0,
        kernel_ptx: None,
        trace_calls: None,
    }
}

impl Results {
    pub fn new(seed: u64) -> Results {
        Results {
            schema_version: RESULTS_SCHEMA,
            seed,
            sandbox: None,
            shard: None,
            emulated: false,
            students: BTreeMap::new(),
        }
    }

    /// Reads results.json; a file of another schema version is an error
    /// that says so, and what to do.
    pub fn load(path: &Path) -> Result<Results> {
        let text = fs::read_to_string(path).map_err(Error::io(path))?;
        let value: Value = serde_json::from_str(&text).map_err(|err| Error::Malformed {
            path: path.to_owned(),
            why: format!("not JSON: {err}"),
        })?;
        let found = value["schema_version"].as_u64();
        if found != Some(u64::from(RESULTS_SCHEMA)) {
            return Err(Error::Schema {
                path: path.to_owned(),
                found,
                want: RESULTS_SCHEMA,
                what: "grade the bundle again with this grader, or report it with the grader \
                       that wrote it",
            });
        }
        serde_json::from_value(value).map_err(|err| Error::Malformed {
            path: path.to_owned(),
            why: err.to_string(),
        })
    }

    /// Writes to `path` atomically: all of the new file or none of it.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).expect("results are JSON");
        crate::atomic_file::write(path, text.as_bytes()).map_err(Error::io(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Results {
        let mut results = Results::new(42);
        let run = Run {
            about: "n = 1000".into(),
            command: vec![
                "dot-sm--ann".into(),
                "--n".into(),
                "1000".into(),
                "--json".into(),
            ],
            exit_code: Some(0),
            duration_ms: 812.5,
            verdict: Verdict {
                passed: true,
                kind: "passed".into(),
                message: "passed".into(),
            },
            report: Some(serde_json::json!({"check": {"passed": true}})),
            points: 2,
            max_points: 2,
            kernel_ptx: None,
            trace_calls: None,
        };
        let exercise = Exercise {
            refused: vec![],
            build_errors: None,
            ptx_missing: vec![],
            runs: vec![run],
            points: 3,
            max_points: 3,
            sanitizer: vec![],
            checks: vec![],
            inputs: None,
            absent: None,
        };
        results.students.insert(
            "ann".into(),
            Student {
                problems: vec![],
                exercises: BTreeMap::from([("dot-sm".into(), exercise)]),
            },
        );
        results
    }

    #[test]
    fn results_survive_a_save_and_a_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/results.json");
        sample().save(&path).unwrap();
        assert_eq!(Results::load(&path).unwrap(), sample());
        assert_eq!(sample().students["ann"].points(), (3, 3));
        // Nothing temporary is left beside it.
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn a_skipped_run_is_its_own_kind_with_no_points_either_way() {
        let run = &crate::plan::exercise::plan(kernels::catalogue::ExerciseId::VecaddAnyN, 3)[0];
        let record = skipped("vecadd-anyN", run, "skipped here");
        assert_eq!(record.verdict.kind, SKIPPED);
        assert!(!record.verdict.passed && record.max_points == 0 && record.points == 0);
        assert_eq!(record.verdict.message, "skipped here");
        assert_eq!(record.command[0], "vecadd-anyN");
        assert_eq!(record.command[1..], run.args()[..]);
    }

    #[test]
    fn another_schema_version_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        fs::write(&path, r#"{"schema_version": 7}"#).unwrap();
        let err = Results::load(&path).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Schema {
                    found: Some(7),
                    want: RESULTS_SCHEMA,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("schema_version 7; this grader reads")
        );
    }
}
