//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/matmul-tiled) and the solution's (solutions/matmul-tiled/Cargo.toml names it
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

/// Widths with and without partial tiles, from 1 up.
const WIDTHS: [&str; 9] = ["1", "7", "16", "17", "31", "33", "100", "1000", "1024"];

fn exercise() -> Exercise {
    Exercise::new(env!("CARGO_PKG_NAME"), "matmul-tiled")
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_flag() {
    exercise().assert_bad_arguments(&[
        (&["--width", "0"], "--width"),
        (&["--width", "40000"], "--width"),
        (&["--width", "wide"], "--width"),
        (&["--width", "-3"], "--width"),
        (&["--runs", "0"], "--runs"),
        (&["--seed", "-1"], "--seed"),
        (&["--seed", "many"], "--seed"),
        (&["--tile", "8"], "--tile"),
        (&["--tile", "64"], "--tile"),
        (&["--tile", "sixteen"], "--tile"),
    ]);
}

#[test]
fn without_a_gpu_it_exits_3_and_says_so() {
    exercise().assert_no_gpu_exits_3();
}

#[test]
fn help_lists_every_flag() {
    exercise().assert_help_lists(&["--width", "--tile", "--runs", "--seed", "--json"]);
}

#[test]
fn ptx_has_the_unmangled_kernels() {
    for kernel in [".entry matmul_tiled_16(", ".entry matmul_tiled_32("] {
        assert!(PTX.contains(kernel), "no {kernel} in the PTX:\n{PTX}");
    }
}

#[test]
#[cfg(solution)]
fn solution_ptx_has_what_the_exercise_is_about() {
    for instruction in ["bar.sync", "ld.shared", "st.shared"] {
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
fn solution_passes_at_every_test_width() {
    for block in ["16", "32"] {
        for width in WIDTHS {
            exercise().assert_matmul_passes(&["--width", width, "--tile", block, "--runs", "2"]);
        }
    }
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn solution_passes_seeded_inputs() {
    // Entries that are odd multiples of 1/8, drawn from the seed, as the
    // grader passes them.
    for block in ["16", "32"] {
        for width in ["33", "1024"] {
            let json = exercise().assert_matmul_passes(&[
                "--width", width, "--tile", block, "--seed", "2026", "--runs", "2",
            ]);
            assert_eq!(json["parameters"]["seed"], 2026);
        }
    }
}

#[test]
#[cfg(not(solution))]
#[ignore = "needs an NVIDIA GPU"]
fn while_a_step_is_left_it_fails_cleanly() {
    exercise().assert_fails_cleanly_while_steps_are_left(KERNEL_CU, MAIN_RS, &["--width", "100"]);
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn the_grader_s_batch_reports_each_run_as_alone() {
    exercise().assert_batch_reports_each_run_as_alone(&[
        &["--width", "17", "--tile", "16"],
        &["--width", "33", "--tile", "32"],
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
