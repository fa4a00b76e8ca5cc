//! The exercise binary as a user meets it. This file is the same in the stub
//! (exercises/vecadd-anyN) and the solution; tests for only one of them are
//! marked `#[cfg(solution)]` or `#[cfg(not(solution))]` (build.rs sets it).
//!
//! GPU tests are ignored here; on a GPU: `cargo test -- --include-ignored`.
//! They test the course as shipped: once you finish the stub, its
//! `stub_fails_cleanly` test fails, as it should.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

/// The binary under test: next to this test executable's folder, as cargo
/// lays them out, so a bundle copied to a GPU machine finds it too.
fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin(env!("CARGO_PKG_NAME"))
}

fn exercise(args: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command.args(args);
    command
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_flag() {
    for (args, flag) in [
        (&["--n", "0"][..], "--n"),
        (&["--n", "ten"], "--n"),
        (&["--n", "100000000000"], "--n"),
        (&["--threads", "0"], "--threads"),
        (&["--threads", "2048"], "--threads"),
        (&["--threads", "1.5"], "--threads"),
        (&["--blocks", "0"], "--blocks"),
        (&["--blocks", "-1"], "--blocks"),
        (&["--runs", "0"], "--runs"),
    ] {
        let output = exercise(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn an_n_larger_than_any_gpu_is_refused_before_touching_one() {
    exercise(&["--n", "100000000000"])
        // No GPU is hidden here: the refusal must not depend on one.
        .env("CUDA_VISIBLE_DEVICES", "")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("more than any GPU holds"));
}

#[test]
fn without_a_gpu_it_exits_3_and_says_so() {
    // Hiding every GPU makes any machine look like one without: the driver
    // then reports no device, as the toolkit's stub does on a CPU machine.
    exercise(&["--n", "1000"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .assert()
        .code(3)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("no NVIDIA GPU"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn without_a_gpu_json_mode_prints_an_error_object() {
    let output = exercise(&["--json"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["exercise"], "vecadd-anyN");
    assert_eq!(json["error"]["kind"], "no-gpu");
    assert!(
        json["error"]["cuda_error"]
            .as_str()
            .unwrap()
            .starts_with("CUDA_ERROR_")
    );
}

#[test]
fn help_lists_every_flag() {
    let assert = exercise(&["--help"]).assert().success();
    let help = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    for flag in ["--n", "--threads", "--blocks", "--runs", "--json"] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

#[test]
fn ptx_has_an_unmangled_vecadd_kernel() {
    assert!(
        PTX.contains(".entry vecadd("),
        "no vecadd kernel in the PTX:\n{PTX}"
    );
}

#[test]
#[cfg(solution)]
fn solution_ptx_reads_the_grid_size() {
    // gridDim.x: the grid-stride loop's step.
    assert!(
        PTX.contains("%nctaid.x"),
        "the kernel does not use gridDim.x:\n{PTX}"
    );
}

/// Runs with `--json` and returns the exit code and the parsed object.
fn run_json(args: &[&str]) -> (i32, Value) {
    let output = exercise(args).arg("--json").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let json = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{args:?}: stdout is not JSON ({err}); stderr: {stderr}"));
    (output.status.code().unwrap_or(-1), json)
}

/// Σ 3·(i mod 4096) for i < n, by brute force: independent of the closed
/// form the binary uses.
fn brute_force_checksum(n: u64) -> u64 {
    (0..n).map(|i| 3 * (i % 4096)).sum()
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn solution_passes_with_a_grid_smaller_than_n() {
    let large = ((1u64 << 26) + 7).to_string();
    for (n, threads, blocks) in [
        ("1", "32", "1"),
        ("1000", "128", "2"),
        ("1000003", "256", "8"),
        (large.as_str(), "96", "13"),
        // The default grid, which must stay smaller than n at any size.
        ("1000003", "256", ""),
        (large.as_str(), "256", ""),
    ] {
        let mut args = vec!["--n", n, "--threads", threads, "--runs", "3"];
        if !blocks.is_empty() {
            args.extend(["--blocks", blocks]);
        }
        let (code, json) = run_json(&args);
        assert_eq!(code, 0, "{args:?}: {json}");
        assert_eq!(json["check"]["passed"], true, "{args:?}: {json}");
        let n: u64 = n.parse().unwrap();
        let grid = json["parameters"]["blocks"].as_u64().unwrap()
            * json["parameters"]["threads"].as_u64().unwrap();
        assert!(
            n == 1 || grid < n,
            "{args:?}: grid {grid} is not smaller than n"
        );
        assert_eq!(json["check"]["compared"], n);
        assert_eq!(
            json["results"]["checksum"].as_f64().unwrap() as u64,
            brute_force_checksum(n),
            "{args:?}"
        );
        let kernel_ms = json["timings"][1]["ms"].as_f64().unwrap();
        assert!(kernel_ms > 0.0, "{args:?}: kernel time {kernel_ms}");
    }
}

#[test]
#[cfg(not(solution))]
#[ignore = "needs an NVIDIA GPU"]
fn stub_fails_cleanly() {
    let (code, json) = run_json(&["--n", "1000"]);
    assert_eq!(code, 1, "{json}");
    let unfinished = json["error"]["kind"] == "unfinished";
    let failed_check = json["check"]["passed"] == false;
    assert!(unfinished || failed_check, "{json}");
    if unfinished {
        assert!(
            json["error"]["message"]
                .as_str()
                .unwrap()
                .contains("TODO(step"),
            "{json}"
        );
    }
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn person_report_shows_pass_timings_and_bandwidth() {
    exercise(&["--n", "1000003", "--runs", "3"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("PASS"))
        .stdout(predicate::str::contains("kernel"))
        .stdout(predicate::str::contains("device-to-device copy"));
}
