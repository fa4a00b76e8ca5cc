//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/streams-overlap) and the solution's (solutions/streams-overlap/Cargo.toml names it
//! as its test); tests for only one of them are marked `#[cfg(solution)]`
//! or `#[cfg(not(solution))]` (build.rs sets it). Paths are the crate's own
//! (`CARGO_MANIFEST_DIR`), so each reads its own sources.
//!
//! GPU tests are ignored here; on a GPU: `cargo test -- --include-ignored`.
//! The last test, `the_exercise_is_done`, passes exactly when the exercise
//! is done on this machine, and until then says which step is next.

use kernels::streams;
use kernels::testing::Exercise;

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));
/// The sources as compiled, so a test can name the step that is next.
const KERNEL_CU: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/kernel.cu"));
const MAIN_RS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/main.rs"));

fn exercise() -> Exercise {
    Exercise::new(env!("CARGO_PKG_NAME"), "streams-overlap")
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_flag() {
    exercise().assert_bad_arguments(&[
        (&["--n", "0"], "--n"),
        (&["--streams", "0"], "--streams"),
        (&["--streams", "33"], "--streams"),
        (&["--chunks", "0"], "--chunks"),
        (&["--chunks", "2", "--streams", "4"], "--chunks"),
        (&["--chunks", "2000", "--n", "1000"], "--chunks"),
        (&["--work", "-1"], "--work"),
        (&["--work", "lots"], "--work"),
        (&["--timeline", "/no/such/folder/run.svg"], "--timeline"),
        (&["--runs", "0"], "--runs"),
        (&["--accesses", "no-such-folder/accesses.svg"], "--accesses"),
    ]);
}

#[test]
fn without_a_gpu_it_exits_3_and_says_so() {
    exercise().assert_no_gpu_exits_3();
}

#[test]
fn help_lists_every_flag() {
    exercise().assert_help_lists(&[
        "--n",
        "--streams",
        "--chunks",
        "--work",
        "--timeline",
        "--runs",
        "--json",
        "--accesses",
    ]);
}

#[test]
fn ptx_has_an_unmangled_transform_kernel() {
    assert!(
        PTX.contains(".entry transform("),
        "no transform kernel in the PTX:\n{PTX}"
    );
}

#[test]
#[cfg(solution)]
fn solution_ptx_loops_over_its_chunk_and_its_work() {
    for instruction in ["%nctaid.x", "mad.lo.s32"] {
        assert!(
            PTX.contains(instruction),
            "no {instruction} in the PTX:\n{PTX}"
        );
    }
}

#[test]
#[cfg(solution)]
fn solution_ptx_shows_what_the_catalogue_says_the_exercise_is_about() {
    exercise().assert_ptx_shows_what_the_exercise_is_about(PTX);
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn solution_passes_with_any_number_of_streams_and_uneven_chunks() {
    for streams in ["1", "2", "4", "8"] {
        let (code, json) = exercise().json(&[
            "--n",
            "1000003",
            "--streams",
            streams,
            "--work",
            "50",
            "--runs",
            "2",
        ]);
        assert_eq!(code, 0, "{streams} streams: {json}");
        assert_eq!(json["check"]["compared"], 2 * 1_000_003, "{json}");
        // The values themselves, as the grader rechecks them.
        let want = streams::expected_checksum(&streams::Parameters {
            n: 1_000_003,
            streams: 0,
            chunks: 0,
            work: 50,
            runs: 0,
        });
        let got = &json["results"]["checksum"];
        assert!(
            got["count"] == want.count && got["sum"] == want.sum && got["hash"] == want.hash,
            "checksum {got}, want {want:?}"
        );
    }
    // 7 chunks of 1000003: sizes differ, offsets are not multiples of anything.
    let (code, json) = exercise().json(&[
        "--n",
        "1000003",
        "--streams",
        "3",
        "--chunks",
        "7",
        "--runs",
        "1",
    ]);
    assert_eq!(code, 0, "{json}");
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn overlapping_beats_one_stream_at_the_defaults_and_draws_its_timeline() {
    let svg = std::env::temp_dir().join(format!("streams-overlap-{}.svg", std::process::id()));
    let (code, json) = exercise().json(&["--runs", "3", "--timeline", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{json}");
    let results = &json["results"];
    let (serial, overlapped) = (
        results["serial_ms"].as_f64().unwrap(),
        results["overlapped_ms"].as_f64().unwrap(),
    );
    assert!(
        overlapped < serial,
        "overlapped {overlapped} ms is not below serial {serial} ms"
    );
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.starts_with("<svg") && picture.contains("stream 3"),
        "{picture}"
    );
    std::fs::remove_file(svg).ok();
}

#[test]
#[cfg(not(solution))]
#[ignore = "needs an NVIDIA GPU"]
fn while_a_step_is_left_it_fails_cleanly() {
    exercise().assert_fails_cleanly_while_steps_are_left(KERNEL_CU, MAIN_RS, &["--n", "100000"]);
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn the_grader_s_batch_reports_each_run_as_alone() {
    exercise().assert_batch_reports_each_run_as_alone(&[
        &["--n", "1003", "--streams", "2"],
        &["--n", "77", "--streams", "3"],
        &["--runs", "1"],
    ]);
}

/// Last: passes exactly when the exercise is done on this machine's GPU;
/// until then it says which step is next.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_exercise_is_done() {
    exercise().assert_done(cfg!(solution), PTX, KERNEL_CU, MAIN_RS);
}
