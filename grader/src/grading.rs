//! `grader run`: grades a bundle, on a GPU node. Per student and exercise:
//! a point when the kernel's PTX shows what the exercise is about, then the
//! planned runs, each judged and, when its own check passed, rechecked
//! against the grader's closed forms. Runs earn points only when the PTX
//! point was earned, so an answer computed on the host earns nothing.
//! results.json is rewritten after every student.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::bundle::{self, Bundle, Item};
use crate::plan::{self, recheck};
use crate::results::{self, Results, Student};
use crate::runner::{self, Ended, Limits};
use crate::sanitizer;
use crate::verdict::{self, Verdict};

pub struct Settings {
    pub limits: Limits,
    /// Skip students results.json already holds.
    pub resume: bool,
    /// Also run compute-sanitizer on each exercise's first run.
    pub sanitize: bool,
    /// Only these students (`--student`), every other record kept; all
    /// when empty.
    pub only: Vec<String>,
}

/// Grades the bundle at `bundle_dir` into `out`/results.json; `progress` is
/// told each student as they are done.
pub fn run(
    bundle_dir: &Path,
    out: &Path,
    settings: &Settings,
    mut progress: impl FnMut(&str),
) -> Result<Results, String> {
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
    let mut by_student: BTreeMap<&str, Vec<&Item>> = BTreeMap::new();
    for item in &bundle.items {
        by_student.entry(&item.student).or_default().push(item);
    }
    for (student, items) in by_student {
        let chosen = settings.only.is_empty() || settings.only.iter().any(|s| s == student);
        if !chosen || results.students.contains_key(student) {
            continue;
        }
        let graded = Student {
            problems: items[0].problems.clone(),
            exercises: items
                .iter()
                .map(|item| {
                    (
                        item.exercise.clone(),
                        grade(bundle_dir, &bundle, item, settings),
                    )
                })
                .collect(),
        };
        results.students.insert(student.to_owned(), graded);
        results
            .save(&path)
            .map_err(|err| format!("{}: {err}", path.display()))?;
        progress(student);
    }
    Ok(results)
}

/// Points for a kernel whose PTX shows what the exercise is about.
const PTX_POINTS: u32 = 1;

fn grade(
    bundle_dir: &Path,
    bundle: &Bundle,
    item: &Item,
    settings: &Settings,
) -> results::Exercise {
    let plan = plan::plan(&item.exercise, bundle.seed);
    let max_points = PTX_POINTS + plan.iter().map(|r| r.points).sum::<u32>();
    let mut graded = results::Exercise {
        refused: item.refused.clone(),
        build_errors: item.build_errors.clone(),
        ptx_missing: item.ptx_missing.clone(),
        runs: vec![],
        points: 0,
        max_points,
        sanitizer: vec![],
        absent: item.absent.clone(),
    };
    let Some(binary) = &item.binary else {
        return graded;
    };
    let ptx_ok = item.ptx_missing.is_empty();
    graded.runs = plan
        .iter()
        .map(|run| {
            run_one(
                &bundle_dir.join(binary),
                &item.exercise,
                run,
                settings.limits,
                ptx_ok,
            )
        })
        .collect();
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
                sanitizer::sanitize(&bundle_dir.join(binary), &args, settings.limits);
        }
    }
    graded
}

fn run_one(
    binary: &Path,
    exercise: &str,
    run: &plan::Run,
    limits: Limits,
    counts: bool,
) -> results::Run {
    let mut args: Vec<&str> = run.args.iter().map(String::as_str).collect();
    args.push("--json");
    let outcome = runner::run(binary, &args, &[], limits);
    let mut verdict = verdict::judge(&outcome, limits.timeout.as_secs_f64());
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
