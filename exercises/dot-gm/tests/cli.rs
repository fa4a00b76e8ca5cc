//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/dot-gm) and the solution's (solutions/dot-gm/Cargo.toml names it
//! as its test); tests for only one of them are marked `#[cfg(solution)]`
//! or `#[cfg(not(solution))]` (build.rs sets it). Paths are the crate's own
//! (`CARGO_MANIFEST_DIR`), so each reads its own sources.
//!
//! GPU tests are ignored here; on a GPU: `cargo test -- --include-ignored`.
//! The last test, `the_exercise_is_done`, passes exactly when the exercise
//! is done on this machine, and until then says which step is next.

use kernels::testing::Exercise;

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));
/// The sources as compiled, so a test can name the step that is next.
const KERNEL_CU: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/kernel.cu"));
const MAIN_RS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/main.rs"));

fn exercise() -> Exercise {
    Exercise::new(env!("CARGO_PKG_NAME"), "dot-gm")
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_flag() {
    exercise().assert_bad_arguments(&[
        (&["--n", "0"], "--n"),
        (&["--n", "many"], "--n"),
        (&["--n", "100000000000"], "--n"),
        (&["--threads", "0"], "--threads"),
        (&["--threads", "2048"], "--threads"),
        (&["--blocks", "0"], "--blocks"),
        (&["--a", "x"], "--a"),
        (&["--a", "1.5i"], "--a"),
        (&["--b", "1001"], "--b"),
        (&["--runs", "-1"], "--runs"),
        (&["--inputs-on-gpu=yes"], "--inputs-on-gpu"),
    ]);
}

#[test]
fn negative_coefficients_are_values_not_flags() {
    // Parsed, so the run gets as far as looking for a GPU (hidden here).
    exercise()
        .command(&["--a", "-3-2i", "--b", "-5+i"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .assert()
        .code(3);
}

#[test]
fn without_a_gpu_it_exits_3_and_says_so() {
    exercise().assert_no_gpu_exits_3();
}

#[test]
fn help_lists_every_flag() {
    exercise().assert_help_lists(&[
        "--n",
        "--threads",
        "--blocks",
        "--a",
        "--b",
        "--runs",
        "--json",
    ]);
}

#[test]
fn ptx_has_an_unmangled_dot_kernel() {
    assert!(
        PTX.contains(".entry dot("),
        "no dot kernel in the PTX:\n{PTX}"
    );
}

#[test]
#[cfg(solution)]
fn solution_ptx_has_what_the_exercise_is_about() {
    for instruction in ["%nctaid.x", "st.global"] {
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
fn solution_passes_at_every_test_size_and_block_size() {
    for n in ["1", "2", "1000", "1000003", "67108871"] {
        for threads in ["32", "256", "1024"] {
            exercise().assert_dot_passes(&["--n", n, "--threads", threads, "--runs", "2"]);
        }
    }
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn solution_passes_other_inputs() {
    for (a, b) in [
        ("i", "2"),
        ("3-2i", "-5+i"),
        ("7", "-3"),
        ("-1000+i", "1000-i"),
    ] {
        exercise().assert_dot_passes(&["--n", "1000003", "--a", a, "--b", b, "--runs", "2"]);
    }
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn running_the_kernel_more_times_gives_the_same_answer() {
    // One timed run means two launches (with the warm-up); six means seven.
    let (once, limit) = exercise().assert_dot_passes(&["--n", "1000003", "--runs", "1"]);
    let (often, _) = exercise().assert_dot_passes(&["--n", "1000003", "--runs", "6"]);
    assert!(
        (once - often).abs() <= 2.0 * limit * once.abs(),
        "{once} vs {often}"
    );
}

#[test]
#[cfg(not(solution))]
#[ignore = "needs an NVIDIA GPU"]
fn while_a_step_is_left_it_fails_cleanly() {
    exercise().assert_fails_cleanly_while_steps_are_left(KERNEL_CU, MAIN_RS, &["--n", "1000"]);
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn the_grader_s_batch_reports_each_run_as_alone() {
    exercise().assert_batch_reports_each_run_as_alone(&[
        &["--n", "1000", "--threads", "64"],
        &["--n", "5", "--threads", "32", "--a", "3+2i"],
        &["--runs", "1"],
    ]);
}

/// The grader's runs above 2^31 elements make a and b on the GPU: the same
/// report as the host's inputs give, for the solution's kernel, for one
/// that adds instead of multiplying, and for one that overwrites a and b to
/// agree with a wrong c, with inputs that round in f32 (above
/// 2^24) and change sign.
#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn the_grader_s_inputs_on_gpu_give_the_host_s_report() {
    exercise().assert_inputs_on_gpu_report_as_on_host(
        PTX,
        ("mul.f32", "add.f32"),
        &[
            &[
                "--n", "100003", "--a", "3+1000i", "--b", "-1000+i", "--blocks", "7", "--runs", "1",
            ],
            &["--n", "4099", "--threads", "32", "--runs", "1"],
        ],
    );
}

/// Last: passes exactly when the exercise is done on this machine's GPU;
/// until then it says which step is next.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_exercise_is_done() {
    exercise().assert_done(cfg!(solution), PTX, KERNEL_CU, MAIN_RS);
}
