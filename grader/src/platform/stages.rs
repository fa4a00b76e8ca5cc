//! The stages of one grading, each the grader's own command, so that the
//! student's code never shares a uid with what it must not read:
//!
//! 1. the student's build (`grader build`), as the student user, over the
//!    public course (`public`): nothing it can read holds an answer, and
//!    no student code runs in it (the build scripts are the course's);
//! 2. the run bundle, by root: the student's binaries and PTX from that
//!    build, the course's solution binaries, tracer and emulator from the
//!    trusted bundle built at setup, the seed; open to root alone but the
//!    files a run must execute or load;
//! 3. the runs (`grader run`), by root, each run in bubblewrap where it
//!    can make namespaces, else started as the student user
//!    (`GRADER_RUN_AS`), which can execute the course's binaries but not
//!    read them.
//!
//! Threat model: the student's code is everything in their upload, at
//! build and at run time; the course's code, the toolchain, the grader and
//! the platform are trusted. The student user can read the public course,
//! its own upload and build, and what every user can; not the package (a
//! fixed seed), the trusted bundle, the solutions or the results. A run
//! as the student user sees the machine's processes and network (no
//! namespace), and what it leaves running is killed with every process of
//! its uid between the stages.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::build::bundle::{self, Bundle};
use crate::confine::run_as::RUN_AS_ENV;
use crate::confine::runner::{self, Ended, Limits, Outcome};
use crate::confine::sandbox::{self, Sandbox};
use crate::error::{Error, Result};
use crate::platform::layout::{self, Layout};
use crate::platform::settings::Settings;

/// How the student's code was confined, at build and at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confinement {
    /// bubblewrap runs for the student user (the build's sandbox).
    pub build_sandboxed: bool,
    /// bubblewrap runs for root (the runs' sandbox).
    pub run_sandboxed: bool,
    /// The student user.
    pub user: u32,
}

impl Confinement {
    /// What this machine allows: bubblewrap tried as the student user and
    /// as root.
    pub fn detect(user: u32) -> Confinement {
        let bwrap = std::env::var_os(sandbox::BWRAP_ENV)
            .map(PathBuf::from)
            .or_else(|| sandbox::on_path("bwrap"));
        let build_sandboxed = bwrap.is_some_and(|bwrap| {
            let mut probe = Command::new(bwrap);
            probe
                .args([
                    "--unshare-all",
                    "--die-with-parent",
                    "--ro-bind",
                    "/",
                    "/",
                    "true",
                ])
                .uid(user)
                .gid(user)
                .env_clear();
            runner::run_command(probe, limits(10)).ended == Ended::Exited(0)
        });
        Confinement {
            build_sandboxed,
            run_sandboxed: Sandbox::find().is_ok(),
            user,
        }
    }

    /// In words, for the feedback and the log.
    pub fn words(&self) -> String {
        let user = self.user;
        let build = if self.build_sandboxed {
            format!("built in bubblewrap as the unprivileged uid {user}")
        } else {
            format!(
                "built as the unprivileged uid {user}, without bubblewrap (this container cannot \
                 make namespaces), from a copy of the course with no solution in it"
            )
        };
        let run = if self.run_sandboxed {
            "run in bubblewrap, each run as a uid of its own".to_owned()
        } else {
            format!(
                "run as the unprivileged uid {user}, without bubblewrap: it cannot read the \
                 course's solutions, the grader's plans or the results"
            )
        };
        format!("{build}; {run}")
    }
}

fn limits(seconds: u64) -> Limits {
    Limits {
        timeout: Duration::from_secs(seconds.max(1)),
        max_output: 1 << 20,
    }
}

/// A command of the installed grader with the setup's environment and
/// nothing of this process's.
fn grader(layout: &Layout, env: &BTreeMap<String, String>, args: &[&str]) -> Command {
    let mut command = Command::new(layout.grader());
    command
        .args(args)
        .env_clear()
        .envs(env)
        .env("HOME", layout.student_home())
        .env("CARGO_HOME", layout.cargo_home())
        .env("TMPDIR", layout.student_home())
        .current_dir(layout.student_home());
    command
}

/// What a stage said, for the log; an error where it did not finish.
fn finished(stage: &str, outcome: Outcome, seconds: u64) -> Result<String> {
    let said = format!("{}{}", outcome.stdout, outcome.stderr);
    match outcome.ended {
        Ended::Exited(0) => Ok(said),
        Ended::TimedOut => Err(Error::Tool(format!(
            "{stage} did not finish in the {seconds} s left of the platform's time limit"
        ))),
        other => Err(Error::Tool(format!(
            "{stage} ended with {other:?}: {}",
            said.lines().rev().take(3).collect::<Vec<_>>().join(" / ")
        ))),
    }
}

/// Stage 1: `grader build` of the class of one, as the student user, into
/// the student bundle. Returns what it said.
pub fn build(
    layout: &Layout,
    settings: &Settings,
    confinement: &Confinement,
    env: &BTreeMap<String, String>,
    seconds: u64,
) -> Result<String> {
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    let mut args: Vec<String> = vec![
        "build".into(),
        path(layout.class()),
        "--bundle".into(),
        path(layout.student_bundle(confinement.build_sandboxed)),
        "--course".into(),
        path(layout.public_course()),
        "--target-dir".into(),
        path(layout.deps()),
        "--build-timeout".into(),
        settings.build_timeout.to_string(),
        "--jobs".into(),
        "1".into(),
    ];
    for exercise in &settings.exercises {
        args.extend(["--exercise".into(), exercise.name().into()]);
    }
    if !confinement.build_sandboxed {
        args.push("--no-sandbox".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command = grader(layout, env, &args);
    command.uid(confinement.user).gid(confinement.user);
    finished(
        "the build",
        runner::run_command(command, limits(seconds)),
        seconds,
    )
}

/// Stage 2: the run bundle, in `to` (made anew, root's): the student's
/// items from the student bundle, the course's trusted host code from the
/// trusted bundle, the instructor's seed where fixed.
pub fn assemble(
    layout: &Layout,
    settings: &Settings,
    confinement: &Confinement,
    to: &Path,
) -> Result<()> {
    let built = layout.student_bundle(confinement.build_sandboxed);
    let student = bundle::load(&built)?;
    let trusted = bundle::load(&layout.trusted_bundle())?;
    if to.exists() {
        fs::remove_dir_all(to).map_err(Error::io(to))?;
    }
    fs::create_dir_all(to).map_err(Error::io(to))?;
    // Runs as the student user go through it to what they execute.
    layout::mode(to, 0o711)?;
    let from_student = |relative: &Path, bits| take(&built, to, relative, bits);
    for item in &student.items {
        if let Some(binary) = &item.binary {
            from_student(binary, 0o555)?;
        }
        if let Some(ptx) = &item.ptx {
            from_student(&ptx.path, 0o444)?;
        }
        if let Some(canary) = &item.canary {
            // Read by the broker, which runs as the student user too.
            from_student(&canary.ptx.path, 0o444)?;
        }
    }
    let trusted_dir = layout.trusted_bundle();
    let mut reference = BTreeMap::new();
    for exercise in &settings.exercises {
        let kept = trusted.reference.get(exercise.name()).ok_or_else(|| {
            Error::Tool(format!(
                "the trusted bundle has no reference binary for {exercise}"
            ))
        })?;
        // Executed by the student user, never read: its PTX is the
        // solution's. The PTX file is read by the grader alone.
        take(&trusted_dir, to, &kept.binary.path, 0o511)?;
        take(&trusted_dir, to, &kept.ptx.path, 0o400)?;
        reference.insert(exercise.name().to_owned(), kept.clone());
    }
    if let Some(broker) = &trusted.broker {
        take(&trusted_dir, to, &broker.broker.path, 0o555)?;
        take(&trusted_dir, to, &broker.client.path, 0o555)?;
    }
    if let Some(library) = &trusted.emulator {
        take(&trusted_dir, to, &library.path, 0o555)?;
    }
    let assembled = Bundle {
        schema_version: student.schema_version,
        seed: settings.seed.unwrap_or(student.seed),
        reference,
        broker: trusted.broker,
        items: student.items,
        emulator: trusted.emulator,
    };
    let path = to.join("bundle.json");
    let text = serde_json::to_string_pretty(&assembled).expect("a bundle is JSON");
    crate::atomic_file::write(&path, text.as_bytes()).map_err(Error::io(&path))?;
    layout::mode(&path, 0o600)
}

/// Copies `from/relative` to `to/relative` with `bits`, where `relative`
/// is a plain path and the file a plain file (never through a link).
fn take(from: &Path, to: &Path, relative: &Path, bits: u32) -> Result<()> {
    let plain = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    let source = from.join(relative);
    let is_file = fs::symlink_metadata(&source).is_ok_and(|m| m.file_type().is_file());
    if !plain || !is_file {
        return Err(Error::Tool(format!(
            "{} is not a plain file of the bundle {}",
            relative.display(),
            from.display()
        )));
    }
    let copy = to.join(relative);
    if let Some(parent) = copy.parent() {
        fs::create_dir_all(parent).map_err(Error::io(parent))?;
        layout::mode(parent, 0o711)?;
    }
    fs::copy(&source, &copy).map_err(Error::io(&source))?;
    layout::mode(&copy, bits)
}

/// Stage 3: `grader run` of the run bundle into `out`, by root: in
/// bubblewrap where it runs, else each run as the student user.
pub fn run(
    layout: &Layout,
    settings: &Settings,
    confinement: &Confinement,
    env: &BTreeMap<String, String>,
    paths: (&Path, &Path),
    seconds: u64,
) -> Result<String> {
    let (bundle, out) = paths;
    let timeout = settings.run_timeout.to_string();
    let (bundle, out) = (bundle.to_string_lossy(), out.to_string_lossy());
    let mut args = vec![
        "run",
        &bundle,
        "--out",
        &out,
        "--jobs",
        "1",
        "--timeout",
        &timeout,
    ];
    if !confinement.run_sandboxed {
        args.push("--no-sandbox");
    }
    let mut command = grader(layout, env, &args);
    command.env("HOME", "/root").env("TMPDIR", "/tmp");
    if !confinement.run_sandboxed {
        let user = confinement.user;
        command.env(RUN_AS_ENV, format!("{user}:{user}"));
    }
    finished(
        "the runs",
        runner::run_command(command, limits(seconds)),
        seconds,
    )
}
