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
    /// Run compute-sanitizer on each exercise's first run, for the
    /// memory-safety point (`--no-sanitize`: not assessed).
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
                            && e.inputs == inputs(bundle_dir, &bundle, item, settings)
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
fn inputs(bundle_dir: &Path, bundle: &Bundle, item: &Item, settings: &Settings) -> Option<String> {
    let plan = crate::emulate::plan(&item.exercise, bundle.seed, settings.emulate).runs;
    let binary = item
        .binary
        .as_ref()
        .map(|b| digest::file(&bundle_dir.join(b)).ok());
    let reference = bundle.reference.get(&item.exercise);
    Some(digest::bytes(
        format!(
            "{binary:?}\n{:?}\n{plan:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{reference:?}\n{:?}\n{:?}\n\
             sanitize {}",
            item.digest,
            item.build_errors,
            item.refused,
            item.ptx_missing,
            item.absent,
            item.ptx,
            bundle.tracer,
            settings.sanitize
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
/// compute-sanitizer found nothing in the first run.
const MEMORY_SAFETY_POINTS: u32 = 1;
/// The kernel reached [`SPEED_FRACTION`] of the course's kernel's speed.
const SPEED_POINTS: u32 = 1;
/// The fraction of the course's own kernel's speed (its time over the
/// student's, at the timed run's size, one right after the other on the
/// same GPU) that earns the speed point: far below what any sound kernel
/// reaches, far above a kernel that moves its data many times over.
pub const SPEED_FRACTION: f64 = 0.5;

/// What one exercise can earn where every point is assessed: on a GPU,
/// with compute-sanitizer, every planned run fitting the node. The book
/// states these numbers, and grader/tests/book.rs checks them against this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullMarks {
    /// The kernel's PTX shows what the exercise is about.
    pub ptx: u32,
    /// Planned runs made twice, the kernel's and the student's binary's.
    pub runs: usize,
    /// The points each of those earns.
    pub run_points: u32,
    /// Planned runs of the kernel alone (above 2^31 elements).
    pub kernel_runs: usize,
    /// The points each of those earns.
    pub kernel_run_points: u32,
    pub memory_safety: u32,
    /// 0 where the exercise has no timed run.
    pub speed: u32,
}

impl FullMarks {
    /// Every point together: the maximum a grade is out of.
    pub fn points(&self) -> u32 {
        // Counts of runs are a handful.
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.ptx
            + count(self.runs) * self.run_points
            + count(self.kernel_runs) * self.kernel_run_points
            + self.memory_safety
            + self.speed
    }
}

/// [`FullMarks`] of `exercise` under the plan drawn from `seed`, by the
/// rules `grade` applies.
pub fn full_marks(exercise: &str, seed: u64) -> FullMarks {
    let plan = plan::plan(exercise, seed);
    // As in `grade`: a run whose points are only the kernel's share is
    // not made by the student's binary.
    let (kernel_only, twice): (Vec<&plan::Run>, Vec<&plan::Run>) =
        plan.iter().partition(|run| run.points <= KERNEL_POINTS);
    let each = |runs: &[&plan::Run]| runs.first().map_or(0, |run| run.points);
    FullMarks {
        ptx: PTX_POINTS,
        runs: twice.len(),
        run_points: each(&twice),
        kernel_runs: kernel_only.len(),
        kernel_run_points: each(&kernel_only),
        // As in `not_assessed`.
        memory_safety: if plan.is_empty() {
            0
        } else {
            MEMORY_SAFETY_POINTS
        },
        speed: if plan.iter().any(|run| run.timed) {
            SPEED_POINTS
        } else {
            0
        },
    }
}

fn grade(
    bundle_dir: &Path,
    bundle: &Bundle,
    item: &Item,
    settings: &Settings,
    driver: Option<&Path>,
) -> results::Exercise {
    let planned = crate::emulate::plan(&item.exercise, bundle.seed, settings.emulate);
    let plan = planned.runs;
    let checks = not_assessed(&plan, settings);
    // Whether each run above 2^31 elements fits this node, decided once
    // for the item, so that its maximum is the same whether or not
    // anything was built.
    let gpu = settings.isolation.gpu().map(|g| g.index);
    let short: Vec<Option<String>> = plan
        .iter()
        .map(|run| {
            (run.memory > 0)
                .then(|| crate::memory::shortfall(run.memory, gpu))
                .flatten()
        })
        .collect();
    let mut graded = results::Exercise {
        refused: item.refused.clone(),
        build_errors: item.build_errors.clone(),
        ptx_missing: item.ptx_missing.clone(),
        runs: vec![],
        points: 0,
        max_points: 0,
        sanitizer: vec![],
        checks,
        inputs: inputs(bundle_dir, bundle, item, settings),
        absent: item.absent.clone(),
    };
    // What it could have earned: every run made, every point assessed.
    graded.max_points = PTX_POINTS
        + plan
            .iter()
            .zip(&short)
            .filter(|(_, short)| short.is_none())
            .map(|(r, _)| r.points)
            .sum::<u32>()
        + assessed_max(&graded.checks);
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
    for (run, short) in plan.iter().zip(&short) {
        let kernel_points = KERNEL_POINTS.min(run.points);
        if let Some(why) = short {
            graded
                .runs
                .push(crate::emulate::skipped(&item.exercise, run, why));
            continue;
        }
        if run.memory > 0 && !ptx_ok {
            // Tens of seconds of the node's time that could earn nothing.
            graded.runs.push(not_run(
                run,
                kernel_points,
                "not run: the kernel's PTX lacks what the exercise is about, so this run \
                 could earn nothing",
                true,
            ));
            continue;
        }
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
        if host_points == 0 {
            // A kernel-only run: the student's binary is not asked.
            continue;
        }
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
    if settings.sanitize {
        if let Some(first) = plan.first() {
            let ran = graded
                .runs
                .iter()
                .find(|r| r.kernel_ptx.is_some() && r.about == first.about);
            let check = memory_safety(&kernel_host, first, ran, settings, ptx_ok);
            graded.sanitizer = check.1;
            set_check(&mut graded.checks, check.0);
        }
    }
    if let Some(timed) = plan.iter().find(|r| r.timed).filter(|_| !settings.emulate) {
        let check = speed(&graded.runs, &kernel_host, timed, settings, ptx_ok);
        set_check(&mut graded.checks, check);
    }
    graded.points = u32::from(ptx_ok) * PTX_POINTS
        + graded.runs.iter().map(|r| r.points).sum::<u32>()
        + graded.checks.iter().map(|c| c.points).sum::<u32>();
    graded.max_points = PTX_POINTS
        + graded.runs.iter().map(|r| r.max_points).sum::<u32>()
        + assessed_max(&graded.checks);
    graded
}

/// The points the assessed checks could earn; the others count in no maximum.
fn assessed_max(checks: &[results::Check]) -> u32 {
    checks
        .iter()
        .filter(|c| c.assessed)
        .map(|c| c.max_points)
        .sum()
}

/// The points beyond the runs that `plan` has, as they stand before
/// anything runs: the grading replaces those it assesses; those left say
/// why they earned nothing, or why they were not assessed.
fn not_assessed(plan: &[plan::Run], settings: &Settings) -> Vec<results::Check> {
    let unbuilt = "0 points: no kernel was built to check";
    let mut checks = vec![];
    if !plan.is_empty() {
        let why = if settings.emulate {
            "not assessed: on the CPU emulator, whose own checks of every access fail the runs instead"
        } else if settings.sanitize {
            unbuilt
        } else {
            "not assessed: graded with --no-sanitize"
        };
        checks.push(check(
            results::MEMORY_SAFETY,
            settings.sanitize && !settings.emulate,
            false,
            MEMORY_SAFETY_POINTS,
            why,
        ));
    }
    if plan.iter().any(|r| r.timed) {
        let why = if settings.emulate {
            "not assessed: the CPU emulator's times say nothing of a GPU's"
        } else {
            unbuilt
        };
        checks.push(check(
            results::SPEED,
            !settings.emulate,
            false,
            SPEED_POINTS,
            why,
        ));
    }
    checks
}

fn check(
    name: &str,
    assessed: bool,
    passed: bool,
    max_points: u32,
    message: &str,
) -> results::Check {
    results::Check {
        name: name.to_owned(),
        assessed,
        passed,
        points: 0,
        max_points,
        message: message.to_owned(),
    }
}

/// Puts `check` in place of the one of its name.
fn set_check(checks: &mut Vec<results::Check>, check: results::Check) {
    match checks.iter_mut().find(|c| c.name == check.name) {
        Some(slot) => *slot = check,
        None => checks.push(check),
    }
}

/// The memory-safety point: compute-sanitizer over the kernel in the
/// course's host code at `first`, timed once (the tools slow it down many
/// times); with the tools' records.
fn memory_safety(
    kernel_host: &Result<(PathBuf, Kept), String>,
    first: &plan::Run,
    ran: Option<&results::Run>,
    settings: &Settings,
    ptx_ok: bool,
) -> (results::Check, Vec<results::Sanitized>) {
    let lost = |message: String| {
        (
            check(
                results::MEMORY_SAFETY,
                true,
                false,
                MEMORY_SAFETY_POINTS,
                &message,
            ),
            vec![],
        )
    };
    let (reference, ptx) = match kernel_host {
        Ok(host) => host,
        Err(why) => {
            return lost(format!(
                "0 points: compute-sanitizer could not run the kernel: {why}"
            ));
        }
    };
    // A kernel that did not finish the run plain would not under the
    // tools either, which slow it down many times: 2 × 10 × the timeout
    // of the node's time for nothing.
    if ran.is_some_and(|r| r.verdict.kind == Verdict::TIMED_OUT) {
        return lost(format!(
            "0 points: not checked, the kernel did not finish the run \"{}\" in time",
            first.about
        ));
    }
    let mut args: Vec<&str> = first.args.iter().map(String::as_str).collect();
    if let Some(at) = args.iter().position(|a| *a == "--runs") {
        args[at + 1] = "1";
    }
    let sanitized = sanitizer::sanitize(
        &settings.isolation,
        reference,
        &args,
        &[(kernels::KERNEL_PTX_ENV, ptx.path.as_path())],
        settings.limits,
    );
    let clean = sanitized.iter().all(|s| s.clean);
    let message = if clean {
        format!(
            "memcheck and racecheck found nothing in the run \"{}\"",
            first.about
        )
    } else {
        let found: Vec<String> = sanitized
            .iter()
            .filter(|s| !s.clean)
            .map(|s| match &s.finding {
                Some(finding) => format!("{}: {finding} ({})", s.tool, s.summary),
                None => format!("{}: {}", s.tool, s.summary),
            })
            .collect();
        format!("in the run \"{}\": {}", first.about, found.join("; "))
    };
    let mut point = check(
        results::MEMORY_SAFETY,
        true,
        clean,
        MEMORY_SAFETY_POINTS,
        &message,
    );
    point.points = u32::from(clean && ptx_ok) * MEMORY_SAFETY_POINTS;
    (point, sanitized)
}

/// The speed point: the kernel's time at the timed run (its kernel run in
/// the course's host code, already made) against the course's own kernel
/// at the same arguments, run right after it on the same GPU.
fn speed(
    runs: &[results::Run],
    kernel_host: &Result<(PathBuf, Kept), String>,
    timed: &plan::Run,
    settings: &Settings,
    ptx_ok: bool,
) -> results::Check {
    let fail = |message: String| check(results::SPEED, true, false, SPEED_POINTS, &message);
    let Ok((reference, _)) = kernel_host else {
        return fail("0 points: the kernel could not be run in the course's host code".into());
    };
    let theirs = runs
        .iter()
        .find(|r| r.kernel_ptx.is_some() && r.about == timed.about);
    let Some(theirs_ms) = theirs
        .filter(|r| r.verdict.passed)
        .and_then(|r| kernel_ms(r.report.as_ref()?))
    else {
        return fail(format!(
            "0 points: the kernel did not pass the run \"{}\", so its speed was not measured",
            timed.about
        ));
    };
    let mut args: Vec<&str> = timed.args.iter().map(String::as_str).collect();
    args.push("--json");
    let outcome = runner::run_command(
        settings
            .isolation
            .run_command_with(reference, &args, &[], Extras::default()),
        settings.limits,
    );
    let course_ms = serde_json::from_str::<Value>(outcome.stdout.trim())
        .ok()
        .filter(|r| r["check"]["passed"] == true)
        .and_then(|r| kernel_ms(&r));
    let Some(course_ms) = course_ms else {
        // The course's own kernel failed: the node's fault, not the student's.
        return check(
            results::SPEED,
            false,
            false,
            SPEED_POINTS,
            &format!(
                "not assessed: the course's own kernel did not pass the run \"{}\" here ({:?})",
                timed.about, outcome.ended
            ),
        );
    };
    let fraction = course_ms / theirs_ms;
    let passed = fraction >= SPEED_FRACTION;
    let mut point = check(
        results::SPEED,
        true,
        passed,
        SPEED_POINTS,
        &format!(
            "in the run \"{}\" your kernel took {theirs_ms:.3} ms and the course's {course_ms:.3} ms \
             on this GPU: {fraction:.2} of its speed (the point asks {SPEED_FRACTION})",
            timed.about
        ),
    );
    point.points = u32::from(passed && ptx_ok) * SPEED_POINTS;
    point
}

/// The median kernel time a report gives, in ms.
fn kernel_ms(report: &Value) -> Option<f64> {
    crate::reports::report_timings(report)?
        .into_iter()
        .find(|t| t.step == "kernel")
        .map(|t| t.ms)
        .filter(|ms| *ms > 0.0)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            limits: Limits {
                timeout: std::time::Duration::from_secs(1),
                max_output: 1 << 16,
            },
            isolation: Isolation::Unsandboxed,
            resume: false,
            sanitize: true,
            only: vec![],
            emulate: false,
        }
    }

    fn planned(timed: bool) -> Vec<plan::Run> {
        let mut runs = plan::plan("vecadd-anyN", 1);
        for run in &mut runs {
            run.timed &= timed;
        }
        runs
    }

    #[test]
    fn points_not_assessed_say_why_and_count_in_no_maximum() {
        let checks = not_assessed(&planned(true), &settings());
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|c| c.assessed && c.points == 0));
        let off = Settings {
            sanitize: false,
            ..settings()
        };
        let checks = not_assessed(&planned(true), &off);
        assert!(!checks[0].assessed && checks[0].message.contains("--no-sanitize"));
        assert!(checks[1].assessed);
        let emulated = Settings {
            emulate: true,
            ..settings()
        };
        let checks = not_assessed(&planned(true), &emulated);
        assert!(
            checks
                .iter()
                .all(|c| !c.assessed && c.message.starts_with("not assessed"))
        );
        // No timed run, no speed point.
        assert_eq!(not_assessed(&planned(false), &settings()).len(), 1);
    }

    #[test]
    fn a_kernel_that_timed_out_is_not_run_again_under_the_sanitizer() {
        let first = &planned(true)[0];
        let mut ran = not_run(first, 1, "stopped after 1 s", true);
        ran.verdict.kind = Verdict::TIMED_OUT.into();
        // A reference binary that cannot exist: were it run, the message
        // would say the tool could not start it.
        let host = Ok((
            PathBuf::from("/nonexistent/reference"),
            Kept {
                path: PathBuf::from("/nonexistent/kernel.ptx"),
                digest: String::new(),
            },
        ));
        let (point, tools) = memory_safety(&host, first, Some(&ran), &settings(), true);
        assert!(tools.is_empty());
        assert!(point.assessed && !point.passed && point.points == 0);
        assert!(
            point.message.contains("did not finish the run"),
            "{}",
            point.message
        );
    }

    #[test]
    fn the_kernel_time_is_the_kernel_step_of_the_report() {
        let report = serde_json::json!({"timings": [
            {"step": "h2d", "ms": 2.0, "median_of": 1},
            {"step": "kernel", "ms": 0.25, "median_of": 5},
        ]});
        assert_eq!(kernel_ms(&report), Some(0.25));
        assert_eq!(kernel_ms(&serde_json::json!({"timings": []})), None);
        assert_eq!(
            kernel_ms(&serde_json::json!({"timings": [
                {"step": "kernel", "ms": 0.0, "median_of": 5}
            ]})),
            None
        );
    }
}
