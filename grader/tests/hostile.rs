//! The adversarial class: students who attack the grader at build time and
//! at run time (fixtures/hostile/<case>/dot-sm/src), graded beside two
//! honest students. Every attack must fail: each case gets its expected
//! verdict, nothing outside the grader's output changes, no process is left,
//! no secret leaks, and the honest students' grades are those of a class
//! graded without the hostile ones. Needs nvcc and bubblewrap, not a GPU:
//! honest runs pass on a device and end in "cuda-error" without one, and
//! either way must match the honest students graded alone.

use std::collections::BTreeMap;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

#[path = "hostile/unstoppable.rs"]
mod unstoppable;

#[path = "hostile/forgeries.rs"]
mod forgeries;

#[path = "hostile/costly.rs"]
mod costly;

/// The instructor's secret, in the grader's environment.
const SECRET: &str = "s3cr3t-9f2c71";

/// What each hostile student tried, and the verdict it must get: a build
/// error holding the text, or the first run's verdict kind (with "blocked"
/// in the message when the program reports on its own attack).
const CASES: &[(&str, &str, Expect)] = &[
    (
        "include-passwd",
        "include_str! of /etc/passwd",
        Build("/etc/passwd"),
    ),
    (
        "include-classmate",
        "include_str! of a classmate's kernel",
        Build("couldn't read"),
    ),
    (
        "include-solution",
        "include_str! of the course's solution",
        Build("couldn't read"),
    ),
    (
        "include-classmate-build",
        "include_str! of a classmate's build folder",
        Build("couldn't read"),
    ),
    (
        "option-env",
        "option_env! of the instructor's secret",
        Blocked,
    ),
    (
        "include-environ",
        "include_bytes! of the compiler's environment",
        Blocked,
    ),
    (
        "kernel-include-classmate",
        "#include of a classmate's kernel by path",
        Build("kernel.cu"),
    ),
    (
        "kernel-include-relative",
        "#include of a classmate's kernel by ../",
        Build("kernel.cu"),
    ),
    (
        "const-eval-loop",
        "a const fn that never ends",
        Build("took longer than"),
    ),
    (
        "missing-main",
        "a crate without main.rs",
        Build("no src/main.rs"),
    ),
    (
        "link",
        "main.rs a link to /etc/passwd",
        Build("no src/main.rs"),
    ),
    ("read-env", "reading the environment", Blocked),
    (
        "read-files",
        "reading results.json, a classmate, the course, the grader's argv",
        Blocked,
    ),
    (
        "write-files",
        "writing the output, a classmate's binary, .cargo/config.toml, the course",
        Blocked,
    ),
    (
        "setsid-child",
        "a setsid child that outlives the run to forge results.json",
        Blocked,
    ),
    ("fork-bomb", "thousands of processes", Blocked),
    (
        "loopback",
        "a TCP connection to the grader machine's loopback",
        Blocked,
    ),
    (
        "ptrace-grader",
        "writing its parent's /proc/PID/mem",
        Blocked,
    ),
    (
        "kill-all",
        "kill -9 -1: only its own sandbox, itself included",
        Kind("crashed"),
    ),
    (
        "impersonate-log",
        "stdout lines that look like the grader's log",
        Kind("garbage"),
    ),
    (
        "markup",
        "Markdown, HTML and ANSI escapes in its output",
        Kind("garbage"),
    ),
    ("flood", "printing without end", Kind("flooded")),
    ("big-file", "filling the disk", Kind("crashed")),
];

#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Did not build; the errors hold this.
    Build(&'static str),
    /// Built, ran, and said its attack was blocked.
    Blocked,
    /// Built, and its first run got this verdict.
    Kind(&'static str),
}
use Expect::{Blocked, Build, Kind};

fn course() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile")
}

/// Copies `from` to `to`, links as links, with the placeholders replaced.
fn copy_case(from: &Path, to: &Path, places: &[(&str, String)]) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let copy = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(entry.path()).unwrap(), copy).unwrap();
        } else if kind.is_dir() {
            copy_case(&entry.path(), &copy, places);
        } else {
            let mut text = fs::read_to_string(entry.path()).unwrap();
            for (placeholder, value) in places {
                text = text.replace(placeholder, value);
            }
            fs::write(copy, text).unwrap();
        }
    }
}

/// An honest student: the solution's dot-sm.
fn honest(submissions: &Path, name: &str) {
    let src = submissions.join(name).join("dot-sm/src");
    fs::create_dir_all(&src).unwrap();
    for file in ["main.rs", "kernel.cu"] {
        fs::copy(
            course().join("solutions/dot-sm/src").join(file),
            src.join(file),
        )
        .unwrap();
    }
}

/// Every file under the folders, with its contents' length and time.
fn tree(roots: &[PathBuf]) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    roots
        .iter()
        .flat_map(|root| walkdir::WalkDir::new(root).follow_links(false))
        .flatten()
        .filter_map(|e| {
            let metadata = e.path().symlink_metadata().ok()?;
            Some((e.into_path(), (metadata.len(), metadata.modified().ok()?)))
        })
        .collect()
}

/// Processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let cmdline = fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline.contains(marker).then_some(cmdline)
        })
        .collect()
}

fn grade(submissions: &Path, out: &Path) -> (Value, String) {
    let output = Command::new(assert_cmd::cargo::cargo_bin("grader"))
        .arg("grade")
        .arg(submissions)
        .args(["--exercise", "dot-sm", "--seed", "9", "--timeout", "20"])
        .args(["--build-timeout", "20", "--out"])
        .arg(out)
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps"))
        .env("GRADER_TEST_SECRET", SECRET)
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "the grader failed: {stderr}");
    let results =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    (results, stderr)
}

/// A student's record without run times, the sanitizer tools' wall times
/// and input digests, to compare two gradings.
fn without_durations(mut record: Value) -> Value {
    for exercise in record["exercises"].as_object_mut().unwrap().values_mut() {
        // The digest of what was graded holds the canary build's, whose
        // mark every build draws afresh.
        exercise.as_object_mut().unwrap().remove("inputs");
        for run in exercise["runs"].as_array_mut().unwrap() {
            run.as_object_mut().unwrap().remove("duration_ms");
        }
        if let Some(tools) = exercise["sanitizer"].as_array_mut() {
            for tool in tools {
                tool.as_object_mut().unwrap().remove("seconds");
            }
        }
    }
    record
}

#[test]
fn every_attack_fails_and_the_honest_students_do_not_notice() {
    let work = tempfile::tempdir().unwrap();
    let submissions = work.path().join("submissions");
    let out = work.path().join("out");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connected = Arc::new(AtomicBool::new(false));
    listener.set_nonblocking(true).unwrap();
    let places = [
        ("@SUBMISSIONS@", submissions.display().to_string()),
        ("@OUT@", out.display().to_string()),
        ("@BUNDLE@", out.join("bundle").display().to_string()),
        ("@COURSE@", course().display().to_string()),
        ("@PORT@", port.to_string()),
    ];
    honest(&submissions, "honest1");
    honest(&submissions, "honest2");
    for (case, _, _) in CASES {
        let student = submissions.join(case);
        copy_case(&fixtures().join(case), &student, &places);
        // What a case does not attack is the solution's.
        let src = student.join("dot-sm/src");
        for file in ["main.rs", "kernel.cu"] {
            let own = src.join(file);
            if own.symlink_metadata().is_err() && !(*case == "missing-main" && file == "main.rs") {
                fs::copy(course().join("solutions/dot-sm/src").join(file), own).unwrap();
            }
        }
    }
    let watched = [
        submissions.clone(),
        course().join("solutions"),
        course().join("exercises"),
        course().join("kernels"),
        course().join(".cargo"),
    ];
    let before = tree(&watched);

    let watcher = {
        let connected = Arc::clone(&connected);
        std::thread::spawn(move || {
            for _ in 0..3000 {
                if listener.accept().is_ok() {
                    connected.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        })
    };
    let (results, log) = grade(&submissions, &out);

    // No process is left, and nothing outside the output changed.
    for marker in ["61.25", "62.5"] {
        assert_eq!(processes_with(marker), Vec::<String>::new(), "left running");
    }
    assert_eq!(
        tree(&watched),
        before,
        "a file outside the grader's output changed"
    );
    assert!(
        !connected.load(Ordering::SeqCst),
        "a run reached the loopback"
    );
    drop(watcher);
    for planted in ["pwned.txt", ".cargo", "bundle/.cargo"] {
        assert!(!out.join(planted).exists(), "{planted} was written");
    }

    // Every case its verdict.
    let mut table = String::from("case | what it tried | verdict\n");
    for (case, tried, expect) in CASES {
        let record = &results["students"][case]["exercises"]["dot-sm"];
        let errors = record["build_errors"].as_str();
        // The student's binary's first run: the attacks are in it (each
        // run's kernel run, in the course's host code, comes first).
        let host_runs = record["runs"].as_array().into_iter().flatten();
        let first = host_runs
            .into_iter()
            .find(|r| r["role"] == "student-host")
            .unwrap_or(&Value::Null);
        let kind = first["verdict"]["kind"].as_str().unwrap_or("none");
        let message = serde_json::from_value::<grader::record::results::Run>(first.clone())
            .map(|run| grader::record::render::verdict(&run.verdict, &run.findings))
            .unwrap_or_default();
        let verdict = match errors {
            Some(_) => "did not build".to_owned(),
            None => kind.to_owned(),
        };
        table += &format!("{case} | {tried} | {verdict}\n");
        match expect {
            Build(text) => {
                let said = errors.unwrap_or_else(|| panic!("{case} built: {record}"));
                assert!(said.contains(text), "{case}: {said}");
            }
            Blocked => {
                assert!(errors.is_none(), "{case} did not build: {record}");
                assert!(message.contains("blocked"), "{case}: {kind}: {message}");
            }
            Kind(expected) => assert_eq!(kind, *expected, "{case}: {message}"),
        }
        assert_eq!(
            record["points"].as_u64(),
            Some(if errors.is_some() { 0 } else { 1 })
        );
    }
    eprintln!("{table}");

    // Nothing the grader wrote holds a secret, a forged line, or raw markup.
    for entry in walkdir::WalkDir::new(&out).into_iter().flatten() {
        let path = entry.path();
        if !entry.file_type().is_file() || path.starts_with(out.join("bundle")) {
            continue;
        }
        let text = fs::read_to_string(path).unwrap();
        // What a leak would show: the secret, a system file, a classmate's
        // kernel or the solution, a forgery, an escape.
        let leaks = [
            SECRET,
            "PWNED",
            "root:x:0:0",
            "__global__",
            "run_exercise(",
            "forged",
            "\u{1b}",
        ];
        // similarity.md is the instructor's: it shows the code honest1 and
        // honest2 share (the solution's) on purpose.
        let instructors = path == out.join("similarity.md");
        for leak in leaks {
            if instructors && ["__global__", "run_exercise("].contains(&leak) {
                continue;
            }
            assert!(!text.contains(leak), "{} holds {leak:?}", path.display());
        }
    }
    let markup = fs::read_to_string(out.join("feedback/markup.md")).unwrap();
    assert!(markup.contains("````text\n"), "{markup}");
    // The grader's log is the grader's: one line per student, none forged.
    assert_eq!(log.matches("grader: graded honest1").count(), 1, "{log}");
    assert!(!log.contains("grader: error"), "{log}");

    // The honest students, graded alone, get exactly the same.
    let alone = work.path().join("alone");
    for name in ["honest1", "honest2"] {
        honest(&alone, name);
        honest_outcome(&results["students"][name]);
    }
    let alone_out = work.path().join("alone-out");
    let (by_themselves, _) = grade(&alone, &alone_out);
    for name in ["honest1", "honest2"] {
        assert_eq!(
            without_durations(by_themselves["students"][name].clone()),
            without_durations(results["students"][name].clone()),
            "{name}"
        );
    }

    // A binary changed after the build is not run, and --resume regrades
    // only the records whose inputs changed or whose points do not check:
    // honest2's, edited to 99 points of its maximum.
    let swapped = alone_out.join("bundle/bin/dot-sm--honest1");
    let mut bytes = fs::read(&swapped).unwrap();
    bytes.push(0);
    fs::write(&swapped, bytes).unwrap();
    let results_path = alone_out.join("results.json");
    let mut tampered: Value =
        serde_json::from_str(&fs::read_to_string(&results_path).unwrap()).unwrap();
    let honest2 = tampered["students"]["honest2"]["exercises"]["dot-sm"].clone();
    tampered["students"]["honest2"]["exercises"]["dot-sm"]["points"] = 99.into();
    fs::write(&results_path, tampered.to_string()).unwrap();
    // Read as it is, it is refused, naming the record.
    let report = Command::new(assert_cmd::cargo::cargo_bin("grader"))
        .arg("report")
        .arg(&alone_out)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&report.stderr);
    assert_eq!(report.status.code(), Some(2), "{said}");
    assert!(
        said.contains("honest2's dot-sm: 99 points") && said.contains("above the maximum"),
        "{said}"
    );
    let resumed = Command::new(assert_cmd::cargo::cargo_bin("grader"))
        .arg("run")
        .arg(alone_out.join("bundle"))
        .arg("--out")
        .arg(&alone_out)
        .arg("--resume")
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{said}");
    assert_eq!(said.matches("grader: graded").count(), 2, "{said}");
    assert!(said.contains("grader: graded honest1"), "{said}");
    assert!(said.contains("grader: graded honest2"), "{said}");
    let regraded: Value =
        serde_json::from_str(&fs::read_to_string(alone_out.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        without_durations(regraded["students"]["honest2"].clone())["exercises"]["dot-sm"],
        without_durations(json_student(honest2))["exercises"]["dot-sm"]
    );
    // Refused as what it is: it built, and is not the binary built.
    let record = &regraded["students"]["honest1"]["exercises"]["dot-sm"];
    assert!(record["build_errors"].is_null(), "{record}");
    let refused = &record["refused_binary"];
    assert!(
        refused["expected"].is_string() && refused["found"].is_string(),
        "{record}"
    );
    assert_ne!(refused["expected"], refused["found"], "{record}");
    assert_eq!(record["points"], 0);
    let feedback = fs::read_to_string(alone_out.join("feedback/honest1.md")).unwrap();
    assert!(
        feedback.contains(
            "Not graded: the grader refused to run your binary: it is not the binary that was built"
        ),
        "{feedback}"
    );

    // Shards that are not the bundle's partition are refused by merge,
    // naming what is wrong: a shard emptied of its student, a shard with
    // a student who is not in it (nor in the class).
    let bundle = alone_out.join("bundle");
    let shards: Vec<PathBuf> = (1..=2)
        .map(|k| work.path().join(format!("shard{k}")))
        .collect();
    for (k, shard) in shards.iter().enumerate() {
        let graded = Command::new(assert_cmd::cargo::cargo_bin("grader"))
            .arg("run")
            .arg(&bundle)
            .arg("--out")
            .arg(shard)
            .args(["--shard", &format!("{}/2", k + 1)])
            .env("CUDA_VISIBLE_DEVICES", "")
            .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED)
            .output()
            .unwrap();
        assert!(
            graded.status.success(),
            "{}",
            String::from_utf8_lossy(&graded.stderr)
        );
    }
    let merge = |shards: &[PathBuf]| {
        let output = Command::new(assert_cmd::cargo::cargo_bin("grader"))
            .arg("merge")
            .arg("--bundle")
            .arg(&bundle)
            .arg(work.path().join("merged"))
            .args(shards)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    assert_eq!(merge(&shards).0, Some(0));
    let first = shards[0].join("results.json");
    let honest: Value = serde_json::from_str(&fs::read_to_string(&first).unwrap()).unwrap();
    let name = honest["shard"]["students"][0].as_str().unwrap().to_owned();
    let mut emptied = honest.clone();
    emptied["students"] = serde_json::json!({});
    emptied["shard"]["students"] = serde_json::json!([]);
    fs::write(&first, emptied.to_string()).unwrap();
    let (code, said) = merge(&shards);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains(&format!("has no record of {name}")), "{said}");
    let mut extra = honest.clone();
    extra["students"]["intruder"] = honest["students"][&name].clone();
    extra["shard"]["students"] = serde_json::json!([name, "intruder"]);
    fs::write(&first, extra.to_string()).unwrap();
    let (code, said) = merge(&shards);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("holds intruder, who is not in that shard of the bundle (nor in the class)"),
        "{said}"
    );

    // Without bubblewrap nothing runs, unless --no-sandbox, which every
    // report then states.
    let run = |flags: &[&str], bwrap: &str| {
        Command::new(assert_cmd::cargo::cargo_bin("grader"))
            .arg("run")
            .arg(alone_out.join("bundle"))
            .arg("--out")
            .arg(work.path().join("unsandboxed"))
            .args(flags)
            .env("GRADER_BWRAP", bwrap)
            .env("CUDA_VISIBLE_DEVICES", "")
            .env(grader::run::device::NVIDIA_SMI_ENV, GPU_LISTED)
            .output()
            .unwrap()
    };
    let refused = run(&[], "/no/such/bwrap");
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("--no-sandbox") && said.contains("bubblewrap"),
        "{said}"
    );
    assert!(!work.path().join("unsandboxed/results.json").exists());
    let unconfined = run(&["--no-sandbox"], "/no/such/bwrap");
    assert!(unconfined.status.success());
    let summary = String::from_utf8_lossy(&unconfined.stdout);
    assert!(summary.contains("--no-sandbox"), "{summary}");
    let feedback = fs::read_to_string(work.path().join("unsandboxed/feedback/honest1.md")).unwrap();
    assert!(feedback.contains("--no-sandbox"), "{feedback}");
}

/// A student's record as JSON.
fn json_student(exercise: Value) -> Value {
    serde_json::json!({ "exercises": { "dot-sm": exercise } })
}

/// An honest student's dot-sm, whatever the device: with none every run a
/// CUDA error and the PTX point alone; on a GPU (or the CPU emulator) every
/// run passed at full marks. Nothing a classmate did may make it anything
/// else.
fn honest_outcome(record: &Value) {
    let exercise = &record["exercises"]["dot-sm"];
    let kinds: std::collections::BTreeSet<&str> = exercise["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"]["kind"].as_str().unwrap())
        .collect();
    let points = exercise["points"].as_u64().unwrap();
    match kinds.iter().copied().collect::<Vec<_>>()[..] {
        ["cuda-error"] => assert_eq!(points, 1, "{record}"),
        ["passed"] => assert_eq!(Some(points), exercise["max_points"].as_u64(), "{record}"),
        _ => panic!("an honest student's runs: {record}"),
    }
}

/// An nvidia-smi that lists a GPU: these tests grade as on a GPU node whose
/// device CUDA cannot see, without the emulator.
const GPU_LISTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/nvidia-smi-listing-a-gpu"
);
