//! `grader run`: grades a bundle, on a GPU node. Per student and exercise:
//! a point when the kernel's PTX shows what the exercise is about, then the
//! planned runs, each judged and, when its own check passed, rechecked
//! against the grader's closed forms. Runs earn points only when the PTX
//! point was earned, so an answer computed on the host earns nothing.
//! results.json is rewritten after every student.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bundle::{self, Bundle, Item};
use crate::digest;
use crate::plan::{self, recheck};
use crate::results::{self, Results, Student};
use crate::runner::{self, Ended, Limits};
use crate::sandbox::{self, Isolation};
use crate::sanitizer;
use crate::verdict::{self, Verdict};

#[derive(Clone)]
pub struct Settings {
    pub limits: Limits,
    /// Where the binaries run.
    pub isolation: Isolation,
    /// Skip students whose records results.json holds were graded from
    /// the same inputs (binary, plan, build outcome).
    pub resume: bool,
    /// Also run compute-sanitizer on each exercise's first run.
    pub sanitize: bool,
    /// Only these students (`--student`), every other record kept; all
    /// when empty.
    pub only: Vec<String>,
    /// Run the kernels on the bundle's CPU emulator, at its capped sizes.
    pub emulate: bool,
}

/// Grades the bundle at `bundle_dir` into `out`/results.json; `progress` is
/// told each student as they are done.
pub fn run(
    bundle_dir: &Path,
    out: &Path,
    settings: &Settings,
    mut progress: impl FnMut(&str),
) -> Result<Results, String> {
    let Pending {
        bundle,
        mut results,
        path,
        students,
        driver,
    } = prepare(bundle_dir, out, settings)?;
    for student in students {
        let graded = grade_student(bundle_dir, &bundle, &student, settings, driver.as_deref());
        results.students.insert(student.clone(), graded);
        results
            .save(&path)
            .map_err(|err| format!("{}: {err}", path.display()))?;
        progress(&student);
    }
    Ok(results)
}

/// A grading about to start: the bundle, the records kept from an earlier
/// results.json, and who is left to grade.
pub struct Pending {
    pub bundle: Bundle,
    pub results: Results,
    /// `out`/results.json, to be saved after each student.
    pub path: PathBuf,
    /// The students to grade, in id order.
    pub students: Vec<String>,
    /// The bundle's CPU emulator library, when the kernels run on it.
    pub driver: Option<PathBuf>,
}

/// Loads the bundle and what `out`/results.json keeps (`--resume`,
/// `--student`), and says who is left to grade.
pub fn prepare(bundle_dir: &Path, out: &Path, settings: &Settings) -> Result<Pending, String> {
    let bundle = bundle::load(bundle_dir)?;
    let path = out.join("results.json");
    let keep_others = !settings.only.is_empty();
    let mut results = if (settings.resume || keep_others) && path.exists() {
        let earlier = Results::load(&path)?;
        if earlier.seed != bundle.seed {
            return Err(format!(
                "{}: {} was graded with seed {}, the bundle has {}",
                if settings.resume {
                    "--resume"
                } else {
                    "--student"
                },
                path.display(),
                earlier.seed,
                bundle.seed
            ));
        }
        crate::regrade::forget(earlier, &settings.only, settings.resume)
    } else {
        Results::new(bundle.seed)
    };
    crate::regrade::check_known(
        bundle.items.iter().map(|i| i.student.as_str()),
        &settings.only,
    )?;
    let sandbox = match &settings.isolation {
        Isolation::Sandboxed(sandbox) => Some(sandbox.description().to_owned()),
        Isolation::Unsandboxed => None,
    };
    if results.sandbox != sandbox {
        // One results.json says how all its records were made: regrading
        // some students under another confinement would mix the two.
        if keep_others && !results.students.is_empty() {
            return Err(format!(
                "--student: {} was graded {}, this run would be {}; regrade with the same \
                 confinement, or grade the whole class again",
                path.display(),
                confinement(results.sandbox.as_deref()),
                confinement(sandbox.as_deref())
            ));
        }
        // Records made under another confinement are not carried over: the
        // reports say how all of them were made.
        results.students.clear();
    }
    results.sandbox = sandbox;
    let driver = crate::emulate::driver(bundle_dir, &bundle, settings.emulate)?;
    if results.emulated != settings.emulate {
        if keep_others && !results.students.is_empty() {
            return Err(crate::emulate::mixed(&path, results.emulated));
        }
        results.students.clear();
    }
    results.emulated = settings.emulate;
    let mut by_student: BTreeMap<&str, Vec<&Item>> = BTreeMap::new();
    for item in &bundle.items {
        by_student.entry(&item.student).or_default().push(item);
    }
    // Who is no longer in the bundle is no longer in the results.
    results
        .students
        .retain(|student, _| by_student.contains_key(student.as_str()));
    let mut students = Vec::new();
    for (student, items) in by_student {
        let chosen = settings.only.is_empty() || settings.only.iter().any(|s| s == student);
        // Kept only when every record was graded from these very inputs.
        let unchanged = results.students.get(student).is_some_and(|earlier| {
            earlier.exercises.len() == items.len()
                && items.iter().all(|item| {
                    earlier.exercises.get(&item.exercise).is_some_and(|e| {
                        e.inputs.is_some()
                            && e.inputs == inputs(bundle_dir, &bundle, item, settings.emulate)
                    })
                })
        });
        if chosen && !unchanged {
            students.push(student.to_owned());
        }
    }
    Ok(Pending {
        bundle,
        results,
        path,
        students,
        driver,
    })
}

/// Grades every exercise of `student` in the bundle.
pub fn grade_student(
    bundle_dir: &Path,
    bundle: &Bundle,
    student: &str,
    settings: &Settings,
    driver: Option<&Path>,
) -> Student {
    let items: Vec<&Item> = bundle
        .items
        .iter()
        .filter(|i| i.student == student)
        .collect();
    Student {
        problems: items
            .first()
            .map(|i| i.problems.clone())
            .unwrap_or_default(),
        exercises: items
            .iter()
            .map(|item| {
                (
                    item.exercise.clone(),
                    grade(bundle_dir, bundle, item, settings, driver),
                )
            })
            .collect(),
    }
}

/// The digest of what an item's grade depends on: the binary as it is now
/// and as it was built, the test plan, and what the build found.
fn inputs(bundle_dir: &Path, bundle: &Bundle, item: &Item, emulated: bool) -> Option<String> {
    let plan = crate::emulate::plan(&item.exercise, bundle.seed, emulated).runs;
    let binary = item
        .binary
        .as_ref()
        .map(|b| digest::file(&bundle_dir.join(b)).ok());
    Some(digest::bytes(
        format!(
            "{binary:?}\n{:?}\n{plan:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            item.digest, item.build_errors, item.refused, item.ptx_missing, item.absent
        )
        .as_bytes(),
    ))
}

/// How a results.json's records were confined, in words.
fn confinement(sandbox: Option<&str>) -> String {
    match sandbox {
        Some(sandbox) => format!("in the sandbox ({sandbox})"),
        None => "with --no-sandbox".to_owned(),
    }
}

/// Points for a kernel whose PTX shows what the exercise is about.
const PTX_POINTS: u32 = 1;

fn grade(
    bundle_dir: &Path,
    bundle: &Bundle,
    item: &Item,
    settings: &Settings,
    driver: Option<&Path>,
) -> results::Exercise {
    let planned = crate::emulate::plan(&item.exercise, bundle.seed, settings.emulate);
    let plan = planned.runs;
    let max_points = PTX_POINTS + plan.iter().map(|r| r.points).sum::<u32>();
    let mut graded = results::Exercise {
        refused: item.refused.clone(),
        build_errors: item.build_errors.clone(),
        ptx_missing: item.ptx_missing.clone(),
        runs: vec![],
        points: 0,
        max_points,
        sanitizer: vec![],
        inputs: inputs(bundle_dir, bundle, item, settings.emulate),
        absent: item.absent.clone(),
    };
    let Some(binary) = &item.binary else {
        return graded;
    };
    let binary = bundle_dir.join(binary);
    // The binary as built, or nothing runs: a bundle changed since (by a
    // run, or by hand) is not graded.
    let found = digest::file(&binary).ok();
    if item.digest.is_none() || found != item.digest {
        graded.build_errors = Some(format!(
            "the grader refused to run {}: it is not the binary that was built \
             (sha256 {} expected, {} found)",
            item.exercise,
            item.digest.as_deref().unwrap_or("none"),
            found.as_deref().unwrap_or("unreadable"),
        ));
        return graded;
    }
    let ptx_ok = item.ptx_missing.is_empty();
    graded.runs = plan
        .iter()
        .map(|run| {
            run_one(
                &settings.isolation,
                &binary,
                &item.exercise,
                run,
                settings.limits,
                ptx_ok,
                driver,
            )
        })
        .collect();
    graded.runs.extend(planned.skipped);
    graded.points =
        u32::from(ptx_ok) * PTX_POINTS + graded.runs.iter().map(|r| r.points).sum::<u32>();
    if settings.sanitize {
        if let Some(first) = plan.first() {
            // The first run, timed once: the tools slow it down many times.
            let mut args: Vec<&str> = first.args.iter().map(String::as_str).collect();
            if let Some(at) = args.iter().position(|a| *a == "--runs") {
                args[at + 1] = "1";
            }
            graded.sanitizer =
                sanitizer::sanitize(&settings.isolation, &binary, &args, settings.limits);
        }
    }
    graded
}

fn run_one(
    isolation: &Isolation,
    binary: &Path,
    exercise: &str,
    run: &plan::Run,
    limits: Limits,
    counts: bool,
    driver: Option<&Path>,
) -> results::Run {
    let mut args: Vec<&str> = run.args.iter().map(String::as_str).collect();
    args.push("--json");
    let mut outcome =
        runner::run_command(isolation.run_command_on(binary, &args, &[], driver), limits);
    if isolation.is_sandboxed() {
        outcome.ended = sandbox::ended_inside(outcome.ended);
    }
    let mut verdict = verdict::judge(&outcome, limits.timeout.as_secs_f64());
    if driver.is_some() {
        verdict = crate::emulate::with_findings(verdict, &outcome.stderr);
    }
    let report: Option<Value> = serde_json::from_str(outcome.stdout.trim()).ok();
    if verdict.passed() {
        if let Err(why) = recheck(exercise, run, report.as_ref().unwrap_or(&Value::Null)) {
            verdict = Verdict::Failed {
                summary: format!("the grader's own check disagrees: {why}"),
                hint: None,
            };
        }
    }
    let mut command = vec![
        binary
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
    ];
    command.extend(args.iter().map(|a| a.to_string()));
    results::Run {
        about: run.about.clone(),
        command,
        exit_code: match outcome.ended {
            Ended::Exited(code) => Some(code),
            _ => None,
        },
        duration_ms: outcome.duration.as_secs_f64() * 1e3,
        points: if verdict.passed() && counts {
            run.points
        } else {
            0
        },
        max_points: run.points,
        verdict: results::Verdict {
            passed: verdict.passed(),
            kind: verdict.kind().to_owned(),
            message: verdict.to_string(),
        },
        report,
    }
}
