//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/dot-sm) and the solution's (solutions/dot-sm/Cargo.toml names it
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
    Exercise::new(env!("CARGO_PKG_NAME"), "dot-sm")
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
        (&["--threads", "100"], "--threads"),
        // The grader's switch for dot-gm's run above 2^31 elements.
        (&["--inputs-on-gpu"], "--inputs-on-gpu"),
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

/// The classic mistakes of docs/src/dot-sm.md, each made in this crate's
/// kernel (the solution's, where they run: the students' copy of this file
/// holds no solved kernel), with the first words a student meets on the
/// emulator.
fn kernel_with(edits: &[(&str, &str)]) -> String {
    kernels::testing::edited(KERNEL_CU, edits)
}

/// Where the emulator names `needle`'s line of `kernel`, as run by
/// `run_mistake(mistake, …)` from this test process.
fn at_line(mistake: &str, kernel: &str, needle: &str) -> String {
    format!(
        "-{mistake}-{}.cu:{} ",
        std::process::id(),
        kernels::testing::line_of(kernel, needle)
    )
}

/// The tree's step, and the barrier after it.
const TREE_STEP: &str = "cache[threadIdx.x] += cache[threadIdx.x + half];";
const TREE_BARRIER: &str = "        // Outside the if: every thread of the block must reach the barrier.\n        __syncthreads();\n";

const SMALL_GRID: [&str; 8] = [
    "--n",
    "1000",
    "--threads",
    "128",
    "--blocks",
    "2",
    "--runs",
    "1",
];

/// No `__syncthreads()` between the tree's steps: a thread reads a slot
/// another thread is still to write. The emulator names the race every
/// time, with both threads and the tree's line.
#[test]
#[cfg(solution)]
fn no_barrier_between_the_tree_s_steps_is_named_a_shared_memory_race() {
    let kernel = kernel_with(&[(TREE_BARRIER, "")]);
    exercise()
        .run_mistake("tree-unsynced", &kernel, &SMALL_GRID)
        .assert_says(
            3,
            &[
                "[shared-memory-race]",
                "thread (0,0,0) read it",
                &at_line("tree-unsynced", &kernel, TREE_STEP),
                "put __syncthreads() between them",
            ],
        );
}

/// A second `__syncthreads()` inside `if (threadIdx.x < half)`: the
/// threads of a block wait at two different barriers. The emulator names
/// the divergent barrier. (A `__syncthreads()` moved into the if, none
/// after it, is not named: the threads that skip it never wait anywhere
/// again and exit, which a GPU allows too: it passes, as the chapter says.)
#[test]
#[cfg(solution)]
fn a_second_barrier_inside_the_if_is_named_a_barrier_not_every_thread_reaches() {
    let kernel = kernel_with(&[(
        TREE_STEP,
        "cache[threadIdx.x] += cache[threadIdx.x + half];\n            __syncthreads();",
    )]);
    exercise()
        .run_mistake("barrier-in-if", &kernel, &SMALL_GRID)
        .assert_says(
            3,
            &[
                "[barrier]",
                "barrier not reached by every thread",
                "thread (64,0,0) waits at `bar.sync`",
                "every live thread of a block must reach the same __syncthreads()",
            ],
        );
    let moved = kernel_with(&[
        (TREE_BARRIER, ""),
        (
            TREE_STEP,
            "cache[threadIdx.x] += cache[threadIdx.x + half];\n            __syncthreads();",
        ),
    ]);
    exercise()
        .run_mistake("barrier-moved-into-if", &moved, &SMALL_GRID)
        .assert_says(0, &["PASS"]);
}

/// The store to `cache` not followed by a barrier: the tree's first step
/// reads slots not yet stored. The emulator names the race between the
/// store and the tree.
#[test]
#[cfg(solution)]
fn no_barrier_after_the_store_to_cache_is_named_a_shared_memory_race() {
    let kernel = kernel_with(&[(
        "    cache[threadIdx.x] = sum;\n    __syncthreads();\n",
        "    cache[threadIdx.x] = sum;\n",
    )]);
    exercise()
        .run_mistake("store-unsynced", &kernel, &SMALL_GRID)
        .assert_says(
            3,
            &[
                "[shared-memory-race]",
                "thread (64,0,0) wrote it",
                &at_line("store-unsynced", &kernel, "cache[threadIdx.x] = sum;"),
                &at_line("store-unsynced", &kernel, TREE_STEP),
                "put __syncthreads() between them",
            ],
        );
}

/// Every thread writes `partials[blockIdx.x]`: their own slot (wrong), or
/// all `cache[0]` (harmless on a GPU). The emulator names both: many
/// threads storing to one address with no barrier between.
#[test]
#[cfg(solution)]
fn every_thread_writing_the_partial_is_named_a_conflict() {
    for (mistake, store) in [
        (
            "all-write-own",
            "partials[blockIdx.x] = cache[threadIdx.x];",
        ),
        ("all-write-total", "partials[blockIdx.x] = cache[0];"),
    ] {
        let kernel = kernel_with(&[
            ("if (threadIdx.x == 0) {", "{"),
            ("partials[blockIdx.x] = cache[0];", store),
        ]);
        exercise()
            .run_mistake(mistake, &kernel, &SMALL_GRID)
            .assert_says(
                3,
                &[
                    "[global-memory-conflict]",
                    "thread (0,0,0) wrote it",
                    "thread (1,0,0) wrote it",
                    &at_line(mistake, &kernel, store),
                    "give each thread its own element",
                ],
            );
    }
}

/// A fixed-size `__shared__ float cache[256]` passes even at 512 and 1024
/// threads: the slots past 256 land in the dynamic shared memory the host
/// reserves for `extern __shared__` (one float per thread), which nothing
/// else uses. The chapter says so; this test notices if that changes.
#[test]
#[cfg(solution)]
fn a_fixed_size_cache_passes_because_the_host_reserves_a_float_per_thread() {
    let kernel = kernel_with(&[(
        "extern __shared__ float cache[];",
        "__shared__ float cache[256];",
    )]);
    for threads in ["512", "1024"] {
        exercise()
            .run_mistake(
                "fixed-cache",
                &kernel,
                &[
                    "--n",
                    "5000",
                    "--threads",
                    threads,
                    "--blocks",
                    "2",
                    "--runs",
                    "1",
                ],
            )
            .assert_says(0, &["PASS"]);
    }
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

/// Last: passes exactly when the exercise is done on this machine's GPU;
/// until then it says which step is next.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_exercise_is_done() {
    exercise().assert_done(cfg!(solution), PTX, KERNEL_CU, MAIN_RS);
}

/// A kernel that keeps its answer: it sums in its first launch, keeps the
/// partial sums in a `__device__` array and writes them in every later
/// launch (issue 52). Every timed launch gets inputs of its own and its
/// whole output checked, so the second launch's output answers the first's
/// inputs and the run fails saying so; the solution passes the same run.
#[test]
#[cfg(solution)]
fn a_kernel_that_keeps_its_partials_between_launches_fails_the_run() {
    let kernel = kernel_with(&[
        (
            "extern \"C\" __global__ void dot(",
            "__device__ float kept[1024];\n__device__ unsigned int blocks_seen;\n\n\
             extern \"C\" __global__ void dot(",
        ),
        (
            "    extern __shared__ float cache[];\n",
            "    extern __shared__ float cache[];\n\
             \x20   __shared__ unsigned int launch;\n\
             \x20   if (threadIdx.x == 0) {\n\
             \x20       launch = atomicAdd(&blocks_seen, 1u) / (gridDim.x);\n\
             \x20   }\n\
             \x20   __syncthreads();\n\
             \x20   if (launch > 0) {\n\
             \x20       if (threadIdx.x == 0) {\n\
             \x20           partials[blockIdx.x] = kept[blockIdx.x];\n\
             \x20       }\n\
             \x20       return;\n\
             \x20   }\n",
        ),
        (
            "        partials[blockIdx.x] = cache[0];\n",
            "        partials[blockIdx.x] = cache[0];\n        kept[blockIdx.x] = cache[0];\n",
        ),
    ]);
    exercise().assert_a_kept_answer_fails(
        "keeps-its-answer",
        &kernel,
        KERNEL_CU,
        &kernels::testing::KEPT_ANSWER_RUN,
    );
}
