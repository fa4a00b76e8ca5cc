//! The instructor's side, as a new instructor meets it: the four-student
//! class of scripts/instructor-class.sh (a whole-workspace copy, bare
//! copies of solutions, the stubs, a kernel that does not compile) graded
//! from another working folder with relative paths, exported for Canvas
//! and Moodle, one student regraded; and the similarity report. Built here
//! without a GPU: every run is a CUDA error, the PTX point is earned.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn grader() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("grader"))
}

fn course() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// What grading found for one student's exercises, without what names
/// the student (binary names) or varies (durations).
fn outcome(results: &Value, student: &str) -> Vec<(String, Value, Vec<Value>)> {
    results["students"][student]["exercises"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, e)| {
            let kinds = e["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["verdict"]["kind"].clone())
                .collect();
            let kept =
                serde_json::json!([e["points"], e["max_points"], e["ptx_missing"], e["absent"]]);
            (name.clone(), kept, kinds)
        })
        .collect()
}

/// `text` without the part from `from` up to `to`: a record cut out of
/// results.json, to compare the rest byte for byte.
fn without(text: &str, from: &str, to: &str) -> String {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from} not in {text}"));
    let end = text
        .find(to)
        .unwrap_or_else(|| panic!("{to} not in {text}"));
    format!("{}{}", &text[..start], &text[end..])
}

#[test]
fn a_four_student_class_graded_exported_and_regraded_from_another_folder() {
    // The working folder: inside the course's target/, so the course is
    // found by walking up, and the shared target folder is a relative path.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tempfile::tempdir_in(tmp).unwrap();
    let here = dir.path();
    let script = course().join("scripts/instructor-class.sh");
    let written = std::process::Command::new("bash")
        .arg(&script)
        .arg(here)
        .output()
        .unwrap();
    assert!(written.status.success(), "{written:?}");

    let graded = grader()
        .current_dir(here)
        .args(["grade", "submissions", "--out", "grading", "--seed", "7"])
        .args(["--exercise", "vecadd-anyN", "--exercise", "dot-sm"])
        .args(["--target-dir", "../grader-cli"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&graded.get_output().stderr).into_owned();
    let summary = String::from_utf8_lossy(&graded.get_output().stdout).into_owned();
    // The course is named before anything is graded (after the line on
    // how student code is confined).
    let first = said
        .lines()
        .take(2)
        .find(|l| l.starts_with("grader: course"))
        .unwrap_or_default();
    assert_eq!(
        first,
        format!(
            "grader: course {} (the workspace around the working folder)",
            course().display()
        )
    );
    // Only what was submitted is counted: dee handed in one exercise.
    assert!(
        said.contains("4 students, 7 exercises submitted, 1 did not build, 1 not submitted"),
        "{said}"
    );
    assert!(
        said.contains("ada: \"cuda-course/solutions\" holds the course's reference solutions"),
        "{said}"
    );
    assert!(!said.contains("places that differ"), "{said}");
    // Relative paths are the caller's: the bundle is in ./grading, the
    // build in the shared target folder, nothing under the scratch build.
    let out = here.join("grading");
    assert!(out.join("bundle/bundle.json").is_file());
    assert!(!out.join("bundle/.build/workspace/grading").exists());
    assert!(!out.join("bundle/.build/target").exists());
    // The dependencies, compiled once in the sandbox (compile::Builder::deps).
    assert!(tmp.join("grader-cli/deps/target/release").is_dir());

    // The whole-workspace copy is graded as the bare folders are.
    let results: Value = serde_json::from_str(&read(&out.join("results.json"))).unwrap();
    assert_eq!(outcome(&results, "ada"), outcome(&results, "bo"));
    // The PTX point at least; the runs' points depend on the device (none
    // here, the CPU emulator, or a GPU), which the counts below follow.
    assert!(
        results["students"]["ada"]["exercises"]["dot-sm"]["points"]
            .as_u64()
            .is_some_and(|p| p >= 1),
        "{results}"
    );
    let mut verdicts = std::collections::BTreeMap::<String, usize>::new();
    for run in results["students"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|s| s["exercises"].as_object().unwrap().values())
        .flat_map(|e| e["runs"].as_array().unwrap())
    {
        *verdicts
            .entry(run["verdict"]["kind"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    let counted: Vec<String> = verdicts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    assert!(
        summary.contains(&format!(
            "4 students; 7 exercises submitted, 1 did not build, 1 not submitted; runs: {}",
            counted.join(", ")
        )),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("dee ") && l.contains("no build"))
    );
    let grades = read(&out.join("grades.csv"));
    assert_eq!(
        grades,
        "student,vecadd-anyN,dot-sm,total,max,integrity\nada,2,1,3,29,\nbo,2,1,3,29,\ncy,0,0,0,29,\n\
         dee,,0,0,29,\n"
    );
    let similarity = read(&out.join("similarity.md"));
    assert!(
        similarity.contains("## dot-sm src/kernel.cu: ada, bo, the reference solution\n"),
        "{similarity}"
    );
    assert!(similarity.contains("- ada and bo\n"), "{similarity}");

    // Exports, as each LMS imports them.
    for lms in ["canvas", "moodle"] {
        grader()
            .current_dir(here)
            .args(["export", "grading", "--lms", lms, "--roster", "roster.csv"])
            .assert()
            .success()
            .stderr(predicate::str::contains(
                "eve is in the roster but has no submission: blank grades",
            ));
    }
    insta::assert_snapshot!("canvas", read(&out.join("canvas.csv")));
    insta::assert_snapshot!("moodle", read(&out.join("moodle.csv")));

    // cy hands in a solved vecadd-anyN, and only cy is regraded.
    let cy = here.join("submissions/cy/vecadd-anyN/src");
    for file in ["main.rs", "kernel.cu"] {
        fs::copy(
            course().join("solutions/vecadd-anyN/src").join(file),
            cy.join(file),
        )
        .unwrap();
    }
    let before = read(&out.join("results.json"));
    let feedback = |who: &str| read(&out.join(format!("feedback/{who}.md")));
    let others: Vec<String> = ["ada", "bo", "dee"].iter().map(|w| feedback(w)).collect();
    let regrade = || {
        let mut command = grader();
        command
            .current_dir(here)
            .args(["grade", "submissions", "--out", "grading"])
            .args(["--exercise", "vecadd-anyN", "--exercise", "dot-sm"])
            .args(["--target-dir", "../grader-cli"])
            .env("CUDA_VISIBLE_DEVICES", "")
            .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED);
        command
    };
    let regraded = regrade().args(["--student", "cy"]).assert().success();
    let said = String::from_utf8_lossy(&regraded.get_output().stderr).into_owned();
    assert_eq!(said.matches("grader: graded").count(), 1, "{said}");
    assert!(said.contains("(seed 7)"), "{said}");
    let after = read(&out.join("results.json"));
    assert_eq!(
        without(&before, "\"cy\": {", "\"dee\": {"),
        without(&after, "\"cy\": {", "\"dee\": {")
    );
    let results: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        results["students"]["cy"]["exercises"]["vecadd-anyN"]["points"],
        2
    );
    let others_after: Vec<String> = ["ada", "bo", "dee"].iter().map(|w| feedback(w)).collect();
    assert_eq!(others, others_after);
    let grades_after = read(&out.join("grades.csv"));
    assert!(grades_after.contains("\ncy,2,0,2,29,\n"), "{grades_after}");
    assert_eq!(
        grades
            .lines()
            .filter(|l| !l.starts_with("cy,"))
            .collect::<Vec<_>>(),
        grades_after
            .lines()
            .filter(|l| !l.starts_with("cy,"))
            .collect::<Vec<_>>()
    );
    // The bundle still holds everyone.
    let bundle: Value = serde_json::from_str(&read(&out.join("bundle/bundle.json"))).unwrap();
    assert_eq!(bundle["items"].as_array().unwrap().len(), 8);

    // A student who is not there, and a seed that is not the class's.
    regrade()
        .args(["--student", "nobody"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--student nobody: no such student; the ids are ada, bo, cy, dee",
        ));
    regrade()
        .args(["--student", "cy", "--seed", "8"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("graded with seed 7"));
}

/// dot-sm's solution with `edits` applied to its kernel.
fn kernel(edits: &[(&str, &str)]) -> String {
    let mut text = read(&course().join("solutions/dot-sm/src/kernel.cu"));
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    text
}

#[test]
fn similarity_finds_copies_and_renamed_copies_and_leaves_distinct_code_alone() {
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("class");
    let put = |who: &str, text: &str| {
        let src = class.join(who).join("dot-sm/src");
        fs::create_dir_all(&src).unwrap();
        fs::write(src.join("kernel.cu"), text).unwrap();
    };
    put("ann", &kernel(&[]));
    put(
        "bo",
        &kernel(&[
            ("const float4 x = a4[i];", "const float4 p = a4[i];"),
            ("const float4 y = b4[i];", "const float4 q = b4[i];"),
            (
                "sum += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;",
                "sum += p.x * q.x + p.y * q.y + p.z * q.z + p.w * q.w;",
            ),
            ("sum", "total"),
            ("cache", "tile"),
            ("partials", "per_block"),
            ("half", "h"),
            ("//", "// mine:"),
        ]),
    );
    put("cy", &kernel(&[("half /= 2", "half >>= 1")]));
    put(
        "dee",
        &read(&course().join("exercises/dot-sm/src/kernel.cu")),
    );

    // Outside any course, the grader says how to name one.
    grader()
        .current_dir(dir.path())
        .args(["similarity", "class"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give --course DIR"));
    grader()
        .current_dir(dir.path())
        .args(["similarity", "class", "--out", "out", "--course"])
        .arg(course())
        .assert()
        .success()
        .stderr(predicate::str::contains("3 pairs of identical code"));
    let report = read(&dir.path().join("out/similarity.md"));
    assert!(
        report.contains("## dot-sm src/kernel.cu: ann, bo, the reference solution\n"),
        "{report}"
    );
    assert!(report.contains(
        "- ann and bo\n- ann and the reference solution\n- bo and the reference solution\n"
    ));
    assert!(report.contains("__syncthreads"), "{report}");
    // A different kernel, and a stub left as it came, are nobody's copy.
    let listed: Vec<&str> = report.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        listed,
        ["## dot-sm src/kernel.cu: ann, bo, the reference solution"]
    );
}

#[test]
#[cfg(unix)]
fn awkward_folder_names_are_graded_apart_under_safe_ids() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("class");
    let long = "x".repeat(240);
    let names: [&OsStr; 6] = [
        OsStr::new("zo\u{eb}"),
        OsStr::new("zo\u{e9}"),
        OsStr::from_bytes(b"ren\xe9"),
        OsStr::new("target"),
        OsStr::new("two\nlines"),
        OsStr::new(&long),
    ];
    for name in names {
        let src = class.join(name).join("vecadd-anyN/src");
        fs::create_dir_all(&src).unwrap();
        for file in ["main.rs", "kernel.cu"] {
            fs::copy(
                course().join("solutions/vecadd-anyN/src").join(file),
                src.join(file),
            )
            .unwrap();
        }
    }
    let out = dir.path().join("out");
    let graded = grader()
        .arg("grade")
        .arg(&class)
        .args(["--exercise", "vecadd-anyN", "--seed", "3", "--out"])
        .arg(&out)
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-cli"))
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&graded.get_output().stderr).into_owned();
    assert!(
        said.contains("6 students, 6 exercises submitted, 0 did not build"),
        "{said}"
    );
    assert!(
        said.contains("folds to the same file name as \"zoé\""),
        "{said}"
    );
    assert!(said.contains("is not UTF-8"), "{said}");

    let results: Value = serde_json::from_str(&read(&out.join("results.json"))).unwrap();
    let ids: Vec<&String> = results["students"].as_object().unwrap().keys().collect();
    assert_eq!(ids.len(), 6, "{ids:?}");
    for id in &ids {
        assert!(grader::discover::student_id::is_safe(id), "{id}");
        // Every one built and earned the PTX point, and the lesson point,
        // counted on the CPU emulator, which needs no GPU.
        assert_eq!(
            results["students"][id]["exercises"]["vecadd-anyN"]["points"], 2,
            "{id}"
        );
        assert!(
            out.join("feedback").join(format!("{id}.md")).is_file(),
            "{id}"
        );
    }
    assert!(ids.iter().any(|id| *id == "target"));
    assert_eq!(read(&out.join("grades.csv")).lines().count(), 7);
    let summary = String::from_utf8_lossy(&graded.get_output().stdout).into_owned();
    assert_eq!(summary.lines().count(), 8, "{summary}");
}

/// An nvidia-smi that lists a GPU: these tests grade as on a GPU node whose
/// device CUDA cannot see, without the emulator.
const GPU_LISTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/nvidia-smi-listing-a-gpu"
);
