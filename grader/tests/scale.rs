//! Grading at scale as an instructor meets it: a class graded in shards and
//! merged, or over several GPUs, must get the grades one `grader run` gives.
//! A small class (solutions, stubs, two mutants; two cheap exercises) is
//! built once here, without a GPU; runs end in "no GPU" verdicts, the same
//! ones in every way of grading.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;
use grader::record::results::Results;
use predicates::prelude::*;

const STUDENTS: [&str; 5] = [
    "solutions",
    "stubs",
    "dot-gm.drops-the-last-element",
    "vecadd-anyN.host-computes",
    "vecadd-anyN.no-grid-stride",
];

fn grader() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("grader"))
}

/// The class's bundle, built once for every test here.
fn bundle() -> PathBuf {
    static BUILT: OnceLock<tempfile::TempDir> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let submissions = dir.path().join("submissions");
            grader()
                .args(["mutants", "write"])
                .arg(&submissions)
                .assert()
                .success();
            for entry in fs::read_dir(&submissions).unwrap() {
                let entry = entry.unwrap();
                if !STUDENTS.contains(&&*entry.file_name().to_string_lossy()) {
                    fs::remove_dir_all(entry.path()).unwrap();
                }
            }
            grader()
                .arg("build")
                .arg(&submissions)
                .arg("--bundle")
                .arg(dir.path().join("bundle"))
                .arg("--target-dir")
                .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps"))
                .args(["--seed", "5", "--exercise", "vecadd-anyN"])
                .args(["--exercise", "dot-gm"])
                .assert()
                .success();
            dir
        })
        .path()
        .join("bundle")
}

/// `grader run BUNDLE --out OUT FLAGS` with no GPU visible.
fn run(out: &Path, flags: &[&str]) -> Command {
    let mut run = grader();
    run.arg("run")
        .arg(bundle())
        .arg("--out")
        .arg(out)
        .args(["--timeout", "30"])
        .args(flags)
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(grader::run::device::NVIDIA_SMI_ENV, gpu_listed());
    run
}

/// An nvidia-smi that lists a GPU: these tests grade as on a GPU node whose
/// GPU the runs cannot see, so every run ends in the same "no GPU" verdict
/// (the emulator's gradings have tests of their own, in cli.rs).
fn gpu_listed() -> &'static str {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/nvidia-smi-listing-a-gpu"
    )
}

/// results.json in `dir` with every run's duration and every sanitizer
/// tool's wall time zeroed: two gradings of the same bundle differ only
/// there.
fn graded(dir: &Path) -> Results {
    let mut results = Results::load(&dir.join("results.json")).unwrap();
    for student in results.students.values_mut() {
        for exercise in student.exercises.values_mut() {
            for run in &mut exercise.runs {
                run.duration_ms = 0.0;
            }
            for tool in &mut exercise.sanitizer {
                tool.seconds = 0.0;
            }
        }
    }
    results
}

fn one_line_error(containing: &str) -> impl Predicate<str> {
    predicate::str::contains(containing.to_owned()).and(predicate::function(|err: &str| {
        err.lines()
            .filter(|l| l.starts_with("grader: error:"))
            .count()
            == 1
    }))
}

#[test]
fn shards_merged_grade_as_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    run(&whole, &[]).assert().success();
    let shards: Vec<PathBuf> = (1..=3)
        .map(|k| dir.path().join(format!("shard-{k}")))
        .collect();
    // Out of order, as a cluster finishes them.
    for k in [3, 1, 2] {
        run(&shards[k - 1], &["--shard", &format!("{k}/3")])
            .assert()
            .success();
        let shard = graded(&shards[k - 1]);
        assert_eq!(shard.shard.map(|s| s.index), Some(k as u32));
        assert_eq!(shard.seed, 5);
    }
    let counted: usize = shards.iter().map(|s| graded(s).students.len()).sum();
    assert_eq!(counted, STUDENTS.len());

    let merged = dir.path().join("merged");
    let merge = |out: &Path, shards: &[PathBuf]| {
        let mut merge = grader();
        merge
            .arg("merge")
            .arg("--bundle")
            .arg(bundle())
            .arg(out)
            .args(shards);
        merge
    };
    merge(&merged, &shards).assert().success();
    assert_eq!(graded(&merged), graded(&whole));
    assert_eq!(
        fs::read_to_string(merged.join("grades.csv")).unwrap(),
        fs::read_to_string(whole.join("grades.csv")).unwrap()
    );
    // Twice is safe, and into a folder holding the whole class's grading too.
    merge(&merged, &shards).assert().success();
    merge(&whole, &shards).assert().success();
    assert_eq!(graded(&whole), graded(&merged));

    merge(&merged, &shards[..2])
        .assert()
        .code(2)
        .stderr(one_line_error("shard 3/3 missing"));
    merge(
        &merged,
        &[shards[0].clone(), shards[1].clone(), shards[0].clone()],
    )
    .assert()
    .code(2)
    .stderr(one_line_error("are both shard 1/3"));
    merge(&shards[0], &shards[1..])
        .assert()
        .code(2)
        .stderr(one_line_error("shard 1/3 missing"));
    // OUT holding a grading the shards do not cover is left as it was.
    let other = dir.path().join("other");
    fs::create_dir(&other).unwrap();
    let text = fs::read_to_string(whole.join("results.json"))
        .unwrap()
        .replace("\"solutions\"", "\"somebody-else\"");
    fs::write(other.join("results.json"), &text).unwrap();
    merge(&other, &shards)
        .assert()
        .code(2)
        .stderr(one_line_error("student somebody-else who is in no shard"));
    assert_eq!(
        fs::read_to_string(other.join("results.json")).unwrap(),
        text
    );
}

#[test]
fn a_shard_resumes_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shard");
    run(&out, &["--shard", "1/2"]).assert().success();
    let before = fs::read_to_string(out.join("results.json")).unwrap();
    run(&out, &["--shard", "1/2", "--resume"])
        .assert()
        .success();
    // Nothing regraded: every record, durations too, as it was.
    assert_eq!(
        fs::read_to_string(out.join("results.json")).unwrap(),
        before
    );
    run(&out, &["--shard", "2/2", "--resume"])
        .assert()
        .code(2)
        .stderr(one_line_error("is not shard 2/2 of this bundle"));
    // More shards than students: the extra ones hold nobody, and merge.
    let many: Vec<PathBuf> = (1..=7)
        .map(|k| dir.path().join(format!("of7-{k}")))
        .collect();
    for (k, shard) in many.iter().enumerate() {
        run(shard, &["--shard", &format!("{}/7", k + 1)])
            .assert()
            .success();
    }
    let merged = dir.path().join("merged");
    grader()
        .arg("merge")
        .arg("--bundle")
        .arg(bundle())
        .arg(&merged)
        .args(&many)
        .assert()
        .success();
    assert_eq!(graded(&merged).students.len(), STUDENTS.len());
}

#[test]
fn gpus_grade_as_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    run(&whole, &[]).assert().success();
    let pooled = dir.path().join("pooled");
    run(&pooled, &["--gpus", "0,1"]).assert().success();
    assert_eq!(graded(&pooled), graded(&whole));
    // As if killed before the last student: --resume grades only them.
    let path = pooled.join("results.json");
    let mut cut = Results::load(&path).unwrap();
    let kept = cut.students.clone();
    cut.students.pop_last();
    cut.save(&path).unwrap();
    run(&pooled, &["--gpus", "0,1", "--resume"])
        .assert()
        .success();
    let resumed = Results::load(&path).unwrap();
    let (last, _) = kept.last_key_value().unwrap();
    for (student, record) in &kept {
        // Durations too: the others were not run again.
        assert_eq!(
            &resumed.students[student] == record,
            student != last,
            "{student}"
        );
    }
    assert_eq!(graded(&pooled), graded(&whole));
    run(&pooled, &["--gpus", "1", "--no-sandbox"])
        .assert()
        .code(2)
        .stderr(one_line_error("--gpus needs the sandbox"));
}

#[test]
fn bad_scale_arguments_exit_2_and_say_what_is_allowed() {
    let out = Path::new("/nonexistent/never-written");
    for (flags, says) in [
        (&["--shard", "4/3"][..], "is not K/N with 1 <= K <= N"),
        (&["--shard", "0/3"][..], "is not K/N"),
        (
            &["--shard", "1/2", "--student", "stubs"][..],
            "cannot be used with",
        ),
        (&["--gpus", "0,0"][..], "distinct GPU indices"),
    ] {
        grader()
            .arg("run")
            .arg("/nonexistent/bundle")
            .arg("--out")
            .arg(out)
            .args(flags)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    grader()
        .args([
            "merge",
            "--bundle",
            "/nonexistent/bundle",
            "/nonexistent/out",
        ])
        .assert()
        .code(2);
    grader()
        .args([
            "slurm",
            "/nonexistent/bundle",
            "--out",
            "/tmp/x",
            "--shards",
            "0",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--shards"));
}

#[test]
fn gpus_on_the_emulator_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = run(&dir.path().join("out"), &["--gpus", "0"]);
    // No nvidia-smi lists a GPU: the runs would be the emulator's.
    run.env(grader::run::device::NVIDIA_SMI_ENV, "/no/such/nvidia-smi")
        .assert()
        .code(2)
        .stderr(one_line_error("--gpus spreads runs over NVIDIA GPUs"));
}
