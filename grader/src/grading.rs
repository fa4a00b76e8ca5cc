//! `grader run`: grades a bundle, on a GPU node. Per student and exercise:
//! a point when the kernel's PTX shows what the exercise is about, then the
//! planned runs, each made twice: the student's PTX through the course's
//! reference binary (the kernel's point: host code the student did not
//! write) and the student's own binary (the host's point). Each is judged
//! and, when its own check passed, rechecked against the grader's closed
//! forms. Runs earn points only when the PTX point was earned, so an answer
//! computed on the host earns nothing. results.json is rewritten after
//! every student.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bundle::{self, Bundle, Item};
use crate::ptx_check;
use crate::traced;

use crate::reference::Kept;

use crate::digest;
use crate::plan::{self, recheck};
use crate::results::{self, Results, Student};
use crate::runner::{self, Ended, Limits};
use crate::sandbox::{self, Extras, Isolation};
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
    let sandbox = settings.isolation.description();
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
/// and as it was built, the test plan, what the build found, and the
/// trusted code its runs go through (reference binary, PTX, tracer).
fn inputs(bundle_dir: &Path, bundle: &Bundle, item: &Item, emulated: bool) -> Option<String> {
    let plan = crate::emulate::plan(&item.exercise, bundle.seed, emulated).runs;
    let binary = item
        .binary
        .as_ref()
        .map(|b| digest::file(&bundle_dir.join(b)).ok());
    let reference = bundle.reference.get(&item.exercise);
    Some(digest::bytes(
        format!(
            "{binary:?}\n{:?}\n{plan:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{reference:?}\n{:?}\n{:?}",
            item.digest,
            item.build_errors,
            item.refused,
            item.ptx_missing,
            item.absent,
            item.ptx,
            bundle.tracer
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
/// Of each planned run's points, those its kernel earns in the reference
/// binary; the rest are the student's binary's.
const KERNEL_POINTS: u32 = 1;

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
    let kernel_host = kernel_host(bundle_dir, bundle, item);
    let tracer = bundle
        .tracer
        .as_ref()
        .ok_or_else(|| "the bundle has no tracer library; build the bundle again".to_owned())
        .and_then(|kept| kept.check(bundle_dir));
    for run in &plan {
        let kernel_points = KERNEL_POINTS.min(run.points);
        graded.runs.push(match &kernel_host {
            Ok((reference, ptx)) => run_one(
                &settings.isolation,
                reference,
                &item.exercise,
                run,
                settings.limits,
                ptx_ok,
                kernel_points,
                How::Kernel(ptx),
                driver,
            ),
            Err(why) => not_run(run, kernel_points, why, true),
        });
        let host_points = run.points - kernel_points;
        graded.runs.push(match &tracer {
            Ok(tracer) => run_one(
                &settings.isolation,
                &binary,
                &item.exercise,
                run,
                settings.limits,
                ptx_ok,
                host_points,
                How::Traced(tracer),
                driver,
            ),
            Err(why) => not_run(run, host_points, why, false),
        });
    }
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
            // The kernel in the course's host code, where it can run there:
            // its findings are the kernel's, not the student's host code's.
            let (sanitized, files) = match &kernel_host {
                Ok((reference, ptx)) => (
                    reference.as_path(),
                    vec![(kernels::KERNEL_PTX_ENV, ptx.path.as_path())],
                ),
                Err(_) => (binary.as_path(), vec![]),
            };
            graded.sanitizer = sanitizer::sanitize(
                &settings.isolation,
                sanitized,
                &args,
                &files,
                settings.limits,
            );
        }
    }
    graded
}

/// The reference binary and the student's PTX for an item's kernel runs,
/// each as it was built; else why the kernel cannot be run.
fn kernel_host(bundle_dir: &Path, bundle: &Bundle, item: &Item) -> Result<(PathBuf, Kept), String> {
    let reference = bundle.reference.get(&item.exercise).ok_or_else(|| {
        format!(
            "the bundle has no reference binary for {}; build the bundle again",
            item.exercise
        )
    })?;
    let ptx = item
        .ptx
        .as_ref()
        .ok_or("the build left no PTX for the kernel, so it could not be run")?;
    let refused = |why: String| format!("the grader refused to run the kernel: {why}");
    let binary = reference.binary.check(bundle_dir).map_err(refused)?;
    let path = ptx.check(bundle_dir).map_err(refused)?;
    let course = reference.ptx.check(bundle_dir).map_err(refused)?;
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|err| refused(err.to_string()));
    if let Some(why) = ptx_check::signature_mismatch(&read(&path)?, &read(&course)?) {
        return Err(format!(
            "the kernel could not run in the course's host code: {why}"
        ));
    }
    Ok((
        binary,
        Kept {
            path,
            digest: ptx.digest.clone(),
        },
    ))
}

/// A run that could not be made (`kernel`: of the kernel in the course's
/// host code), and why.
fn not_run(run: &plan::Run, points: u32, why: &str, kernel: bool) -> results::Run {
    results::Run {
        about: run.about.clone(),
        command: vec![],
        exit_code: None,
        duration_ms: 0.0,
        points: 0,
        max_points: points,
        verdict: results::Verdict {
            passed: false,
            kind: Verdict::DidNotStart {
                reason: String::new(),
            }
            .kind()
            .to_owned(),
            message: why.to_owned(),
        },
        report: None,
        kernel_ptx: kernel.then(String::new),
        trace_calls: None,
    }
}

/// How a binary is run.
enum How<'a> {
    /// A reference binary, with the student's PTX (on this machine) in
    /// place of its own.
    Kernel(&'a Kept),
    /// The student's binary, with the tracer (on this machine) preloaded:
    /// a passing report counts only when the trace shows the work.
    Traced(&'a Path),
}

/// One planned run of `binary`, worth `points`, made as `how` says.
#[expect(clippy::too_many_arguments, reason = "one run's whole context")]
fn run_one(
    isolation: &Isolation,
    binary: &Path,
    exercise: &str,
    run: &plan::Run,
    limits: Limits,
    counts: bool,
    points: u32,
    how: How,
    driver: Option<&Path>,
) -> results::Run {
    let mut args: Vec<&str> = run.args.iter().map(String::as_str).collect();
    args.push("--json");
    let (kernel_ptx, tracing) = match how {
        How::Kernel(ptx) => (Some(ptx), None),
        How::Traced(tracer) => (None, Some(traced::start(tracer))),
    };
    let mut files: Vec<(&str, &Path)> = kernel_ptx
        .map(|ptx| (kernels::KERNEL_PTX_ENV, ptx.path.as_path()))
        .into_iter()
        .collect();
    let mut descriptor = None;
    let tracing = match tracing {
        Some(Ok((tracing, attach))) => {
            files.extend(attach.files);
            descriptor = Some(attach.descriptor);
            Some(Ok(tracing))
        }
        Some(Err(why)) => Some(Err(why)),
        None => None,
    };
    // The command, and with it the trace's write end, is dropped once the
    // run ends.
    let extras = Extras {
        files: &files,
        descriptor,
        driver,
    };
    let mut outcome = runner::run_command(
        isolation.run_command_with(binary, &args, &[], extras),
        limits,
    );
    let trace = tracing.map(|t| t.and_then(traced::Tracing::finish));
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
    if verdict.passed() {
        let disagrees = match &trace {
            Some(Ok(trace)) => {
                traced::judge(exercise, trace, report.as_ref().unwrap_or(&Value::Null))
            }
            Some(Err(why)) => Some(format!("no driver-call trace could be read: {why}")),
            None => None,
        };
        if let Some(summary) = disagrees {
            verdict = Verdict::Failed {
                summary,
                hint: None,
            };
        }
    }
    let name = binary.file_name().unwrap_or_default().to_string_lossy();
    // As the bundle names it: the instructor reruns it from there.
    let mut command = vec![match kernel_ptx {
        Some(_) => format!("{}/{name}", crate::reference::REFERENCE_DIR),
        None => name.into_owned(),
    }];
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
            points
        } else {
            0
        },
        max_points: points,
        verdict: results::Verdict {
            passed: verdict.passed(),
            kind: verdict.kind().to_owned(),
            message: verdict.to_string(),
        },
        report,
        kernel_ptx: kernel_ptx
            .and_then(|ptx| Some(ptx.path.file_name()?.to_string_lossy().into_owned())),
        trace_calls: match trace {
            Some(Ok(trace)) => Some(trace.calls.len()),
            _ => None,
        },
    }
}
