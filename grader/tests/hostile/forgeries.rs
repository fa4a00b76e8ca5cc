//! The forgeries: students whose programs report an answer the GPU did
//! not compute (a CPU answer over a useless kernel's, made-up records on
//! any descriptor, the driver opened directly or its device nodes, a
//! flood of the broker, a program that looks for the grader's canary),
//! graded on the CPU emulator beside an honest
//! student. Each must earn no host points and an integrity flag, named in
//! results.json, grades.csv, the summary and its feedback; the honest
//! student keeps full marks and no flag.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{copy_case, course, fixtures};

/// The forgeries: programs that report an answer the GPU did not compute
/// (fixtures/hostile/<case>/<exercise>/src, the solution's files where a
/// case has none), each with what it tried.
const FORGERIES: &[(&str, &str, &str)] = &[
    (
        "cpu-overwrite",
        "vecadd-anyN",
        "a kernel that reads gridDim.x under an impossible condition; the host copies back, then overwrites c with the CPU's answer",
    ),
    (
        "cpu-overwrite",
        "matmul-naive",
        "the same for P: a useless kernel, then the CPU's product over what came back",
    ),
    (
        "forged-trace",
        "vecadd-anyN",
        "no GPU work: three made-up trace records (module, launch, copy back) under a made-up process id, then the CPU's answer",
    ),
    (
        "real-kernel-cpu-report",
        "vecadd-anyN",
        "the real kernel launched and copied back, and a copy computed on the CPU reported",
    ),
    (
        "trace-mid-run",
        "vecadd-anyN",
        "the module loaded, then a launch and a copy back written on the trace's descriptor under its own process id, and the CPU's answer",
    ),
    (
        "dlopen-driver",
        "vecadd-anyN",
        "the driver opened with dlopen, around the tracer, and the CPU's answer",
    ),
    (
        "forged-any-descriptor",
        "vecadd-anyN",
        "no GPU work: a module, a launch of the canary and a copy back, with GPU times, in the broker's own grammar, written on every descriptor it holds (the broker's socket among them), then the CPU's answer",
    ),
    (
        "device-nodes",
        "vecadd-anyN",
        "the GPU's device nodes opened around the broker, an ioctl on each that opens, then the CPU's answer",
    ),
    (
        "broker-flood",
        "vecadd-anyN",
        "a hundred thousand requests the broker cannot serve and a thousand of a GiB each, then the CPU's answer",
    ),
];

/// A forgery the broker leaves nothing to forge with: its kernel carries a
/// marker, and without it in the PTX the program holds (a canary build's,
/// before the broker) it reports the CPU's answer. The broker loads the
/// canary in its place, so the program only ever finds its own PTX, runs
/// its kernel and reports what the canary computed: an honest run.
const DEFEATED: (&str, &str) = ("detects-canary", "vecadd-anyN");

/// Every forgery earns no host points and an integrity flag, on the CPU
/// emulator; the honest student, graded beside them, keeps full marks and
/// no flag.
#[test]
fn forgeries_earn_no_host_points_and_are_flagged() {
    let work = tempfile::tempdir().unwrap();
    let submissions = work.path().join("submissions");
    let out = work.path().join("out");
    let exercises = ["vecadd-anyN", "matmul-naive"];
    let solution = |student: &Path, exercise: &str| {
        let src = student.join(exercise).join("src");
        fs::create_dir_all(&src).unwrap();
        for file in ["main.rs", "kernel.cu"] {
            if !src.join(file).exists() {
                let from = course()
                    .join("solutions")
                    .join(exercise)
                    .join("src")
                    .join(file);
                fs::copy(from, src.join(file)).unwrap();
            }
        }
    };
    for exercise in exercises {
        solution(&submissions.join("honest"), exercise);
    }
    for (case, exercise, _) in FORGERIES.iter().chain([&(DEFEATED.0, DEFEATED.1, "")]) {
        let student = submissions.join(case);
        copy_case(&fixtures().join(case), &student, &[]);
        solution(&student, exercise);
    }
    let output = Command::new(assert_cmd::cargo::cargo_bin("grader"))
        .arg("grade")
        .arg(&submissions)
        .args(["--exercise", "vecadd-anyN", "--exercise", "matmul-naive"])
        .args(["--seed", "9", "--emulate", "--timeout", "120", "--out"])
        .arg(&out)
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the grader failed: {stderr}");
    let summary = String::from_utf8_lossy(&output.stdout);
    let results: Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let host_points = |record: &Value| -> u64 {
        record["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["role"] == "student-host")
            .map(|r| r["points"].as_u64().unwrap())
            .sum()
    };
    for exercise in exercises {
        let record = &results["students"]["honest"]["exercises"][exercise];
        assert_eq!(record["points"], record["max_points"], "{record}");
        assert!(record["integrity"].is_null(), "{record}");
    }
    let grades = fs::read_to_string(out.join("grades.csv")).unwrap();
    let mut table = String::from("case | exercise | what it tried | points | host points\n");
    for (case, exercise, tried) in FORGERIES {
        let record = &results["students"][case]["exercises"][exercise];
        assert!(record["build_errors"].is_null(), "{case}: {record}");
        let flags = record["integrity"].as_array().map(Vec::len).unwrap_or(0);
        assert!(flags > 0, "{case} {exercise} is not flagged: {record}");
        assert_eq!(record["integrity"][0]["evidence"]["kind"], "cpu-answer");
        assert_eq!(host_points(record), 0, "{case} {exercise}: {record}");
        // Named in the instructor's summary and grades.csv, told in the
        // student's feedback.
        assert!(
            summary.contains(&format!("{case}: {exercise}")),
            "{summary}"
        );
        let row = grades
            .lines()
            .find(|l| l.starts_with(&format!("{case},")))
            .unwrap();
        assert!(row.contains(&format!("{exercise}: cpu-answer")), "{row}");
        let feedback = fs::read_to_string(out.join(format!("feedback/{case}.md"))).unwrap();
        assert!(
            feedback.contains("not computed by the kernel it launched"),
            "{feedback}"
        );
        table += &format!(
            "{case} | {exercise} | {tried} | {} of {} | {}\n",
            record["points"],
            record["max_points"],
            host_points(record)
        );
    }
    let (case, exercise) = DEFEATED;
    let record = &results["students"][case]["exercises"][exercise];
    assert_eq!(record["points"], record["max_points"], "{case}: {record}");
    assert!(record["integrity"].is_null(), "{case}: {record}");
    let honest_row = grades.lines().find(|l| l.starts_with("honest,")).unwrap();
    assert!(
        honest_row.ends_with(','),
        "an honest student flagged: {honest_row}"
    );
    eprintln!("{table}");
}
