//! `grader` as an instructor meets it, on the grader's own test class: one
//! student who submitted every solution, one every stub, and one per mutant
//! or correct variant (grader::instructor::mutants). Built here without a GPU; run with
//! the GPU hidden, every run must end in a verdict, never a grader error.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn grader() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("grader"))
}

/// The grader's own test class, written by `grader mutants write`.
fn class(root: &Path) -> PathBuf {
    let submissions = root.join("submissions");
    grader()
        .args(["mutants", "write"])
        .arg(&submissions)
        .assert()
        .success();
    submissions
}

/// `grader build SUBMISSIONS --bundle BUNDLE FLAGS`, into a target folder
/// the tests share so that each builds only what changed.
fn build(submissions: &Path, bundle: &Path, flags: &[&str]) {
    grader()
        .arg("build")
        .arg(submissions)
        .arg("--bundle")
        .arg(bundle)
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps"))
        .args(flags)
        .assert()
        .success();
}

/// The grader's class (`class`) in `root`, built for `exercise` alone
/// under `seed` into `root/bundle`.
fn class_bundle(root: &Path, exercise: &str, seed: u64) -> PathBuf {
    let submissions = class(root);
    let bundle = root.join("bundle");
    build(
        &submissions,
        &bundle,
        &["--exercise", exercise, "--seed", &seed.to_string()],
    );
    bundle
}

/// `grader run BUNDLE --out OUT FLAGS` with no GPU visible, as on a GPU
/// node (see [`hiding_the_gpu`]).
fn run_hiding_the_gpu(bundle: &Path, out: &Path, flags: &[&str]) -> Command {
    let mut run = grader();
    run.arg("run").arg(bundle).arg("--out").arg(out).args(flags);
    hiding_the_gpu(&mut run);
    run
}

/// The grader told there is a GPU (an nvidia-smi that lists one), which
/// CUDA then cannot see: it grades as on a GPU node, without the emulator,
/// and every run must end in a verdict.
fn hiding_the_gpu(command: &mut Command) -> &mut Command {
    command
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED)
}

/// An nvidia-smi that lists a GPU.
const GPU_LISTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/nvidia-smi-listing-a-gpu"
);

#[test]
fn a_class_is_built_without_a_gpu_and_graded_without_a_grader_error() {
    let dir = tempfile::tempdir().unwrap();
    let submissions = class(dir.path());
    let bundle = dir.path().join("bundle");
    build(&submissions, &bundle, &["--seed", "11"]);

    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(bundle.join("bundle.json")).unwrap()).unwrap();
    let items = manifest["items"].as_array().unwrap();
    let mutants = grader::instructor::mutants::MUTANTS.len();
    assert_eq!(items.len(), (2 + mutants) * 8);
    for item in items {
        let student = item["student"].as_str().unwrap();
        let exercise = item["exercise"].as_str().unwrap();
        if !item["absent"].is_null() {
            // A mutant's student submitted only the exercise it breaks.
            assert!(!student.starts_with(&format!("{exercise}.")), "{item}");
            continue;
        }
        let missing = item["ptx_missing"].as_array().unwrap();
        assert!(item["build_errors"].is_null(), "{item}");
        assert!(
            bundle.join(item["binary"].as_str().unwrap()).is_file(),
            "{item}"
        );
        // Every solution's kernel shows what its exercise is about, and no
        // stub's; the mutants' expectations are grader::instructor::mutants::verify's.
        match student {
            "solutions" => assert!(missing.is_empty(), "{item}"),
            "stubs" => assert!(!missing.is_empty(), "{item}"),
            _ => {}
        }
        // The kernel as built, kept read-only for the reference binary.
        let ptx = bundle.join(item["ptx"]["path"].as_str().unwrap());
        assert!(
            fs::metadata(&ptx).unwrap().permissions().readonly(),
            "{item}"
        );
    }
    // The course's own host code, one binary per exercise.
    let reference = manifest["reference"].as_object().unwrap();
    assert_eq!(reference.len(), 8, "{reference:?}");
    for kept in reference.values() {
        for file in ["binary", "ptx"] {
            assert!(bundle.join(kept[file]["path"].as_str().unwrap()).is_file());
        }
    }
    // The broker and its client, and a canary of its own for every item
    // that built, never inside a student's build folder.
    for (file, name) in [("broker", "cuda-course-broker"), ("client", "libcuda.so.1")] {
        let path = bundle.join(manifest["broker"][file]["path"].as_str().unwrap());
        assert!(path.ends_with(format!("broker/{name}")) && path.is_file());
    }
    for item in items.iter().filter(|i| i["binary"].is_string()) {
        let canary = item["canary"]["ptx"]["path"].as_str().unwrap();
        assert!(
            canary.starts_with("ptx/") && canary.ends_with("--canary.ptx"),
            "{item}"
        );
        assert!(
            fs::read_to_string(bundle.join(canary))
                .unwrap()
                .contains(".entry")
        );
    }

    let out = dir.path().join("out");
    run_hiding_the_gpu(&bundle, &out, &["--timeout", "30"])
        .assert()
        .success()
        .stdout(predicate::str::contains("solutions"));

    let results: Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["seed"], 11);
    for exercise in results["students"]["solutions"]["exercises"]
        .as_object()
        .unwrap()
        .values()
    {
        // No device: one PTX point, and every run a CUDA error, not a grader
        // error. Where the sandbox does reach a device, full marks.
        // The runs above 2^31 elements: skipped, no points either way,
        // since nvidia-smi here gives no free memory to fit them in.
        let (skipped, runs): (Vec<&Value>, Vec<&Value>) = exercise["runs"]
            .as_array()
            .unwrap()
            .iter()
            .partition(|r| r["verdict"]["kind"] == "skipped");
        for run in &skipped {
            assert_eq!(run["tag"], "past-int", "{run}");
            assert_eq!(run["verdict"]["reason"]["shortfall"]["of"], "gpu", "{run}");
            let why = verdict_said(run);
            assert!(why.contains("GPU's free memory could not be read"), "{why}");
            assert_eq!(run["max_points"], 0, "{run}");
        }
        let kinds: Vec<&Value> = runs.iter().map(|r| &r["verdict"]["kind"]).collect();
        // Each other planned run twice: the kernel in the reference binary,
        // then the student's binary.
        assert!(runs.len() >= 2 && runs.len() % 2 == 0, "{exercise}");
        for pair in runs.chunks(2) {
            assert_eq!(pair[0]["role"], "kernel-in-course-host", "{exercise}");
            assert!(pair[0]["ptx"].is_string(), "{exercise}");
            assert!(
                pair[0]["command"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("reference/")
            );
            assert_eq!(pair[1]["role"], "student-host", "{exercise}");
            assert!(pair[1].get("ptx").is_none(), "{exercise}");
            // The tracer was preloaded into the student's binary (its
            // header came through the pipe) and the trace read.
            assert!(pair[1]["trace_calls"].is_u64(), "{exercise}");
        }
        if kinds.iter().all(|k| *k == "cuda-error") {
            // The PTX point, and the lesson's where the exercise counts
            // one: the emulator counts it on the node's processor, GPU or
            // none.
            let lesson = (exercise["checks"].as_array().unwrap().iter())
                .find(|c| c["name"] == "lesson")
                .map_or(0, |c| {
                    assert_eq!(c["passed"], true, "{exercise}");
                    c["points"].as_u64().unwrap()
                });
            assert_eq!(exercise["points"], 1 + lesson, "{exercise}");
        } else {
            assert!(kinds.iter().all(|k| *k == "passed"), "{exercise}");
            assert_eq!(exercise["points"], exercise["max_points"], "{exercise}");
        }
    }
    let grades = fs::read_to_string(out.join("grades.csv")).unwrap();
    assert_eq!(grades.lines().count(), 3 + mutants, "{grades}");
    assert!(
        grades
            .lines()
            .any(|l| l.starts_with("stubs,") && l.contains(",0,")),
        "{grades}"
    );
    let feedback = fs::read_to_string(out.join("feedback/stubs.md")).unwrap();
    assert!(
        feedback.contains("does not show what the exercise is about"),
        "{feedback}"
    );

    // A grader killed after writing some students: results.json then holds
    // exactly those (it is rewritten whole, atomically, after each one).
    // --resume grades the rest, and only the rest.
    let complete = fs::read_to_string(out.join("results.json")).unwrap();
    let mut killed: Value = serde_json::from_str(&complete).unwrap();
    killed["students"].as_object_mut().unwrap().remove("stubs");
    fs::write(
        out.join("results.json"),
        serde_json::to_string(&killed).unwrap(),
    )
    .unwrap();
    let resumed = run_hiding_the_gpu(&bundle, &out, &["--resume"])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&resumed.get_output().stderr).into_owned();
    assert_eq!(said.matches("grader: graded").count(), 1, "{said}");
    assert!(said.contains("grader: graded stubs"), "{said}");
    let redone: Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let complete: Value = serde_json::from_str(&complete).unwrap();
    for (student, record) in complete["students"].as_object().unwrap() {
        if student != "stubs" {
            // Graded before the kill: carried over untouched.
            assert_eq!(redone["students"][student], *record, "{student}");
        }
    }
    // Regraded: the same outcome; only the run times differ.
    assert_eq!(
        without_durations(&redone["students"]["stubs"]),
        without_durations(&complete["students"]["stubs"])
    );

    // Resuming finds everyone done and changes nothing.
    let before = fs::read_to_string(out.join("results.json")).unwrap();
    run_hiding_the_gpu(&bundle, &out, &["--resume"])
        .assert()
        .success()
        .stderr(predicate::str::contains("graded").not());
    assert_eq!(
        fs::read_to_string(out.join("results.json")).unwrap(),
        before
    );

    // Reports can be written again from results.json alone.
    fs::remove_file(out.join("grades.csv")).unwrap();
    grader()
        .args(["report", out.to_str().unwrap()])
        .assert()
        .success();
    assert_eq!(fs::read_to_string(out.join("grades.csv")).unwrap(), grades);
}

#[test]
fn grade_builds_runs_and_reports_in_one_command() {
    let dir = tempfile::tempdir().unwrap();
    let submissions = class(dir.path());
    let out = dir.path().join("out");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps");
    let mut grade = grader();
    grade
        .arg("grade")
        .arg(&submissions)
        .args(["--exercise", "vecadd-anyN", "--seed", "5", "--out"])
        .arg(&out)
        .arg("--target-dir")
        .arg(&target);
    hiding_the_gpu(&mut grade)
        .assert()
        .success()
        .stdout(predicate::str::contains("solutions").and(predicate::str::contains("stubs")));
    assert!(out.join("bundle/bundle.json").is_file());
    let results: Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["seed"], 5);
    // With no GPU, only the PTX point is earned, and the lesson point,
    // which the CPU emulator counts on the node's processor, and only by a
    // kernel that shows the exercise: the build, the PTX inspection and the
    // counted run all happened.
    let points =
        |student: &str| results["students"][student]["exercises"]["vecadd-anyN"]["points"].clone();
    assert_eq!(points("solutions"), 2, "{results}");
    assert_eq!(points("stubs"), 0, "{results}");
    assert!(
        fs::read_to_string(out.join("grades.csv"))
            .unwrap()
            .starts_with("student,vecadd-anyN,total,max")
    );
}

#[test]
fn check_grades_one_exercise_and_says_what_it_found() {
    let solution = Path::new(env!("CARGO_MANIFEST_DIR")).join("../solutions/dot-sm");
    // No GPU: the runs fail, so not every point is earned, and the exit
    // status says so.
    hiding_the_gpu(
        grader()
            .args(["check", "dot-sm", "--seed", "1", "--path"])
            .arg(&solution),
    )
    .assert()
    .code(1)
    .stdout(
        predicate::str::contains("## dot-sm: 1 of 13 points").and(predicate::str::contains(
            "The kernel shows what the exercise is about",
        )),
    );
    // A linked kernel is refused by check as by grading, not skipped.
    let linked = tempfile::tempdir().unwrap();
    let src = linked.path().join("src");
    fs::create_dir(&src).unwrap();
    fs::copy(solution.join("src/main.rs"), src.join("main.rs")).unwrap();
    std::os::unix::fs::symlink(solution.join("src/kernel.cu"), src.join("kernel.cu")).unwrap();
    hiding_the_gpu(
        grader()
            .args(["check", "dot-sm", "--seed", "1", "--path"])
            .arg(linked.path()),
    )
    .assert()
    .code(1)
    .stdout(predicate::str::contains("kernel.cu is a symbolic link"));
    grader()
        .args(["check", "dot-smm"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("dot-smm").and(predicate::str::contains("dot-sm,")));
    grader()
        .args(["check", "dot-sm", "--path", "/nonexistent/dot-sm"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "grader: error: /nonexistent/dot-sm",
        ));
}

#[test]
fn bad_arguments_name_the_flag() {
    grader()
        .args(["build", "x", "--bundle", "y", "--exercise", "dot-smm"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--exercise").and(predicate::str::contains("dot-sm")));
    grader()
        .args(["run", "nowhere", "--timeout", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--timeout"));
    // --jobs, on every command that takes it: 1 to 256, said in one line.
    for command in [
        &["run", "nowhere"][..],
        &["build", "x", "--bundle", "y"],
        &["grade", "x"],
        &["check", "dot-sm"],
    ] {
        for bad in ["0", "257", "many"] {
            let refused = grader()
                .args(command)
                .args(["--jobs", bad])
                .assert()
                .code(2);
            let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
            let first = said.lines().next().unwrap_or_default();
            assert!(
                first.contains("--jobs") && first.contains(bad),
                "{command:?} --jobs {bad}: {said}"
            );
        }
    }
}

#[test]
fn a_missing_bundle_is_an_error_not_a_panic() {
    grader()
        .args(["run", "/no/such/bundle", "--out"])
        .arg(tempfile::tempdir().unwrap().path())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("bundle.json").and(predicate::str::contains("panicked").not()),
        );
}

/// A compute-sanitizer in `dir` that runs the shell lines `body` (its
/// arguments are the tool's: `$2` names the tool).
#[cfg(unix)]
fn fake_sanitizer(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let fake = dir.join("compute-sanitizer");
    fs::write(&fake, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    fake
}

#[test]
#[cfg(unix)]
fn memory_safety_is_a_point_lost_to_what_compute_sanitizer_found() {
    // A fake compute-sanitizer: memcheck finds two errors, racecheck none.
    // Given a batch of runs, it answers each with its frame, as the course's
    // binary would.
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_sanitizer(
        dir.path(),
        "if [ -n \"$CUDA_COURSE_BATCH\" ]; then\n\
           nonce=$(head -n 1 \"$CUDA_COURSE_BATCH\"); k=0\n\
           tail -n +2 \"$CUDA_COURSE_BATCH\" | while read -r _; do\n\
             printf '\\n%s %s 0 900 {}\\n' \"$nonce\" $k; printf '\\n%s %s\\n' \"$nonce\" $k >&2\n\
             k=$((k + 1))\n\
           done\n\
         fi\n\
         if [ \"$2\" = memcheck ]; then echo '========= ERROR SUMMARY: 2 errors'; exit 9; fi\n\
         echo '========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)'",
    );
    let bundle = class_bundle(dir.path(), "dot-sm", 3);
    let out = dir.path().join("out");
    // By default: the memory-safety point, lost to memcheck's findings.
    let timeline = dir.path().join("timeline.tsv");
    run_hiding_the_gpu(&bundle, &out, &[])
        .env("COMPUTE_SANITIZER", &fake)
        .env("GRADER_TIMELINE", &timeline)
        .assert()
        .success();
    // The timeline has a line for each tool's process: for each exercise's
    // tool, one over all its runs, which stands where it found nothing
    // (racecheck's), and a process a run after it where not (memcheck's).
    let timeline = fs::read_to_string(&timeline).unwrap();
    let tools: Vec<Vec<&str>> = timeline
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|row| row[1] == "compute-sanitizer")
        .collect();
    let recorded: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let mut processes = 0;
    let mut batched = 0;
    for exercise in recorded["students"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|student| student["exercises"].as_object().unwrap().values())
    {
        let records = exercise["sanitizer"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for tool in ["memcheck", "racecheck", "initcheck", "synccheck"] {
            // A tool left out as it could find nothing (`not_run`) made no run.
            let made: Vec<&serde_json::Value> = records
                .iter()
                .filter(|r| r["tool"] == tool && r["not_run"].is_null())
                .collect();
            let in_one = made.iter().filter(|r| r["in_one_process"] == true).count();
            assert!(in_one == 0 || in_one == made.len(), "{records:?}");
            // memcheck found errors: its batch did not stand.
            assert_eq!(
                in_one > 0,
                tool != "memcheck" && made.len() > 1,
                "{records:?}"
            );
            batched += in_one;
            processes += match made.len() {
                0 => 0,
                1 => 1,
                n if in_one == n => 1,
                n => 1 + n,
            };
        }
    }
    assert!(batched > 0 && tools.len() == processes, "{timeline}");
    // And a line for each exercise submitted, spanning its runs.
    let exercises = recorded["students"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|student| student["exercises"].as_object().unwrap().values())
        .filter(|exercise| exercise["absent"].is_null())
        .count();
    let spans = timeline
        .lines()
        .filter(|l| l.split('\t').nth(1) == Some("exercise"))
        .count();
    assert!(exercises > 0 && spans == exercises, "{timeline}");
    for row in &tools {
        let [asked, from, to] = [2, 3, 4].map(|k| row[k].parse::<f64>().unwrap());
        assert!(
            row[0] == "0" && 0.0 <= asked && asked <= from && from <= to,
            "{timeline}"
        );
    }
    let feedback = fs::read_to_string(out.join("feedback/solutions.md")).unwrap();
    assert!(
        feedback.contains("- 0 of 1, memory safety: in the run \"one element, ")
            && feedback.contains(": memcheck: ERROR SUMMARY: 2 errors\n"),
        "{feedback}"
    );
    assert!(!feedback.contains("racecheck:"), "{feedback}");
    // --no-sanitize: not assessed, and not in the points either.
    let skipped = dir.path().join("skipped");
    run_hiding_the_gpu(&bundle, &skipped, &["--no-sanitize"])
        .env("COMPUTE_SANITIZER", &fake)
        .assert()
        .success();
    let feedback = fs::read_to_string(skipped.join("feedback/solutions.md")).unwrap();
    assert!(
        feedback.contains("- memory safety: not assessed: graded with --no-sanitize"),
        "{feedback}"
    );
    let results = |out: &Path| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
    };
    let max = |out: &Path| {
        results(out)["students"]["solutions"]["exercises"]["dot-sm"]["max_points"].as_u64()
    };
    assert_eq!(max(&out).unwrap(), max(&skipped).unwrap() + 1);
}

#[test]
#[cfg(unix)]
fn each_tool_goes_over_an_exercise_s_runs_in_one_process_of_the_course_s_binary() {
    // A compute-sanitizer that makes the program it is given (the course's
    // binary, on the CPU emulator here, which the hidden GPU would hide too)
    // and finds nothing: the frames that say each run of the batch was
    // made are the binary's own.
    let dir = tempfile::tempdir().unwrap();
    let bundle = class_bundle(dir.path(), "vecadd-anyN", 3);
    let fake = fake_sanitizer(
        dir.path(),
        &format!(
            "shift 2\nunset CUDA_VISIBLE_DEVICES\nLD_LIBRARY_PATH='{}' \"$@\"\n\
             echo '========= ERROR SUMMARY: 0 errors'",
            bundle.join("emulator").display()
        ),
    );
    let out = dir.path().join("out");
    run_hiding_the_gpu(&bundle, &out, &["--no-sandbox"])
        .env("COMPUTE_SANITIZER", &fake)
        .assert()
        .success();
    let recorded: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let solutions = &recorded["students"]["solutions"]["exercises"]["vecadd-anyN"]["sanitizer"];
    // memcheck over both runs from one process (racecheck, synccheck and
    // initcheck can find nothing in vecadd's kernel).
    let made: Vec<(&str, &str, bool)> = solutions
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["not_run"].is_null())
        .map(|r| {
            (
                r["tool"].as_str().unwrap(),
                r["run"].as_str().unwrap(),
                r["in_one_process"] == true,
            )
        })
        .collect();
    assert_eq!(
        made,
        [
            ("memcheck", "one-element", true),
            ("memcheck", "grid-smaller-than-n", true),
        ],
        "{solutions}"
    );
}

#[test]
#[cfg(unix)]
fn racecheck_goes_over_a_few_of_memspace_timing_s_blocks_and_the_other_tools_over_the_grid() {
    // A fake compute-sanitizer that finds nothing, with its command line
    // in its summary (which results.json keeps).
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_sanitizer(
        dir.path(),
        "if [ \"$2\" = racecheck ]; then\n\
         echo \"========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings) $*\"\n\
         else echo \"========= ERROR SUMMARY: 0 errors $*\"; fi",
    );
    let bundle = class_bundle(dir.path(), "memspace-timing", 5);
    let out = dir.path().join("out");
    run_hiding_the_gpu(&bundle, &out, &[])
        .env("COMPUTE_SANITIZER", &fake)
        .assert()
        .success();
    let recorded: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let exercise = &recorded["students"]["solutions"]["exercises"]["memspace-timing"];
    // The plan's grids: the per-thread run's above three blocks, the
    // uniform one's the default (no --blocks).
    let grid = |tag: &str| -> Option<String> {
        exercise["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["tag"] == tag)
            .map(|r| r["params"]["blocks"].to_string())
            .filter(|b| b != "null")
    };
    let per_thread = grid("per-thread-reads").unwrap();
    assert!(per_thread.parse::<u32>().unwrap() > 3 && grid("uniform-reads").is_none());
    // racecheck over three blocks of each run, the other tools that ran
    // over the planned grid (initcheck can find nothing in a kernel that
    // allocates nothing); each record says how many blocks its tool went
    // over.
    let records = exercise["sanitizer"].as_array().unwrap();
    assert_eq!(records.len(), 8, "{records:?}");
    let made: Vec<&serde_json::Value> = records.iter().filter(|r| r["not_run"].is_null()).collect();
    assert_eq!(made.len(), 6, "{records:?}");
    for record in made {
        let summary = record["summary"].as_str().unwrap();
        let blocks = summary
            .split(" --blocks ")
            .nth(1)
            .map(|b| b.split(' ').next().unwrap());
        let racecheck = record["tool"] == "racecheck";
        let planned = match record["run"].as_str().unwrap() {
            "per-thread-reads" => Some(per_thread.as_str()),
            _ => None,
        };
        if racecheck {
            assert_eq!(
                (blocks, &record["blocks"]),
                (Some("3"), &serde_json::json!(3)),
                "{record}"
            );
        } else {
            assert!(blocks == planned && record["blocks"].is_null(), "{record}");
        }
    }
    let feedback = fs::read_to_string(out.join("feedback/solutions.md")).unwrap();
    assert!(
        feedback.contains("(racecheck over grids of 3 of their blocks; initcheck not run: "),
        "{feedback}"
    );
}

#[test]
fn a_class_graded_on_the_emulator_passes_the_solution_and_names_the_race_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = class_bundle(dir.path(), "dot-sm", 4);
    assert!(bundle.join("emulator/libcuda.so.1").is_file());
    let out = dir.path().join("out");
    let graded = grader()
        .arg("run")
        .arg(&bundle)
        .arg("--out")
        .arg(&out)
        .args(["--emulate", "--timeout", "120"])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&graded.get_output().stderr).into_owned();
    assert!(
        said.contains("--emulate: kernels run on the CPU emulator"),
        "{said}"
    );
    let summary = String::from_utf8_lossy(&graded.get_output().stdout).into_owned();
    assert!(summary.contains("Graded on the CPU emulator"), "{summary}");

    let results: Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["emulated"], true);
    let dot = |student: &str| results["students"][student]["exercises"]["dot-sm"].clone();
    // The kernels really ran: the solution at full marks, at the capped
    // sizes, and the stub at none.
    let solution = dot("solutions");
    assert_eq!(solution["points"], solution["max_points"], "{solution}");
    // The memory-safety point too, from the emulator's own checks.
    assert_eq!(solution["points"], 12, "{solution}");
    for run in solution["runs"].as_array().unwrap() {
        let n = run["report"]["parameters"]["n"].as_u64().unwrap();
        assert!(n < 1 << 20, "{run}");
        assert!(
            run["report"]["device"]["name"]
                .as_str()
                .unwrap()
                .contains("emulator")
        );
    }
    assert_eq!(dot("stubs")["points"], 0);
    // The race is named with its kernel.cu line. The emulator carries on
    // as a GPU would, so the race costs the memory-safety point, as
    // racecheck's finding does on a GPU.
    let race = dot("dot-sm.no-barrier-in-the-tree");
    let named: Vec<&Value> = race["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["findings"][0]["kind"] == "shared-memory-race")
        .collect();
    assert!(!named.is_empty(), "{race}");
    assert!(named[0]["findings"][0]["line"].is_u64(), "{}", named[0]);
    let message = verdict_said(named[0]);
    assert!(
        message.contains("the CPU emulator found: shared-memory race")
            && message.contains("kernel.cu:"),
        "{message}"
    );
    let safety = race["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "memory-safety")
        .unwrap();
    assert_eq!(
        (&safety["assessed"], &safety["passed"], &safety["points"]),
        (&Value::Bool(true), &Value::Bool(false), &Value::from(0)),
        "{safety}"
    );
    let feedback =
        fs::read_to_string(out.join("feedback/dot-sm.no-barrier-in-the-tree.md")).unwrap();
    assert!(feedback.contains("shared-memory race"), "{feedback}");
    // A run that passed shows its finding too: the point lost names it.
    assert!(
        feedback
            .contains(": passed, but:\n\n  ```text\n  the CPU emulator found: shared-memory race"),
        "{feedback}"
    );
    assert!(
        feedback.contains("Graded on the CPU emulator"),
        "{feedback}"
    );
    let grades = fs::read_to_string(out.join("grades.csv")).unwrap();
    assert!(
        grades.starts_with("student,dot-sm,total,max,graded_on,integrity\n"),
        "{grades}"
    );
    assert!(
        grades.contains("solutions,12,12,12,cpu-emulator,\n"),
        "{grades}"
    );

    // A bundle without the library, or with another one, is refused
    // before anyone is graded.
    fs::write(bundle.join("emulator/libcuda.so.1"), b"another library").unwrap();
    grader()
        .arg("run")
        .arg(&bundle)
        .arg("--out")
        .arg(dir.path().join("again"))
        .arg("--emulate")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is not the emulator library that was built",
        ));
    assert!(!dir.path().join("again/results.json").exists());
}

#[test]
fn no_emulate_without_a_gpu_stops_before_building_or_grading_anyone() {
    let dir = tempfile::tempdir().unwrap();
    let said = "grader: error: --no-emulate: no NVIDIA GPU is usable here";
    grader()
        .args(["run", "/no/such/bundle", "--no-emulate", "--out"])
        .arg(dir.path().join("out"))
        .env(grader::run::device::NVIDIA_SMI_ENV, "/no/such/nvidia-smi")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(said).and(predicate::str::contains("drop --no-emulate")));
    // Before the build: the submissions are not even looked at.
    grader()
        .args(["grade", "/no/such/submissions", "--no-emulate", "--out"])
        .arg(dir.path().join("out"))
        .env(grader::run::device::NVIDIA_SMI_ENV, "/no/such/nvidia-smi")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(said));
    assert!(!dir.path().join("out").exists());
    grader()
        .args(["run", "x", "--emulate", "--no-emulate"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--no-emulate"));
}

/// A results record without what differs between two gradings of the same
/// submission: every run's `duration_ms` and every sanitizer tool's `seconds`.
fn without_durations(record: &Value) -> Value {
    match record {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                // A run's duration and a sanitizer tool's wall time.
                .filter(|(name, _)| *name != "duration_ms" && *name != "seconds")
                .map(|(name, value)| (name.clone(), without_durations(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_durations).collect()),
        other => other.clone(),
    }
}

/// What a student reads of a run's verdict in results.json.
fn verdict_said(run: &Value) -> String {
    let run: grader::record::results::Run = serde_json::from_value(run.clone()).unwrap();
    grader::record::render::verdict(&run.verdict, &run.findings)
}

#[test]
fn report_refuses_a_schema_1_results_json_in_one_line_and_report_renders_schema_2() {
    let dir = tempfile::tempdir().unwrap();
    // The H200's grading of November, by a grader that kept rendered
    // messages (schema 1).
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    fs::copy(
        fixtures.join("h200-class-results.json"),
        dir.path().join("results.json"),
    )
    .unwrap();
    let refused = grader().arg("report").arg(dir.path()).assert().code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with("grader: error: ")
            && errors[0].contains("has schema_version 1; this grader reads 2"),
        "{stderr}"
    );
    assert!(!dir.path().join("grades.csv").exists());
    // The golden class's grading, schema 2: grades.csv as it was graded.
    fs::copy(
        fixtures.join("golden-class/results.json"),
        dir.path().join("results.json"),
    )
    .unwrap();
    grader().arg("report").arg(dir.path()).assert().success();
    assert_eq!(
        fs::read_to_string(dir.path().join("grades.csv")).unwrap(),
        fs::read_to_string(fixtures.join("golden-class/grades.csv")).unwrap()
    );
}
