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
        (&["--accesses", "no-such-folder/accesses.svg"], "--accesses"),
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
        "--seed",
        "--runs",
        "--json",
        "--accesses",
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
fn solution_passes_drawn_inputs() {
    exercise().assert_dot_passes_drawn_inputs();
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

/// The classic mistakes of docs/src/dot-gm.md, each made in this crate's
/// kernel (the solution's, where they run: the students' copy of this file
/// holds no solved kernel), with the first words a student meets on the
/// emulator.
fn kernel_with(edits: &[(&str, &str)]) -> String {
    kernels::testing::edited(KERNEL_CU, edits)
}

/// The loop stops one element early (`i + 1 < n`; here the loop over the
/// last n % 4 elements, n = 1001): c[n - 1] keeps the NaN c is filled
/// with, so the dot is NaN, and the hint names the last product and the
/// bound.
#[test]
#[cfg(solution)]
fn a_loop_stopping_one_early_is_told_the_last_product_is_missing() {
    let kernel = kernel_with(&[("; i < n; i", "; i + 1 < n; i")]);
    exercise()
        .run_mistake(
            "one-early",
            &kernel,
            &[
                "--n",
                "1001",
                "--threads",
                "128",
                "--blocks",
                "2",
                "--runs",
                "1",
            ],
        )
        .assert_says(
            1,
            &[
                "FAIL",
                "got NaN",
                "exactly the last product, c[1000], was never written",
                "the loop must run while i < n",
            ],
        );
}

/// No grid-stride loop (here: a stride of n, so each loop runs once): the
/// products past the grid's first pass (4 floats a thread) are never
/// written, the NaN fill makes the dot NaN, and the hint says where the
/// unwritten products start and that each thread must loop.
#[test]
#[cfg(solution)]
fn a_kernel_without_a_grid_stride_loop_is_told_to_loop() {
    let kernel = kernel_with(&[("const size_t stride = ", "const size_t stride = n + 0 * ")]);
    exercise()
        .run_mistake(
            "no-loop",
            &kernel,
            &[
                "--n",
                "1000",
                "--threads",
                "32",
                "--blocks",
                "1",
                "--runs",
                "1",
            ],
        )
        .assert_says(
            1,
            &[
                "FAIL",
                "got NaN",
                "every product from c[128] on was never written",
                "128 = 4 × blocks × threads",
                "blockDim.x * gridDim.x",
            ],
        );
}

/// Summing into a single float with `+=` (here before the kernel's own
/// work, which the `return` skips): threads read the float another has
/// just written, a race the emulator names at once, with the line and the
/// way out.
#[test]
#[cfg(solution)]
fn summing_into_one_float_with_plus_equals_is_named_a_race() {
    let kernel = kernel_with(&[(
        "    const size_t stride = ",
        "    for (size_t j = threadIdx.x; j < n; j += blockDim.x) {\n\
         \x20       c[0] += a[j] * b[j];\n\
         \x20   }\n\
         \x20   return;\n\
         \x20   const size_t stride = ",
    )]);
    let line = kernels::testing::line_of(&kernel, "c[0] += a[j] * b[j];");
    exercise()
        .run_mistake(
            "one-float",
            &kernel,
            &[
                "--n",
                "1000",
                "--threads",
                "128",
                "--blocks",
                "1",
                "--runs",
                "1",
            ],
        )
        .assert_says(
            3,
            &[
                "[global-memory-conflict]",
                "thread (0,0,0) wrote it",
                "thread (1,0,0) read it",
                &format!("-one-float-{}.cu:{line} ", std::process::id()),
                "use an atomic",
            ],
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

/// A kernel that keeps its answer: it multiplies in its first launch, keeps
/// the products in a `__device__` array and copies them out in every later
/// launch (issue 52). Every timed launch gets inputs of its own and its
/// whole output checked, so the second
/// launch's output answers the first's inputs and the run fails saying
/// so; the solution passes the same run.
#[test]
#[cfg(solution)]
fn a_kernel_that_keeps_its_products_between_launches_fails_the_run() {
    let kernel = kernel_with(&[
        (
            "extern \"C\" __global__ void dot(",
            "__device__ float kept[4096];\n__device__ unsigned int blocks_seen;\n\n\
             extern \"C\" __global__ void dot(",
        ),
        (
            "    const size_t stride = (size_t)blockDim.x * gridDim.x;\n",
            "    __shared__ unsigned int launch;\n\
             \x20   if (threadIdx.x == 0) {\n\
             \x20       launch = atomicAdd(&blocks_seen, 1u) / (gridDim.x);\n\
             \x20   }\n\
             \x20   __syncthreads();\n\
             \x20   if (launch > 0) {\n\
             \x20       for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n\
             \x20            i += (size_t)blockDim.x * gridDim.x) {\n\
             \x20           c[i] = kept[i];\n\
             \x20       }\n\
             \x20       return;\n\
             \x20   }\n\
             \x20   const size_t stride = (size_t)blockDim.x * gridDim.x;\n",
        ),
        (
            "        c4[i] = make_float4(x.x * y.x, x.y * y.y, x.z * y.z, x.w * y.w);\n",
            "        c4[i] = make_float4(x.x * y.x, x.y * y.y, x.z * y.z, x.w * y.w);\n\
             \x20       reinterpret_cast<float4*>(kept)[i] = c4[i];\n",
        ),
        (
            "        c[i] = a[i] * b[i];\n",
            "        c[i] = a[i] * b[i];\n        kept[i] = c[i];\n",
        ),
    ]);
    exercise().assert_a_kept_answer_fails(
        "keeps-its-answer",
        &kernel,
        KERNEL_CU,
        &kernels::testing::KEPT_ANSWER_RUN,
    );
}
