//! The third hostile round: students who try to cost the class more than
//! their own runs, graded on the CPU emulator beside honest students. A
//! host that sleeps just under the timeout and exits 3 at every run (a
//! CUDA error, which a neighbour could cause: each run would be made
//! again with the GPU alone for a whole timeout), a report of 900 KB, a
//! broker's record of 18 MiB (300,000 driver calls), a static array of
//! 80 MiB in the binary. Each must cost
//! no more than its bound (`grader/src/run/budget.rs`, `bounded.rs`,
//! `run/trace.rs`, `build/sizes.rs`), and every honest student get exactly
//! the record it gets graded alone. (A tool that hangs only when
//! instrumented needs compute-sanitizer, which the emulator does not run:
//! `run::sanitizer`'s tests fake one that never returns.)

use std::fs;
use std::path::Path;
use std::time::Duration;

use grader::bounded::MAX_REPORT_BYTES;
use grader::build::sizes::MAX_BINARY;
use grader::run::budget::{AFTER_HOLDING, REMAKES_ALONE};
use serde_json::Value;

use super::unstoppable::{
    MAX_GRADER_KIB, Ran, finish, full_marks, results_in, same_record, solution_into, start_with,
};
use super::{copy_case, fixtures};

/// The grading's timeout, and how long the sleeper sleeps at each run.
const TIMEOUT: u64 = 20;
const SLEEP: u64 = TIMEOUT - 2;

const HONEST: [&str; 2] = ["honest1", "honest2"];
const COSTLY: [&str; 4] = [
    "remake-sleeper",
    "report-flood",
    "trace-flood",
    "big-static",
];

/// Writes the honest students, and the costly ones where `costly`.
fn write_class(submissions: &Path, costly: bool) {
    for name in HONEST {
        solution_into(&submissions.join(name).join("dot-sm/src"));
    }
    if !costly {
        return;
    }
    let places = [("@SLEEP@", SLEEP.to_string())];
    for name in COSTLY {
        let student = submissions.join(name);
        copy_case(&fixtures().join(name), &student, &places);
        solution_into(&student.join("dot-sm/src"));
    }
    // The trace's flood before the solution's own runs, so that its
    // report passes and its trace is what is judged.
    let main = submissions.join("trace-flood/dot-sm/src/main.rs");
    let solution = fs::read_to_string(&main).unwrap();
    let flooded = solution.replacen(
        "fn main() -> ExitCode {\n",
        "mod flood;\n\nfn main() -> ExitCode {\n    flood::flood_trace();\n",
        1,
    );
    assert_ne!(flooded, solution, "the solution's main moved");
    fs::write(main, flooded).unwrap();
}

/// Grades `submissions` (built and run, on the emulator) into `out`, the
/// grading's timeline in `timeline`.
fn grade(submissions: &Path, out: &Path, timeline: &Path) -> Ran {
    let deps = Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps");
    let dir = |p: &Path| p.to_string_lossy().into_owned();
    let (submissions_arg, out_arg, deps_arg) = (dir(submissions), dir(out), dir(&deps));
    let timeout = TIMEOUT.to_string();
    let args = [
        "grade",
        &submissions_arg,
        "--exercise",
        "dot-sm",
        "--seed",
        "9",
        "--build-timeout",
        "120",
        "--emulate",
        "--timeout",
        &timeout,
        "--out",
        &out_arg,
        "--target-dir",
        &deps_arg,
    ];
    let log = tempfile::tempfile().unwrap();
    let variables = [(grader::grade::grading::TIMELINE_ENV, timeline)];
    let ran = finish(start_with(&args, &variables, &log, out), out);
    assert_eq!(ran.code, 0, "the grading stopped: {}", ran.stderr);
    ran
}

/// The seconds the timeline's runs of `phase` took, all together.
fn seconds_of(timeline: &Path, phase: &str) -> f64 {
    fs::read_to_string(timeline)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let (start, end) = (
                fields[3].parse::<f64>().ok()?,
                fields[4].parse::<f64>().ok()?,
            );
            (fields[1] == phase).then_some(end - start)
        })
        .sum()
}

/// The student's dot-sm record in `results`.
fn record<'a>(results: &'a Value, name: &str) -> &'a Value {
    &results["students"][name]["exercises"]["dot-sm"]
}

#[test]
fn no_student_costs_the_class_more_than_its_own_runs() {
    let work = tempfile::tempdir().unwrap();
    let (submissions, out) = (work.path().join("class"), work.path().join("out"));
    write_class(&submissions, true);
    let timeline = work.path().join("timeline.tsv");
    let graded = grade(&submissions, &out, &timeline);
    let results = results_in(&out);

    // The sleeper's remakes held the GPU alone within the budget (no
    // honest run is made again on the emulator); without it, every run
    // of its exercise a whole timeout.
    let alone = seconds_of(&timeline, "made again alone");
    // Its first remake may take the whole timeout (an honest run a
    // neighbour slowed must be able to finish alone); later ones share
    // what is left of REMAKES_ALONE, AFTER_HOLDING at most each.
    let bound = (Duration::from_secs(TIMEOUT) + REMAKES_ALONE + AFTER_HOLDING).as_secs_f64();
    eprintln!("made again alone: {alone:.1} s (bound {bound} s)");
    assert!(alone > 0.0 && alone <= bound, "{alone} s alone");
    let sleeper = record(&results, "remake-sleeper");
    for run in sleeper["runs"].as_array().unwrap() {
        if run["role"] == "student-host" {
            let ms = run["duration_ms"].as_f64().unwrap();
            assert!(ms < (SLEEP as f64 + 1.0) * 1e3, "{run}");
            assert_ne!(run["verdict"]["kind"], "passed", "{run}");
        }
    }

    // The report kept within its limit, cut with a note, in results.json
    // and in the feedback.
    let flood = record(&results, "report-flood");
    let reports: Vec<&Value> = (flood["runs"].as_array().unwrap().iter())
        .filter_map(|run| run.get("report"))
        .collect();
    assert!(!reports.is_empty(), "{flood}");
    for report in reports {
        let bytes = report.to_string().len();
        assert!(bytes <= MAX_REPORT_BYTES + 1024, "{bytes} bytes kept");
    }
    let whole = results["students"]["report-flood"].to_string().len();
    assert!(
        whole < 32 * MAX_REPORT_BYTES,
        "{whole} bytes of results.json"
    );
    assert!(flood.to_string().contains("more bytes cut"), "{flood}");
    let feedback = fs::metadata(out.join("feedback/report-flood.md")).unwrap();
    assert!(
        feedback.len() < 32 * MAX_REPORT_BYTES as u64,
        "{feedback:?}"
    );

    // The broker's record read to its end, refused as cut off, and the
    // grader's own memory bounded.
    let traced = record(&results, "trace-flood").to_string();
    assert!(traced.contains("\"truncated\""), "{traced}");
    eprintln!("grader: peak {} MiB", graded.peak_kib >> 10);
    assert!(graded.peak_kib < MAX_GRADER_KIB, "{} KiB", graded.peak_kib);

    // The build refused by name, and nothing of it in the bundle.
    let big = record(&results, "big-static");
    let said = big["build_errors"]
        .as_str()
        .unwrap_or_else(|| panic!("{big}"));
    assert!(
        said.contains(&format!("{} MiB", MAX_BINARY >> 20)),
        "{said}"
    );
    for entry in walkdir::WalkDir::new(out.join("bundle"))
        .into_iter()
        .flatten()
    {
        let bytes = entry.metadata().unwrap().len();
        assert!(bytes <= MAX_BINARY, "{}: {bytes}", entry.path().display());
    }

    // Every honest student at full marks, exactly as when graded alone.
    let (by_themselves, alone_out) = (work.path().join("honest"), work.path().join("alone"));
    write_class(&by_themselves, false);
    grade(&by_themselves, &alone_out, &work.path().join("alone.tsv"));
    let alone_results = results_in(&alone_out);
    for name in HONEST {
        full_marks(name, &results["students"][name]);
        same_record(
            &alone_results["students"][name],
            &results["students"][name],
            name,
        );
    }
}
