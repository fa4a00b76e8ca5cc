//! One grading, as Gradescope's `run_autograder` or PrairieLearn's
//! entrypoint starts it (`grader autograder grade`): the upload read into a
//! class of one, the confinement this container allows found, the stages
//! (`stages`) run within the platform's time, and the platform's
//! results.json written whatever happened: the student's failures are
//! graded, the autograder's own are said to be so, and neither is a crash.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kernels::catalogue::ExerciseId;

use crate::error::{Error, Result};
use crate::platform::layout::{self, Layout};
use crate::platform::report::{self, Report};
use crate::platform::settings::{Platform, Settings};
use crate::platform::stages::{self, Confinement};
use crate::platform::upload;
use crate::platform::{gradescope, prairielearn};
use crate::record::results::Results;

/// Grades the platform's upload and writes its results.json; an error
/// only where not even that could be written.
pub fn grade(layout: &Layout, platform: Platform, only: &[ExerciseId]) -> Result<Report> {
    let started = Instant::now();
    let settings = Settings::load(&layout.private()).and_then(|s| narrowed(s, only));
    let (mut report, log) = match &settings {
        Ok(settings) => graded(layout, platform, settings, started),
        Err(err) => (report::failed(&err.to_string(), 0), String::new()),
    };
    report.seconds = started.elapsed().as_secs();
    let (file, text) = match (platform, &settings) {
        (Platform::Gradescope, Ok(settings)) => (
            gradescope::RESULTS_FILE,
            gradescope::results(&report, settings),
        ),
        (Platform::Gradescope, Err(_)) => (
            gradescope::RESULTS_FILE,
            gradescope::results(&report, &fallback_settings()),
        ),
        (Platform::Prairielearn, _) => (prairielearn::RESULTS_FILE, prairielearn::results(&report)),
    };
    eprint!("{log}");
    eprintln!(
        "cuda-course autograder: {} in {} s",
        report.message, report.seconds
    );
    let path = layout.at(file);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(Error::io(parent))?;
    }
    crate::atomic_file::write(&path, text.as_bytes()).map_err(Error::io(&path))?;
    layout::mode(&path, 0o644)?;
    Ok(report)
}

/// The settings for `only` of the package's exercises (all when empty).
fn narrowed(mut settings: Settings, only: &[ExerciseId]) -> Result<Settings> {
    if let Some(other) = only.iter().find(|e| !settings.exercises.contains(e)) {
        return Err(Error::Usage(format!(
            "--exercise {other}: this autograder was packaged for {}",
            settings
                .exercises
                .iter()
                .map(|e| e.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if !only.is_empty() {
        settings.exercises.retain(|e| only.contains(e));
    }
    Ok(settings)
}

/// Settings for a results.json when the package's could not be read.
fn fallback_settings() -> Settings {
    Settings {
        platform: Platform::Gradescope,
        exercises: vec![],
        visibility: crate::platform::settings::Visibility::Visible,
        stdout_visibility: crate::platform::settings::Visibility::Hidden,
        seed: None,
        time_limit: 0,
        run_timeout: 0,
        build_timeout: 0,
        student: 0,
    }
}

/// The report, and the stages' log (seeds hidden where fixed).
fn graded(
    layout: &Layout,
    platform: Platform,
    settings: &Settings,
    started: Instant,
) -> (Report, String) {
    let mut log = String::new();
    let report = match stages_of(layout, platform, settings, started, &mut log) {
        Ok(report) => report,
        Err(err) => report::failed(&err.to_string(), 0),
    };
    // Nothing of the student's may outlive the grading.
    layout::kill_user(settings.student);
    if let Some(seed) = settings.seed {
        log = report::without_number(&log, &seed.to_string());
    }
    (report, log)
}

fn stages_of(
    layout: &Layout,
    platform: Platform,
    settings: &Settings,
    started: Instant,
    log: &mut String,
) -> Result<Report> {
    let env = layout.environment()?;
    let user = settings.student;
    layout::kill_user(user);
    let (upload_dir, private_dirs): (&str, &[&str]) = match platform {
        Platform::Gradescope => (gradescope::SUBMISSION_DIR, &[gradescope::SOURCE_DIR]),
        Platform::Prairielearn => (prairielearn::STUDENT_DIR, &prairielearn::PRIVATE_DIRS),
    };
    for dir in private_dirs
        .iter()
        .map(|d| layout.at(d))
        .filter(|d| d.exists())
    {
        layout::mode(&dir, 0o700)?;
    }
    let class = layout.class();
    fresh(&class)?;
    let taken = match upload::take(&layout.at(upload_dir), &class, &settings.exercises)
        .map_err(Error::io(&class))?
    {
        Ok(taken) => taken,
        Err(unfit) => return Ok(report::unfit(&unfit, 0)),
    };
    layout::give(&class, user)?;
    let confinement = Confinement::detect(user);
    forget_earlier_builds(layout, &confinement)?;
    log.push_str(&format!(
        "cuda-course autograder: confinement: {}\n",
        confinement.words()
    ));
    let left = |started: Instant| {
        settings
            .deadline()
            .saturating_sub(started.elapsed().as_secs())
    };
    log.push_str(&stages::build(
        layout,
        settings,
        &confinement,
        &env,
        left(started),
    )?);
    layout::kill_user(user);
    let (bundle, out) = (layout.run_bundle(), layout.private().join("out"));
    stages::assemble(layout, settings, &confinement, &bundle)?;
    fresh(&out)?;
    let said = stages::run(
        layout,
        settings,
        &confinement,
        &env,
        (&bundle, &out),
        left(started),
    )?;
    log.push_str(&said);
    layout::kill_user(user);
    let results = Results::load(&out.join("results.json"))?;
    let mut notes = taken.notes;
    if taken.exercises.len() < settings.exercises.len() {
        notes.push("some of this assignment's exercises were not in your upload".into());
    }
    let hide = settings.seed.is_some();
    if hide {
        *log = report::hide_in(log, &results);
    }
    Ok(report::graded(&results, &notes, &confinement.words(), hide))
}

/// Removes the student's build folder, to be linked anew from the
/// dependencies for this upload's crates: the grader keeps one as long as
/// the dependencies do, with read-only links for crates an earlier upload
/// did not have, which the student user could not rebuild.
fn forget_earlier_builds(layout: &Layout, confinement: &Confinement) -> Result<()> {
    let students = layout
        .student_bundle(confinement.build_sandboxed)
        .join(".build/students");
    if students.exists() {
        fs::remove_dir_all(&students).map_err(Error::io(&students))?;
    }
    Ok(())
}

/// An empty folder at `path`.
fn fresh(path: &Path) -> Result<PathBuf> {
    if path.exists() {
        fs::remove_dir_all(path).map_err(Error::io(path))?;
    }
    fs::create_dir_all(path).map_err(Error::io(path))?;
    Ok(path.to_owned())
}
