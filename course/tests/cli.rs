//! `cargo course` as a student meets it: every verb, on a copy of the
//! course's exercise files (a fixture folder) or, for `check`, on this
//! workspace itself.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use tempfile::TempDir;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A folder with every exercise's src/ as shipped, a Cargo.toml that holds
/// no packages (so a build there fails at once), and its own target dir.
fn fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
    for entry in fs::read_dir(repo().join("exercises")).unwrap() {
        let name = entry.unwrap().file_name();
        copy_src(
            &repo().join("exercises").join(&name),
            &dir.path().join("exercises").join(&name),
        );
    }
    dir
}

fn copy_src(from: &Path, to: &Path) {
    fs::create_dir_all(to.join("src")).unwrap();
    for entry in fs::read_dir(from.join("src")).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, to.join("src").join(path.file_name().unwrap())).unwrap();
    }
}

/// Marks every step of the exercise in `dir` written: its TODO markers and
/// placeholders gone (the code need not compile: the fixture builds nothing).
/// Not the solution, which a student's copy of the course does not have.
fn finish(dir: &Path, name: &str) {
    edit_src(dir, name, |text| {
        text.replace("TODO(step ", "Written(step ")
            .replace("kernels::unfinished", "written_by_the_student")
    });
}

/// Marks the exercise's steps written as most people write them: each
/// placeholder replaced by code, every `TODO(step N)` comment left in.
fn finish_keeping_comments(dir: &Path, name: &str) {
    edit_src(dir, name, |text| {
        text.replace("kernels::unfinished", "written_by_the_student")
    });
}

fn edit_src(dir: &Path, name: &str, edit: impl Fn(&str) -> String) {
    let src = dir.join("exercises").join(name).join("src");
    for entry in fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, edit(&text)).unwrap();
    }
}

fn course(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("course").unwrap();
    command
        .arg("--root")
        .arg(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"));
    command
}

fn stdout_of(command: &mut Command) -> String {
    let output = command.output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

fn success_stdout(command: &mut Command) -> String {
    let assert = command.assert().success();
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

#[test]
fn list_at_the_stub_state() {
    let dir = fixture();
    let out = success_stdout(course(dir.path()).arg("list"));
    insta::assert_snapshot!(out);
}

#[test]
fn list_with_one_exercise_finished() {
    let dir = fixture();
    finish(dir.path(), "vecadd-anyN");
    let out = success_stdout(course(dir.path()).arg("list"));
    insta::assert_snapshot!(out);
}

#[test]
fn next_names_the_first_exercise_and_its_first_step() {
    let dir = fixture();
    course(dir.path())
        .arg("next")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "vecadd-anyN: Vector add, any length",
        ))
        .stdout(predicate::str::contains("Step 1 of 6 is next"))
        .stdout(predicate::str::contains("docs/src/vecadd-anyN.md"));
    finish(dir.path(), "vecadd-anyN");
    // Written but not passed here: still next, and the way on is a check.
    course(dir.path())
        .arg("next")
        .assert()
        .success()
        .stdout(predicate::str::contains("Every step is written"))
        .stdout(predicate::str::contains("cargo course check vecadd-anyN"));
}

#[test]
fn hint_gives_one_hint_for_the_next_step_or_the_one_asked() {
    let dir = fixture();
    let first = stdout_of(course(dir.path()).args(["hint", "dot-sm"]));
    assert!(
        first.starts_with("dot-sm step 1 of 8 (src/kernel.cu):"),
        "{first}"
    );
    assert_eq!(first.matches("Hint:").count(), 1, "{first}");
    course(dir.path())
        .args(["hint", "dot-sm", "8"])
        .assert()
        .success()
        .stdout(predicate::str::contains("step 8 of 8 (src/main.rs)"))
        .stdout(predicate::str::contains("DeviceBuffer::drop"));
}

#[test]
fn unknown_exercises_and_steps_exit_2_naming_what_there_is() {
    let dir = fixture();
    for verb in [
        &["hint", "dot-xx"][..],
        &["check", "dot-xx"],
        &["watch", "dot-xx"],
        &["reset", "dot-xx", "--yes"],
    ] {
        course(dir.path())
            .args(verb)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "there is no exercise \"dot-xx\"; the exercises are: vecadd-anyN, dot-gm,",
            ));
    }
    course(dir.path())
        .args(["hint", "dot-sm", "9"])
        .assert()
        .code(2)
        .stderr("error: dot-sm has no step 9; its steps are 1 to 8\n");
    course(dir.path())
        .args(["hint", "dot-sm", "many"])
        .assert()
        .code(2);
}

#[test]
fn check_of_a_stub_builds_it_and_says_what_is_left() {
    // On this workspace: the stub as shipped builds.
    let assert = Command::cargo_bin("course")
        .unwrap()
        .current_dir(repo().join("exercises"))
        .args(["check", "vecadd-anyN"])
        .assert()
        .code(1);
    // On a failure, what cargo and nvcc said too: the build's errors go to stderr.
    let out = format!(
        "{}\n--- stderr:\n{}",
        String::from_utf8_lossy(&assert.get_output().stdout),
        String::from_utf8_lossy(&assert.get_output().stderr)
    );
    assert!(
        out.contains("steps      6 of 6 steps left (1, 2, 3, 4, 5, 6)"),
        "{out}"
    );
    assert!(out.contains("build      ok"), "{out}");
    assert!(out.contains("ptx        lacks gridDim.x read"), "{out}");
    assert!(out.contains("not done yet: 6 steps left"), "{out}");
    // With no GPU it says so; on a GPU the stub stops at its first host step.
    assert!(
        out.contains("needs a GPU, and none is usable here")
            || out.contains("stopped at a step not written yet"),
        "{out}"
    );
}

#[test]
fn check_of_an_exercise_that_does_not_build_says_so() {
    let dir = fixture();
    finish(dir.path(), "dot-gm");
    course(dir.path())
        .args(["check", "dot-gm"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("steps      all 6 written"))
        .stdout(predicate::str::contains("build      fails"))
        .stdout(predicate::str::contains("not done yet: it does not build."));
    let list = stdout_of(course(dir.path()).arg("list"));
    assert!(list.contains("dot-gm           does not build"), "{list}");
}

/// Lines of a running child's stdout, as they come.
fn lines_of(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if send.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    receive
}

/// Reads lines until one contains `text`; all lines read, or a panic.
fn wait_for(lines: &mpsc::Receiver<String>, text: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = String::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(text) {
                    return seen;
                }
            }
            Err(_) => break,
        }
    }
    panic!("no line with {text:?} within 60 s; saw:\n{seen}");
}

#[test]
fn watch_checks_again_when_a_file_is_saved() {
    let dir = fixture();
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("course"))
        .arg("--root")
        .arg(dir.path())
        .args(["watch", "vecadd-anyN"])
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = lines_of(&mut child);
    let first = wait_for(&lines, "Watching exercises/vecadd-anyN/src");
    assert!(first.contains("6 of 6 steps left"), "{first}");

    finish(dir.path(), "vecadd-anyN");
    let again = wait_for(&lines, "Watching exercises/vecadd-anyN/src");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(again.contains("changed: checking again."), "{again}");
    assert!(again.contains("steps      all 6 written"), "{again}");
}

fn git(dir: &Path, args: &[&str]) {
    let status = StdCommand::new("git")
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn reset_asks_first_and_changes_nothing_without_yes() {
    let dir = fixture();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "stubs",
        ],
    );
    let stub = fs::read_to_string(dir.path().join("exercises/vecadd-anyN/src/main.rs")).unwrap();
    finish(dir.path(), "vecadd-anyN");
    let main = dir.path().join("exercises/vecadd-anyN/src/main.rs");
    let edited = fs::read_to_string(&main).unwrap();
    assert_ne!(edited, stub);

    for answer in ["", "no\n", "n\n"] {
        course(dir.path())
            .args(["reset", "vecadd-anyN"])
            .write_stdin(answer)
            .assert()
            .code(1)
            .stdout(predicate::str::contains("Type yes to go on"))
            .stdout(predicate::str::contains("Nothing changed."));
        assert_eq!(fs::read_to_string(&main).unwrap(), edited);
    }

    course(dir.path())
        .args(["reset", "vecadd-anyN"])
        .write_stdin("yes\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("is the stub again"));
    assert_eq!(fs::read_to_string(&main).unwrap(), stub);

    finish(dir.path(), "vecadd-anyN");
    course(dir.path())
        .args(["reset", "vecadd-anyN", "--yes"])
        .assert()
        .success();
    assert_eq!(fs::read_to_string(&main).unwrap(), stub);
}

#[test]
fn reset_without_git_history_changes_nothing_and_says_why() {
    let dir = fixture();
    course(dir.path())
        .args(["reset", "vecadd-anyN", "--yes"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "reset needs the course's git history",
        ));
}

/// A vecadd kernel's PTX, as nvcc writes a module, with `body`.
fn vecadd_ptx(body: &str) -> String {
    format!(
        "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 7.8\n.target sm_75\n\
         .address_size 64\n\n.visible .entry vecadd(\n\t.param .u64 vecadd_param_0\n)\n{{\n\
         \t.reg .b32 %r<4>;\n{body}\tret;\n}}\n"
    )
}

/// A stand-in for an exercise binary built elsewhere: a script that holds
/// `ptx` (as a real binary embeds its PTX) and prints a passing report.
fn prebuilt(dir: &Path, ptx: &str) -> PathBuf {
    prebuilt_reporting(dir, ptx, true)
}

/// [`prebuilt`], its report's check `passed` or not.
fn prebuilt_reporting(dir: &Path, ptx: &str, passed: bool) -> PathBuf {
    let report = r#"{"schema_version":1,"exercise":"vecadd-anyN","device":{"name":"Test GPU","compute_capability":"9.0","multiprocessors":132,"memory_bytes":85899345920,"driver_cuda_version":"13.0"},"parameters":{"n":1000},"results":{},"check":{"passed":true,"criterion":"every c[i] equals a[i] + b[i]","compared":1000,"wrong":0,"failures":[]},"timings":[]}"#;
    let report = report.replace(r#""passed":true"#, &format!(r#""passed":{passed}"#));
    let path = dir.join("vecadd-anyN");
    let script = format!("#!/bin/sh\n: '{ptx}'\necho '{report}'\n");
    fs::write(&path, script).unwrap();
    let mut permissions = fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(&path, permissions).unwrap();
    path
}

/// A kernel's PTX with what vecadd-anyN teaches: a read of gridDim.x.
/// A vecadd kernel that reads gridDim.x, as nvcc writes its module.
const GOOD_PTX: &str = "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 7.8\n.target sm_75\n\
                        .address_size 64\n\n.visible .entry vecadd(\n\t.param .u64 vecadd_param_0\n)\n{\n\
                        \t.reg .b32 %r<4>;\n\tmov.u32 %r1, %nctaid.x;\n\tret;\n}\n";

/// `cargo course check vecadd-anyN` of a binary built elsewhere.
fn check_prebuilt(dir: &Path, binary: &Path) -> Command {
    let mut command = course(dir);
    command
        .args(["check", "vecadd-anyN", "--prebuilt"])
        .arg(binary);
    command
}

#[test]
fn check_says_done_only_when_steps_ptx_and_run_all_are() {
    let dir = fixture();
    let binary = prebuilt(dir.path(), GOOD_PTX);
    // The stub's steps are still there: a passing run is not enough.
    check_prebuilt(dir.path(), &binary)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("ptx        has gridDim.x read"))
        .stdout(predicate::str::contains("PASS").or(predicate::str::contains("pass")))
        .stdout(predicate::str::contains("not done yet: 6 steps left."));

    finish(dir.path(), "vecadd-anyN");
    check_prebuilt(dir.path(), &binary)
        .assert()
        .success()
        .stdout(predicate::str::contains("steps      all 6 written"))
        .stdout(predicate::str::contains(
            "done: vecadd-anyN is done. Every step is written, the kernel has what the",
        ))
        .stdout(predicate::str::contains("passes on Test GPU."));
    let list = stdout_of(course(dir.path()).arg("list"));
    assert!(
        list.contains("vecadd-anyN      done on this machine"),
        "{list}"
    );
    assert!(list.contains("] 1 of 8 done on this machine"), "{list}");

    // The same run with a kernel that never reads gridDim.x is not done,
    // even with a comment naming it (what `asm("// %nctaid.x")` leaves),
    // and `list` and `next` say what check said, though the run passed.
    let binary = prebuilt(dir.path(), &vecadd_ptx("\t// %nctaid.x\n"));
    check_prebuilt(dir.path(), &binary)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("ptx        lacks gridDim.x read"))
        .stdout(predicate::str::contains("not done yet: the kernel lacks"));
    let list = stdout_of(course(dir.path()).arg("list"));
    assert!(
        list.contains("> 1. vecadd-anyN      checked, not done yet"),
        "{list}"
    );
    assert!(list.contains("] 0 of 8 done on this machine"), "{list}");
    let next = stdout_of(course(dir.path()).arg("next"));
    assert!(next.starts_with("vecadd-anyN: "), "{next}");
}

#[test]
fn check_says_done_with_the_todo_comments_left_and_list_and_next_agree() {
    let dir = fixture();
    let binary = prebuilt(dir.path(), GOOD_PTX);
    finish_keeping_comments(dir.path(), "vecadd-anyN");
    let main = fs::read_to_string(dir.path().join("exercises/vecadd-anyN/src/main.rs")).unwrap();
    assert!(
        main.contains("// TODO(step 2)"),
        "the fixture lost its comments"
    );

    // Before a check: every step written, the comments notwithstanding.
    let list = stdout_of(course(dir.path()).arg("list"));
    assert!(
        list.contains("vecadd-anyN      all steps written, not checked"),
        "{list}"
    );
    let next = stdout_of(course(dir.path()).arg("next"));
    assert!(next.contains("Every step is written"), "{next}");

    let out = success_stdout(&mut check_prebuilt(dir.path(), &binary));
    assert!(out.contains("steps      all 6 written"), "{out}");
    assert!(out.contains("done: vecadd-anyN is done."), "{out}");
    // The comments are mentioned once, gently.
    assert_eq!(out.matches("TODO comments").count(), 1, "{out}");
    assert!(
        out.contains("The TODO comments of steps 1, 2, 3, 4, 5 and 6 are still in the code."),
        "{out}"
    );

    // After it: `list` and `next` say what check said.
    let list = stdout_of(course(dir.path()).arg("list"));
    assert!(
        list.contains("  1. vecadd-anyN      done on this machine"),
        "{list}"
    );
    assert!(list.contains("> 2. dot-gm"), "{list}");
    let next = stdout_of(course(dir.path()).arg("next"));
    assert!(next.starts_with("dot-gm: "), "{next}");
}

#[test]
fn a_failing_run_with_the_kernels_todo_comment_left_asks_about_the_kernel() {
    // Every placeholder gone, the kernel's comment still there, and the run
    // fails: maybe the kernel was never written (it has no placeholder).
    let dir = fixture();
    finish_keeping_comments(dir.path(), "vecadd-anyN");
    let binary = prebuilt_reporting(dir.path(), GOOD_PTX, false);
    let out = stdout_of(&mut check_prebuilt(dir.path(), &binary));
    assert!(out.contains("steps      all 6 written"), "{out}");
    assert!(
        out.contains("not done yet: its answer is wrong on Test GPU."),
        "{out}"
    );
    assert!(
        out.contains("Is src/kernel.cu written? The TODO comment of step 1 is still there."),
        "{out}"
    );
    let list = stdout_of(course(dir.path()).arg("list"));
    assert!(
        list.contains("vecadd-anyN      checked, not done yet"),
        "{list}"
    );
}

#[test]
fn one_step_left_is_one_step() {
    let dir = fixture();
    finish_keeping_comments(dir.path(), "vecadd-anyN");
    // Step 6's placeholder back in place: only it is left.
    let main = dir.path().join("exercises/vecadd-anyN/src/main.rs");
    let text = fs::read_to_string(&main).unwrap();
    let text = text.replace(
        "written_by_the_student::<()>(6)",
        "kernels::unfinished::<()>(6)",
    );
    fs::write(&main, text).unwrap();

    let list = stdout_of(course(dir.path()).arg("list"));
    assert!(
        list.contains("vecadd-anyN      1 of 6 steps left"),
        "{list}"
    );
    let next = stdout_of(course(dir.path()).arg("next"));
    assert!(next.contains("Step 6 of 6 is next"), "{next}");
    let binary = prebuilt(dir.path(), GOOD_PTX);
    let out = stdout_of(&mut check_prebuilt(dir.path(), &binary));
    assert!(out.contains("steps      1 of 6 steps left (6)"), "{out}");
    assert!(out.contains("not done yet: 1 step left."), "{out}");
    for text in [&list, &next, &out] {
        // "1 steps", but not "(11 steps)".
        let one_steps = text
            .match_indices("1 steps")
            .any(|(at, _)| !text[..at].ends_with(|c: char| c.is_ascii_digit()));
        assert!(!one_steps, "{text}");
    }
}

/// target/<profile>/, where the course's binaries are.
fn profile_dir() -> PathBuf {
    assert_cmd::cargo::cargo_bin("course")
        .parent()
        .unwrap()
        .to_owned()
}

#[test]
fn check_shows_the_emulators_finding_with_its_kernel_line() {
    // The solution's binary, made to load its PTX with the tree's barrier
    // taken out: the emulator finds the race, and check shows it whole.
    let solution = profile_dir().join("dot-sm-solution");
    let built = fs::read_dir(profile_dir().join("build"))
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("dot-sm-solution-")
        })
        .map(|e| e.path().join("out/kernel.ptx"))
        .find(|p| p.exists());
    let (true, Some(ptx)) = (solution.exists(), built) else {
        assert!(
            std::env::var_os("CUDA_COURSE_REQUIRE_BINARIES").is_none(),
            "dot-sm-solution is not built"
        );
        eprintln!("dot-sm-solution is not built: nothing to check");
        return;
    };
    let text = fs::read_to_string(ptx).unwrap();
    let barrier = text.rfind("bar.sync").expect("the tree's barrier");
    let end = barrier + text[barrier..].find(';').unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    let mutated = dir.path().join("kernel.ptx");
    fs::write(&mutated, format!("{}{}", &text[..barrier], &text[end..])).unwrap();
    let output = Command::cargo_bin("course")
        .unwrap()
        .args(["--root"])
        .arg(repo())
        .args(["check", "dot-sm", "--prebuilt"])
        .arg(&solution)
        .env("CUDA_COURSE_EMULATOR", "1")
        .env("CUDA_COURSE_KERNEL_PTX", &mutated)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    if !stdout.contains("cuda-course CPU emulator") && !stdout.contains("emulator ") {
        // A GPU ran it (a GPU machine): no emulator finding to show.
        eprintln!("not on the emulator: {stdout}");
        return;
    }
    assert!(
        stdout.contains("emulator   shared-memory race in kernel `dot`"),
        "{stdout}"
    );
    assert!(stdout.contains("kernel.cu:"), "{stdout}");
    assert!(!stdout.contains("compute-sanitizer"), "{stdout}");
}

/// [`prebuilt`], its report carrying the emulator's counters when it is
/// run with `--counters`: a stride-32 load, 32 sectors a request.
fn prebuilt_counting(dir: &Path) -> PathBuf {
    let path = prebuilt(dir, GOOD_PTX);
    let traffic =
        |r: u32, t: u32, i: u32| format!(r#"{{"requests":{r},"transactions":{t},"ideal":{i}}}"#);
    let none = traffic(0, 0, 0);
    let counts = format!(
        r#"{{"inst":40,"lanes":1280,"global_load":{},"global_store":{},"global_atomic":{none},"shared_load":{none},"shared_store":{none}}}"#,
        traffic(8, 256, 32),
        traffic(8, 32, 32),
    );
    let counters = format!(
        r#","counters":[{{"kernel":"vecadd","grid":[2,1,1],"block":[128,1,1],"shared":0,"dynamic_shared":0,"registers":12,"total":{counts},"lines":[{{"line":7,"counts":{counts}}}]}}]}}"#
    );
    let script = fs::read_to_string(&path).unwrap();
    let (head, echo) = script.split_once("echo '").unwrap();
    let report = echo.trim_end().strip_suffix("}'").unwrap();
    let script = format!(
        "{head}case \"$*\" in\n*--counters*) echo '{report}{counters}' ;;\n*) echo '{report}}}' ;;\nesac\n"
    );
    fs::write(&path, script).unwrap();
    path
}

#[test]
fn check_shows_the_emulators_counters_for_an_exercise_with_a_speed_point() {
    let dir = fixture();
    let binary = prebuilt_counting(dir.path());
    // vecadd-anyN has a speed point: its check asks for the counters.
    let shown = stdout_of(&mut check_prebuilt(dir.path(), &binary));
    assert!(
        shown.contains(
            "global loads    8 requests, 32.0 sectors a request (ideal 4.0): uncoalesced"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("costs most      kernel.cu:7: 224 memory"),
        "{shown}"
    );
    assert!(shown.contains("active lanes    32.0 of 32"), "{shown}");
    // A binary that gives none (a GPU's) gets one line that says why.
    let plain = prebuilt(dir.path(), GOOD_PTX);
    let shown = stdout_of(check_prebuilt(dir.path(), &plain).arg("--counters"));
    assert!(shown.contains("counters   none taken: on a GPU"), "{shown}");
}

#[test]
fn check_names_a_flag_the_program_refuses() {
    // Flags after `--` reach the exercise's program; one it refuses is
    // named first, not buried under "no result".
    let solution = profile_dir().join("vecadd-anyN-solution");
    if !solution.exists() {
        assert!(
            std::env::var_os("CUDA_COURSE_REQUIRE_BINARIES").is_none(),
            "vecadd-anyN-solution is not built"
        );
        return;
    }
    let output = Command::cargo_bin("course")
        .unwrap()
        .args(["--root"])
        .arg(repo())
        .args(["check", "vecadd-anyN", "--prebuilt"])
        .arg(&solution)
        .args(["--", "--n", "0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("run        refused its flags:"), "{stdout}");
    assert!(stdout.contains("'--n <N>'"), "{stdout}");
    assert!(!stdout.contains("gave no result"), "{stdout}");
}
