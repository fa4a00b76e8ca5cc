//! The course's own binaries through the client and a broker on the CPU
//! emulator: each solution's report is the one it makes run directly on
//! the emulator (less its times), a stub fails the same way, and the
//! broker's record holds what the grader's judge asks of a trace, with
//! GPU times of the broker's own.

mod common;

use common::{course_binary, directly, through_broker};
use kernels::catalogue::ExerciseId;
use kernels::trace_record::Call;
use serde_json::Value;

/// A small streams-overlap run: 7 uneven chunks on 3 streams.
const STREAMS_RUN: &[&str] = &[
    "--json",
    "--n",
    "100003",
    "--streams",
    "3",
    "--chunks",
    "7",
    "--runs",
    "1",
];

/// A report without what depends on time.
fn timeless(report: &Value) -> Value {
    match report {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| {
                    let timed = [
                        "timings",
                        "throughput",
                        "gflop_per_s",
                        "speedup",
                        "ratio_to_bound",
                        "ms",
                        "relative_to_register",
                    ];
                    !timed.contains(&key.as_str())
                        && !key.ends_with("_ms")
                        && !key.ends_with("_per_s")
                })
                .map(|(key, value)| (key.clone(), timeless(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(timeless).collect()),
        other => other.clone(),
    }
}

fn report(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "not one JSON report ({err}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Runs `binary args` both ways; the broker's record.
fn same_both_ways(binary: &str, args: &[&str]) -> Option<String> {
    let program = course_binary(binary)?;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.txt");
    let direct = directly(&program, args);
    let brokered = through_broker(&program, args, &[], &record);
    assert_eq!(
        brokered.status.code(),
        direct.status.code(),
        "{binary}: exit codes differ; through the broker it said:\n{}",
        String::from_utf8_lossy(&brokered.stderr)
    );
    assert_eq!(
        timeless(&report(&brokered)),
        timeless(&report(&direct)),
        "{binary} {args:?}"
    );
    Some(std::fs::read_to_string(record).expect("the broker wrote its record"))
}

fn calls(record: &str) -> Vec<Call> {
    grader::run::trace::Trace::parse_first(record)
        .expect("the record reads as a trace")
        .calls
}

/// The record's calls of entry point `name`.
fn calls_to(record: &str, name: &str) -> Vec<Call> {
    calls(record)
        .into_iter()
        .filter(|c| c.name == name)
        .collect()
}

#[test]
fn each_solution_reports_what_it_reports_on_the_emulator_directly() {
    let runs: [(&str, &[&str]); 4] = [
        (
            "vecadd-anyN-solution",
            &["--json", "--n", "100003", "--runs", "2"],
        ),
        (
            "dot-sm-solution",
            &["--json", "--n", "100003", "--runs", "2"],
        ),
        (
            "matmul-tiled-solution",
            &["--json", "--width", "70", "--tile", "16", "--runs", "1"],
        ),
        ("streams-overlap-solution", STREAMS_RUN),
    ];
    for (binary, args) in runs {
        let Some(record) = same_both_ways(binary, args) else {
            continue;
        };
        let calls = calls(&record);
        let launched = calls.iter().filter(|c| c.is_launch() && c.result == 0);
        // Every successful launch is timed by the broker, start before end.
        for launch in launched {
            let (start, end) = (launch.gpu_start.unwrap(), launch.gpu_end.unwrap());
            assert!(start <= end, "{binary}: {launch:?}");
        }
    }
}

#[test]
fn a_stub_fails_through_the_broker_as_it_fails_directly() {
    let Some(program) = course_binary("vecadd-anyN") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let brokered = through_broker(&program, &["--json"], &[], &dir.path().join("r.txt"));
    let direct = directly(&program, &["--json"]);
    assert_eq!(brokered.status.code(), direct.status.code());
    assert_eq!(brokered.status.code(), Some(1));
    assert_eq!(report(&brokered), report(&direct));
}

#[test]
fn the_record_shows_what_the_judge_asks_and_which_copies_were_page_locked() {
    let Some(record) = same_both_ways("streams-overlap-solution", STREAMS_RUN) else {
        return;
    };
    let trace = grader::run::trace::Trace::parse_first(&record).unwrap();
    let exercise = ExerciseId::StreamsOverlap;
    grader::judge::evidence::launched(&trace, exercise).unwrap();
    grader::judge::evidence::copied_back(&trace, exercise).unwrap();
    grader::judge::evidence::overlapped_copies(&trace).unwrap();
    // Asynchronous page-locked copies each way on 3 streams, each timed
    // by the broker and naming its region.
    let async_pinned: Vec<&Call> = trace
        .calls
        .iter()
        .filter(|c| c.is_async() && c.pinned == Some(true) && c.result == 0)
        .collect();
    let streams: std::collections::BTreeSet<u64> =
        async_pinned.iter().filter_map(|c| c.stream).collect();
    assert!(streams.len() >= 3, "{streams:?}");
    for copy in &async_pinned {
        assert!(
            copy.region.is_some() && copy.gpu_end >= copy.gpu_start && copy.gpu_start.is_some()
        );
    }
    // vecadd-anyN copies from pageable memory: pinned=0, one line a copy
    // however many chunks it took.
    let Some(record) = same_both_ways(
        "vecadd-anyN-solution",
        &["--json", "--n", "100003", "--runs", "1"],
    ) else {
        return;
    };
    // The host code's a and b, then the course's own writes around its two
    // launches (`kernels::fresh_inputs`): a and b drawn for the warm-up,
    // and the host code's written back before the timed one.
    let htod = calls_to(&record, "cuMemcpyHtoD_v2");
    assert_eq!(htod.len(), 6, "{htod:?}");
    assert!(
        htod.iter()
            .all(|c| c.pinned == Some(false) && c.bytes == Some(400_012))
    );
}

#[test]
fn a_pageable_copy_larger_than_the_staging_area_is_one_record_line() {
    let Some(program) = course_binary("vecadd-anyN-solution") else {
        return;
    };
    // 2^23 floats: 32 MiB each way, four chunks in the halves of the 16 MiB
    // staging area.
    let args = ["--json", "--n", "8388608", "--runs", "1"];
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.txt");
    let output = through_broker(&program, &args, &[], &record);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let record = std::fs::read_to_string(record).unwrap();
    // Six copies (the host code's two, and the course's four around its
    // launches, as above), each one line however many chunks it took.
    let htod = calls_to(&record, "cuMemcpyHtoD_v2");
    assert_eq!(htod.len(), 6, "{record}");
    assert!(
        htod.iter()
            .all(|c| c.bytes == Some(32 << 20) && c.gpu_start.is_some())
    );
}
