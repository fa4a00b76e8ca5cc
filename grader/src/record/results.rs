//! What a grading batch found, as written to results.json: a versioned
//! schema holding every run's record with its typed outcome
//! ([`outcome`](super::outcome)), written atomically (a temporary
//! file renamed over the old one) after each student, so a killed grader
//! loses nothing already written and `--resume` can skip who is done.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::plan::runs::{self as plan, Params, Role, Tag};
use crate::record::outcome::{
    CheckName, CheckOutcome, Finding, Integrity, RefusedBinary, Skip, Tool, Verdict,
};

/// Bumped when a field changes meaning or disappears. 2: typed outcomes
/// (verdicts, findings, checks, each run's tag, arguments and role) in
/// place of rendered messages.
pub const RESULTS_SCHEMA: u32 = 2;

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
    /// The grader that graded it: its version and its binary's sha256, so
    /// that `merge` joins only shards of one grader build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grader: Option<String>,
    pub students: BTreeMap<String, Student>,
}

/// This grader: its version and the sha256 of its binary (computed once).
pub fn this_grader() -> String {
    static THIS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    THIS.get_or_init(|| {
        let binary = std::env::current_exe()
            .ok()
            .and_then(|exe| crate::build::digest::file(&exe).ok())
            .unwrap_or_else(|| "unreadable".to_owned());
        format!("{} sha256:{binary}", env!("CARGO_PKG_VERSION"))
    })
    .clone()
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

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
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
    /// The binary was built, and the grader refused to run it: the
    /// bundle's copy is not the one built, so nothing of the exercise ran.
    /// (Gradings before this field filed it under `build_errors`.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_binary: Option<RefusedBinary>,
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
    /// Evidence that contradicts the student's reports (a CPU answer):
    /// the exercise's host points are 0, and every report names it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrity: Vec<Integrity>,
    /// The first planned run the kernel lost in the course's host code:
    /// the PTX, memory-safety and speed points go only to a kernel that
    /// passes every planned run it made, so a kernel that writes a formula
    /// and never reads its inputs keeps none of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_lost: Option<Tag>,
}

impl Exercise {
    /// Why this record's points cannot be what grading `exercise` gives,
    /// recomputed from its typed outcomes; None when they can. A record
    /// edited by hand (99 points of 9, a failed run with points) reads as
    /// what it is: not the grader's.
    pub fn inflated(&self, exercise: &str) -> Option<String> {
        let full = kernels::catalogue::ExerciseId::from_name(exercise)
            .map(|id| id.exercise().full_marks().points());
        let Some(full) = full else {
            return Some(format!("{exercise} is not an exercise of the course"));
        };
        if self.max_points > full {
            return Some(format!(
                "a maximum of {} points, above the exercise's {full}",
                self.max_points
            ));
        }
        if self.points > self.max_points {
            return Some(format!(
                "{} points of {}: above the maximum",
                self.points, self.max_points
            ));
        }
        for run in &self.runs {
            if run.points > run.max_points || (run.points > 0 && !run.verdict.passed()) {
                return Some(format!(
                    "run {} has {} of {} points with the verdict {}",
                    run.tag,
                    run.points,
                    run.max_points,
                    run.verdict.kind()
                ));
            }
            if run.points > 0 && run.role == Some(Role::StudentHost) && !self.integrity.is_empty() {
                return Some(format!(
                    "run {} has host points beside an integrity flag",
                    run.tag
                ));
            }
        }
        for check in &self.checks {
            let withheld = self.kernel_lost.is_some();
            if check.points > check.max_points || (check.points > 0 && (!check.passed || withheld))
            {
                return Some(format!(
                    "check {} has {} of {} points, passed: {}",
                    check.name, check.points, check.max_points, check.passed
                ));
            }
        }
        let earned = u32::from(self.kernel_lost.is_none()) * kernels::catalogue::points::PTX
            + self.runs.iter().map(|r| r.points).sum::<u32>()
            + self.checks.iter().map(|c| c.points).sum::<u32>();
        (self.points > earned).then(|| {
            format!(
                "{} points, more than its runs and checks earned ({earned} at most)",
                self.points
            )
        })
    }
}

/// A point that is not a run's.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Check {
    pub name: CheckName,
    /// False where the point was not assessed (the outcome says why): it
    /// then counts in neither `points` nor `max_points`.
    pub assessed: bool,
    pub passed: bool,
    pub points: u32,
    pub max_points: u32,
    /// What was found, or why it earned nothing.
    pub outcome: CheckOutcome,
}

/// One compute-sanitizer run of an exercise.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Sanitized {
    pub tool: Tool,
    pub clean: bool,
    /// The tool's summary line, or why there is none.
    pub summary: String,
    /// The first hazard the tool reported, with its `kernel.cu` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// The planned run the tool ran over (absent in records made when
    /// the tools ran over the first run only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Tag>,
    /// The blocks of the run the tool went over, where not all of them
    /// (racecheck over memspace-timing's first few: `plan::memspace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
    /// The elements of the run the tool went over, where fewer than the
    /// run has (every tool over streams-overlap's uneven chunks:
    /// `plan::streams`), in the run's chunks and streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<u64>,
    /// Why the tool was not run: it could find nothing in the kernel
    /// (`run::sanitizer::not_needed`), so it is clean; or an earlier tool
    /// ran out of time, which cost the point, so it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// The tool went over all the exercise's sanitized runs in one process
    /// of the course's binary and found nothing, or ran out of time there
    /// (`run::sanitizer`); `seconds` is that process's wall time shared out
    /// evenly among them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_one_process: bool,
    /// The tool ran out of its limit, which follows the kernel's plain
    /// time (`run::sanitizer::tool_limit`): not clean, never made again,
    /// and the exercise's later tools not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub out_of_time: bool,
    /// The tool's wall time, in seconds, for the throughput budget.
    #[serde(default)]
    pub seconds: f64,
}

/// One run's record: the planned run (its tag and arguments), how it was
/// made, and what it amounts to.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Run {
    pub tag: Tag,
    /// The arguments as run (on the emulator, capped).
    pub params: Params,
    /// Who ran it: the student's kernel in the course's binary, or the
    /// student's own binary; None for a planned run left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    pub command: Vec<String>,
    /// A kernel run's PTX: the student's file in the bundle's ptx/, which
    /// the course's binary (the command's first word) loaded in place of
    /// its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptx: Option<String>,
    pub exit_code: Option<i32>,
    pub duration_ms: f64,
    pub verdict: Verdict,
    /// What the CPU emulator found in the run (it carries on past most of
    /// it, as a GPU would; see `judge::points::emulator_safety`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// The parsed JSON report, when there was one.
    pub report: Option<Value>,
    pub points: u32,
    pub max_points: u32,
    /// A run of the student's binary: how many driver calls the broker's
    /// record holds (in gradings before the broker, the tracer's trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_calls: Option<usize>,
}

impl Run {
    /// Whether the run counts as lost: not passed, and not left out.
    pub fn lost(&self) -> bool {
        !self.verdict.passed() && !matches!(self.verdict, Verdict::Skipped { .. })
    }

    /// What the run is about, in the plan's words.
    pub fn about(&self) -> String {
        plan::Run {
            tag: self.tag,
            params: self.params.clone(),
            points: self.max_points,
            memory: 0,
            timed: false,
        }
        .about()
    }

    /// The record of a planned run that was not made in `role`, and why.
    pub fn not_made(run: &plan::Run, role: Option<Role>, verdict: Verdict, max: u32) -> Run {
        Run {
            tag: run.tag,
            params: run.params.clone(),
            role,
            command: vec![],
            ptx: None,
            exit_code: None,
            duration_ms: 0.0,
            verdict,
            findings: vec![],
            report: None,
            points: 0,
            max_points: max,
            trace_calls: None,
        }
    }
}

/// The record of a planned run left out: no points either way, its own
/// kind, the command it would have been.
pub fn skipped(exercise: &str, run: &plan::Run, reason: Skip) -> Run {
    let mut command = vec![exercise.to_owned()];
    command.extend(run.args());
    Run {
        command,
        ..Run::not_made(run, None, Verdict::Skipped { reason }, 0)
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
            grader: Some(this_grader()),
            students: BTreeMap::new(),
        }
    }

    /// Reads results.json; a file of another schema version is an error
    /// that says so, and what to do.
    pub fn load(path: &Path) -> Result<Results> {
        let results = Results::load_unverified(path)?;
        for (name, student) in &results.students {
            for (exercise, graded) in &student.exercises {
                if let Some(why) = graded.inflated(exercise) {
                    return Err(Error::Malformed {
                        path: path.to_owned(),
                        why: format!(
                            "{name}'s {exercise}: {why}; this record is not the grader's (regrade \
                             with `grader run --resume`, which grades it again)"
                        ),
                    });
                }
            }
        }
        Ok(results)
    }

    /// Loads results.json without checking its records' points: for
    /// `--resume`, which grades again every record that does not check.
    pub fn load_unverified(path: &Path) -> Result<Results> {
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
        use crate::plan::disagreement::Disagreement;
        use crate::plan::dot;
        use crate::record::outcome::*;
        use kernels::trace_record::Direction;
        let mut results = Results::new(42);
        let planned = crate::plan::exercise::plan(kernels::catalogue::ExerciseId::DotSm, 42);
        let made = |verdict, role| Run {
            command: vec!["dot-sm--ann".into(), "--n".into(), "1000".into()],
            exit_code: Some(0),
            duration_ms: 812.5,
            report: Some(serde_json::json!({"check": {"passed": true}})),
            ..Run::not_made(&planned[0], Some(role), verdict, 1)
        };
        let runs = vec![
            Run {
                points: 1,
                ..made(Verdict::Passed, Role::KernelInCourseHost)
            },
            made(
                Verdict::Failed {
                    failure: Failure::Disagrees {
                        disagreement: Disagreement::Dot {
                            got: 1.5,
                            exact: "12345678901234567890".into(),
                            error: 0.25,
                            limit: 1e-6,
                        },
                    },
                },
                Role::StudentHost,
            ),
            Run {
                findings: vec![Finding {
                    kind: FindingKind::SharedMemoryRace,
                    line: Some(41),
                    text: "shared-memory race in kernel `dot`".into(),
                }],
                ..made(
                    Verdict::Failed {
                        failure: Failure::Trace {
                            evidence: Evidence::Pageable {
                                direction: Direction::HostToDevice,
                                copies: 2,
                            },
                        },
                    },
                    Role::StudentHost,
                )
            },
            skipped(
                "dot-sm",
                &planned[2],
                Skip::Memory {
                    shortfall: Shortfall::Short {
                        of: Memory::Gpu,
                        need: 40 << 30,
                        have: 8 << 30,
                    },
                },
            ),
        ];
        assert!(matches!(runs[0].params, Params::Dot(dot::Params { .. })));
        let exercise = Exercise {
            refused: vec![],
            build_errors: None,
            refused_binary: None,
            ptx_missing: vec![],
            runs,
            points: 3,
            max_points: 3,
            sanitizer: vec![Sanitized {
                tool: Tool::Racecheck,
                clean: true,
                summary: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".into(),
                finding: None,
                run: None,
                blocks: None,
                elements: None,
                not_run: None,
                in_one_process: false,
                out_of_time: false,
                seconds: 0.0,
            }],
            checks: vec![Check {
                name: CheckName::Speed,
                assessed: true,
                passed: true,
                points: 1,
                max_points: 1,
                outcome: CheckOutcome::Measured {
                    run: planned[2].tag,
                    theirs_ms: 0.2,
                    course_ms: 0.19,
                    fraction: 0.95,
                    asks: 0.5,
                },
            }],
            inputs: None,
            absent: None,
            integrity: vec![],
            kernel_lost: None,
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
    fn outcomes_are_tagged_in_json_by_what_they_are() {
        let json = serde_json::to_value(sample()).unwrap();
        let runs = &json["students"]["ann"]["exercises"]["dot-sm"]["runs"];
        assert_eq!(runs[0]["verdict"], serde_json::json!({"kind": "passed"}));
        assert_eq!(runs[0]["role"], "kernel-in-course-host");
        assert_eq!(runs[0]["tag"], "one-element");
        assert_eq!(runs[0]["params"]["family"], "dot");
        assert_eq!(runs[1]["verdict"]["failure"]["why"], "disagrees");
        assert_eq!(runs[1]["verdict"]["failure"]["disagreement"]["kind"], "dot");
        assert_eq!(
            runs[2]["verdict"]["failure"]["evidence"]["direction"],
            "host-to-device"
        );
        assert_eq!(runs[2]["findings"][0]["kind"], "shared-memory-race");
        assert_eq!(runs[3]["verdict"]["reason"]["shortfall"]["of"], "gpu");
        assert!(runs[3].get("role").is_none());
        let check = &json["students"]["ann"]["exercises"]["dot-sm"]["checks"][0];
        assert_eq!(
            (&check["name"], &check["outcome"]["why"]),
            (&"speed".into(), &"measured".into())
        );
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
        let reason = Skip::Emulator {
            too_slow: "it takes minutes".into(),
        };
        let record = skipped("vecadd-anyN", run, reason.clone());
        assert_eq!(record.verdict, Verdict::Skipped { reason });
        assert!(!record.verdict.passed() && record.max_points == 0 && record.points == 0);
        assert_eq!((record.tag, record.role), (run.tag, None));
        assert_eq!(record.command[0], "vecadd-anyN");
        assert_eq!(record.command[1..], run.args()[..]);
        assert_eq!(record.about(), run.about());
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
