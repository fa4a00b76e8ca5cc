//! What an autograder's setup does once, as root, when the platform
//! builds its image (`grader autograder prepare`, from setup.sh): the
//! install's folders with their owners and modes (`layout`), the public
//! course, the crates downloaded, the trusted bundle built from the whole
//! course (the solutions' binaries, the tracer, the emulator), and one
//! student build of the stubs as the student user, so that every later
//! grading finds the dependencies built and builds only the student's
//! crates.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::confine::runner::{self, Ended, Limits};
use crate::confine::sandbox::Sandbox;
use crate::error::{Error, Result};
use crate::platform::layout::{self, Layout};
use crate::platform::public;
use crate::platform::settings::{self, Settings};
use crate::platform::stages::{self, Confinement};

/// Names the folder where the trusted build builds (default
/// `private/target`, which setup.sh removes once the bundle is made).
pub const TRUSTED_TARGET_ENV: &str = "CUDA_COURSE_AUTOGRADER_TRUSTED_TARGET";

/// Installs the autograder of `package` (the folder holding
/// autograder.json and `course/`) under `layout`.
pub fn prepare(layout: &Layout, package: &Path) -> Result<()> {
    let settings = Settings::load(package)?;
    let course = package.join("course");
    for (dir, bits) in [
        (layout.home(), 0o755),
        (layout.private(), 0o700),
        (layout.public(), 0o755),
    ] {
        fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
        layout::mode(&dir, bits)?;
    }
    for dir in [
        layout.work(),
        layout.student_home(),
        layout.cargo_home(),
        layout.deps(),
    ] {
        fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    }
    let kept = layout.private().join(settings::FILE);
    fs::write(&kept, settings.to_json()).map_err(Error::io(&kept))?;
    layout::mode(&kept, 0o600)?;
    say("the public course");
    public::write(&course, &layout.public_course())?;
    let grader = layout.grader();
    fs::create_dir_all(grader.parent().unwrap_or(&grader)).map_err(Error::io(&grader))?;
    let this =
        std::env::current_exe().map_err(|err| Error::Tool(format!("this grader's path: {err}")))?;
    fs::copy(&this, &grader).map_err(Error::io(&this))?;
    layout::mode(&grader, 0o755)?;
    layout.keep_environment()?;
    let env = layout.environment()?;

    say("the crates the course needs");
    let mut fetch = Command::new("cargo");
    fetch
        .args(["fetch", "--manifest-path"])
        .arg(course.join("Cargo.toml"))
        .env("CARGO_HOME", layout.cargo_home());
    must("cargo fetch", fetch, 1800)?;
    // The public course's workspace has fewer members: its lock, written
    // once here (the student user cannot), with the course's time.
    let public_manifest = layout.public_course().join("Cargo.toml");
    let mut lock = Command::new("cargo");
    lock.args([
        "update",
        "--workspace",
        "--offline",
        "--quiet",
        "--manifest-path",
    ])
    .arg(&public_manifest)
    .env("CARGO_HOME", layout.cargo_home());
    must("the public course's Cargo.lock", lock, 600)?;
    public::same_time(
        &course.join("Cargo.lock"),
        &layout.public_course().join("Cargo.lock"),
    )?;

    say("the trusted bundle: the course's solutions, broker and emulator");
    trusted(layout, &settings, &course, &env)?;

    say("one build of the stubs as the student user, for the dependencies");
    layout::give(&layout.work(), settings.student)?;
    let confinement = Confinement::detect(settings.student);
    eprintln!(
        "cuda-course autograder: confinement here: {}",
        confinement.words()
    );
    seed_class(layout, &course, &settings)?;
    let warm = Settings {
        build_timeout: 3600,
        ..settings.clone()
    };
    stages::build(layout, &warm, &confinement, &env, 7200)?;
    layout::kill_user(settings.student);
    say("done");
    Ok(())
}

fn say(what: &str) {
    eprintln!("cuda-course autograder: setup: {what}");
}

/// Runs trusted `command`, which must succeed within `seconds`.
fn must(what: &str, command: Command, seconds: u64) -> Result<()> {
    let limits = Limits {
        timeout: Duration::from_secs(seconds),
        max_output: 1 << 20,
    };
    let outcome = runner::run_command(command, limits);
    if outcome.ended == Ended::Exited(0) {
        return Ok(());
    }
    Err(Error::Tool(format!(
        "{what} failed ({:?}): {}",
        outcome.ended,
        outcome.stderr.trim()
    )))
}

/// `grader build` of the course's own solutions, by root over the whole
/// course (trusted code only), into the trusted bundle (its build folder,
/// `private/target`, kept for a setup run again; setup.sh removes it).
fn trusted(
    layout: &Layout,
    settings: &Settings,
    course: &Path,
    env: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    let class = layout.private().join("solutions-class");
    let student = class.join("course-solutions");
    if class.exists() {
        fs::remove_dir_all(&class).map_err(Error::io(&class))?;
    }
    for exercise in &settings.exercises {
        copy_src(
            &course.join("solutions").join(exercise.name()),
            &student.join(exercise.name()),
        )?;
    }
    // Root's own build of trusted code: where its caller keeps such builds
    // (the grader's tests share theirs), else in the install.
    let target = std::env::var_os(TRUSTED_TARGET_ENV)
        .map_or_else(|| layout.private().join("target"), std::path::PathBuf::from);
    let bundle = layout.trusted_bundle();
    let mut command = Command::new(layout.grader());
    command
        .arg("build")
        .arg(&class)
        .arg("--bundle")
        .arg(&bundle)
        .arg("--course")
        .arg(course)
        .arg("--target-dir")
        .arg(&target)
        .env_clear()
        .envs(env)
        .env("HOME", "/root")
        .env("CARGO_HOME", layout.cargo_home());
    for exercise in &settings.exercises {
        command.args(["--exercise", exercise.name()]);
    }
    if Sandbox::find().is_err() {
        // Trusted code only: the course's own solutions.
        command.arg("--no-sandbox");
    }
    must("the trusted build", command, 7200)
}

/// The stubs of the package's exercises as the class of one, for the
/// setup's build.
fn seed_class(layout: &Layout, course: &Path, settings: &Settings) -> Result<()> {
    let class = layout.class();
    if class.exists() {
        fs::remove_dir_all(&class).map_err(Error::io(&class))?;
    }
    for exercise in &settings.exercises {
        let into = class
            .join(crate::platform::upload::STUDENT)
            .join(exercise.name());
        copy_src(&course.join("exercises").join(exercise.name()), &into)?;
    }
    layout::give(&class, settings.student)
}

/// Copies an exercise's `src/` (plain files only).
fn copy_src(exercise: &Path, into: &Path) -> Result<()> {
    let (from, to) = (exercise.join("src"), into.join("src"));
    fs::create_dir_all(&to).map_err(Error::io(&to))?;
    for entry in fs::read_dir(&from).map_err(Error::io(&from))? {
        let entry = entry.map_err(Error::io(&from))?;
        if entry.file_type().map_err(Error::io(&from))?.is_file() {
            fs::copy(entry.path(), to.join(entry.file_name())).map_err(Error::io(&entry.path()))?;
        }
    }
    Ok(())
}
