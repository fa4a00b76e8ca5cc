//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/matmul-naive) and the solution's (solutions/matmul-naive/Cargo.toml names it
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
    Exercise::new(env!("CARGO_PKG_NAME"), "matmul-naive")
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_flag() {
    exercise().assert_bad_arguments(&[
        (&["--width", "0"], "--width"),
        (&["--width", "40000"], "--width"),
        (&["--width", "wide"], "--width"),
        (&["--width", "-3"], "--width"),
        (&["--runs", "0"], "--runs"),
        (&["--accesses", "no-such-folder/accesses.svg"], "--accesses"),
        (&["--seed", "-1"], "--seed"),
        (&["--seed", "many"], "--seed"),
        (&["--block", "0"], "--block"),
        (&["--block", "33"], "--block"),
    ]);
}

#[test]
fn without_a_gpu_it_exits_3_and_says_so() {
    exercise().assert_no_gpu_exits_3();
}

#[test]
fn help_lists_every_flag() {
    exercise().assert_help_lists(&[
        "--width",
        "--block",
        "--runs",
        "--seed",
        "--json",
        "--accesses",
    ]);
}

#[test]
fn ptx_has_the_unmangled_kernels() {
    // The host passes the width as an i32: the kernel must take an int.
    for kernel in [".entry matmul(", ".param .u32 matmul_param_3"] {
        assert!(PTX.contains(kernel), "no {kernel} in the PTX:\n{PTX}");
    }
}

#[test]
#[cfg(solution)]
fn solution_ptx_has_what_the_exercise_is_about() {
    for instruction in ["%ctaid.y", "%tid.y"] {
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
    for block in ["16", "8", "32"] {
        for width in WIDTHS {
            exercise().assert_matmul_passes(&["--width", width, "--block", block, "--runs", "2"]);
        }
    }
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn solution_passes_seeded_inputs() {
    // Entries drawn from the seed (both signs, magnitudes 1/8 to 16, all
    // 24 bits), as the grader passes them: P within its bound.
    for block in ["8", "32"] {
        for width in ["33", "1024"] {
            let json = exercise().assert_matmul_passes(&[
                "--width", width, "--block", block, "--seed", "2026", "--runs", "2",
            ]);
            assert_eq!(json["parameters"]["seed"], 2026);
        }
    }
}

/// The classic mistakes of docs/src/matmul-naive.md, each made in this crate's
/// kernel (the solution's, where they run: the students' copy of this file
/// holds no solved kernel), with the first words a student meets on the
/// emulator.
fn kernel_with(edits: &[(&str, &str)]) -> String {
    kernels::testing::edited(KERNEL_CU, edits)
}

/// Where the emulator names `needle`'s line of `kernel`, as run by
/// `run_mistake(mistake, …)` from this test process (`end`: the character
/// after the number, a space, or a comma where the line is inlined).
fn at_line(mistake: &str, kernel: &str, needle: &str, end: char) -> String {
    format!(
        "-{mistake}-{}.cu:{}{end}",
        std::process::id(),
        kernels::testing::line_of(kernel, needle)
    )
}

/// A width that is not a multiple of the block: 33 with blocks of 16.
const PARTIAL_WIDTH: [&str; 6] = ["--width", "33", "--block", "16", "--runs", "1"];

/// N read transposed (`n[col * width + k]`): wrong values everywhere, and
/// the hint says which matrix and where its entry is.
#[test]
#[cfg(solution)]
fn n_read_transposed_is_named_by_the_hint() {
    let kernel = kernel_with(&[("n[k * width + col]", "n[col * width + k]")]);
    exercise()
        .run_mistake("n-transposed", &kernel, &PARTIAL_WIDTH)
        .assert_says(
            1,
            &[
                "FAIL",
                "N is read transposed: N[k][col] is at n[k * width + col]",
            ],
        );
}

/// No bounds check, or one on `row < width` only: the threads past the
/// right edge read past the end of N on the last rows. The emulator stops
/// at the first such read and names the block at the right edge, the
/// thread, the allocation and the line.
#[test]
#[cfg(solution)]
fn a_missing_or_half_bounds_check_is_an_illegal_address_at_the_right_edge() {
    for (mistake, bounds) in [("no-bounds", "{"), ("row-bound-only", "if (row < width) {")] {
        let kernel = kernel_with(&[("if (row < width && col < width) {", bounds)]);
        exercise()
            .run_mistake(mistake, &kernel, &PARTIAL_WIDTH)
            .assert_says(
                3,
                &[
                    "[out-of-bounds] block=(2,0,0)",
                    "past the start of a 4356-byte",
                    &at_line(mistake, &kernel, "sum += m[", ' '),
                    "CUDA_ERROR_ILLEGAL_ADDRESS",
                    "row < width and col < width",
                ],
            );
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
        &["--width", "17", "--block", "8"],
        &["--width", "5", "--block", "16"],
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

/// A kernel that keeps its answer: it computes P in its first launch, keeps
/// it in a `__device__` array and writes it in every later launch (issue
/// 52). Every timed launch gets inputs of its own and its whole output
/// checked, so the second launch's output answers the first's inputs and
/// the run fails saying so; the solution passes the same run.
#[test]
#[cfg(solution)]
fn a_kernel_that_keeps_its_answer_between_launches_fails_the_run() {
    let kernel = kernel_with(&[
        (
            "extern \"C\" __global__ void matmul(",
            "__device__ float kept[64 * 64];\n__device__ unsigned int blocks_seen;\n\n\
             extern \"C\" __global__ void matmul(",
        ),
        (
            "    if (row < width && col < width) {\n        float sum = 0.0f;\n",
            "    __shared__ unsigned int launch;\n\
             \x20   if (threadIdx.x + threadIdx.y == 0) {\n\
             \x20       launch = atomicAdd(&blocks_seen, 1u) / (gridDim.x * gridDim.y);\n\
             \x20   }\n\
             \x20   __syncthreads();\n\
             \x20   if (launch > 0) {\n\
             \x20       if (row < width && col < width) {\n\
             \x20           p[row * width + col] = kept[row * width + col];\n\
             \x20       }\n\
             \x20       return;\n\
             \x20   }\n\
             \x20   if (row < width && col < width) {\n        float sum = 0.0f;\n",
        ),
        (
            "        p[row * width + col] = sum;\n",
            "        p[row * width + col] = sum;\n        kept[row * width + col] = sum;\n",
        ),
    ]);
    let args = [
        "--width", "33", "--block", "16", "--seed", "7", "--runs", "2",
    ];
    exercise().assert_a_kept_answer_fails("keeps-its-answer", &kernel, KERNEL_CU, &args);
}
