//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/dot-atomic) and the solution's (solutions/dot-atomic/Cargo.toml names it
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
    Exercise::new(env!("CARGO_PKG_NAME"), "dot-atomic")
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
        (&["--sweep", "--blocks", "4"], "--blocks"),
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
        "--runs",
        "--json",
        "--accesses",
        "--sweep",
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
    for instruction in ["bar.sync", "st.shared", "ld.shared"] {
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

/// The classic mistakes of docs/src/dot-atomic.md, each made in this crate's
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

/// `*result += cache[0]` instead of `atomicAdd`: each block's thread 0
/// reads the float another block's thread 0 has written. The emulator
/// names the race between two blocks' thread 0 (which two depends on its
/// order) at any block count, with the line and the way out.
#[test]
#[cfg(solution)]
fn plus_equals_instead_of_atomic_add_is_named_a_race_between_blocks() {
    let kernel = kernel_with(&[("atomicAdd(result, cache[0]);", "*result += cache[0];")]);
    for blocks in ["2", "64"] {
        exercise()
            .run_mistake(
                "plus-equals",
                &kernel,
                &[
                    "--n",
                    "100000",
                    "--threads",
                    "128",
                    "--blocks",
                    blocks,
                    "--runs",
                    "1",
                ],
            )
            .assert_says(
                3,
                &[
                    "[global-memory-conflict]",
                    "thread (0,0,0) wrote it",
                    "thread (0,0,0) read it",
                    &at_line("plus-equals", &kernel, "*result += cache[0];"),
                    "use an atomic",
                ],
            );
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
fn the_sweep_checks_and_times_every_grid() {
    let (code, json) = exercise().json(&["--sweep", "--n", "1048576", "--runs", "2"]);
    assert_eq!(code, 0, "{json}");
    let rows = json["results"]["sweep"].as_array().unwrap();
    // 1, 2, 4, ... 2048 blocks of 512 threads: 2048 is one loop per thread.
    let blocks: Vec<u64> = rows.iter().map(|r| r["blocks"].as_u64().unwrap()).collect();
    assert_eq!(blocks, (0..12).map(|k| 1u64 << k).collect::<Vec<_>>());
    assert!(rows.iter().all(|r| r["passed"] == true), "{json}");
    assert_eq!(rows[11]["loops_per_thread"], 1);
    let fastest = rows
        .iter()
        .map(|r| r["gb_per_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(
        json["throughput"]["kernel_gb_per_s"].as_f64().unwrap(),
        fastest
    );
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

/// The solution made to keep its answer: it sums in its first launch,
/// keeps the sum in a `__device__` float and writes it in every later
/// launch.
#[cfg(solution)]
fn kept_sum_kernel() -> String {
    kernel_with(&[
        (
            "extern \"C\" __global__ void dot(",
            "__device__ float kept;\n__device__ unsigned int blocks_seen;\n\n\
             extern \"C\" __global__ void dot(",
        ),
        (
            "    extern __shared__ float cache[];\n",
            "    extern __shared__ float cache[];\n\
             \x20   __shared__ unsigned int launch;\n\
             \x20   if (threadIdx.x == 0) {\n\
             \x20       launch = atomicAdd(&blocks_seen, 1u) / gridDim.x;\n\
             \x20   }\n\
             \x20   __syncthreads();\n\
             \x20   if (launch > 0) {\n\
             \x20       if (blockIdx.x == 0 && threadIdx.x == 0) {\n\
             \x20           *result = kept;\n\
             \x20       }\n\
             \x20       return;\n\
             \x20   }\n",
        ),
        (
            "        atomicAdd(result, cache[0]);\n",
            "        atomicAdd(result, cache[0]);\n        atomicAdd(&kept, cache[0]);\n",
        ),
    ])
}

/// A kernel that keeps its answer: it sums in its first launch, keeps the
/// sum in a `__device__` float and writes it in every later launch (issue
/// 52: on an H100 it earned the speed point at 10.5 times the course's
/// speed). Every timed launch gets a and b of their own and its sum
/// checked, so the second launch's sum answers the first's inputs and the
/// run fails saying so; the solution passes the same run.
#[test]
#[cfg(solution)]
fn a_kernel_that_keeps_its_sum_between_launches_fails_the_run() {
    let kernel = kept_sum_kernel();
    exercise().assert_a_kept_answer_fails(
        "keeps-its-sum",
        &kernel,
        KERNEL_CU,
        &kernels::testing::KEPT_ANSWER_RUN,
    );
}

/// The same kept sum in the grader's run of two launches (`--runs 1`) at a
/// million drawn elements, the golden class's: its drawn first launch and
/// the task's inputs have dots that a sum's bound may take for each other
/// (about 1 draw in 10, when the golden class's keeps-its-sum once kept a
/// run), so the course draws the first launch again until neither answer
/// passes for the other's inputs. Every one of 24 runs fails; the chance
/// that all would had a tenth of them passed is under 8%.
#[test]
#[cfg(solution)]
fn a_kept_sum_never_passes_by_a_chance_nearness_of_two_dots() {
    let kernel = kept_sum_kernel();
    let args = ["--n", "1000003", "--seed", "11", "--runs", "1"];
    let runs = exercise().run_kernel_times("keeps-its-sum-at-a-million", &kernel, &args, 24);
    for said in &runs {
        said.assert_says(
            1,
            &["launch 2 of 2 of the kernel wrote the answer to launch 1's inputs"],
        );
    }
}

/// The grader's canary runs (`CUDA_COURSE_CANARY_RUN=1`) time their
/// launches unjudged: the canary's dot is the exercise's moved by its mark,
/// which one launch's bound may take in and the next's not, and judged, a
/// correct host lost its run as a stale launch (1 grading in about 10 of
/// the golden class). A kernel that adds nothing in its first launch and
/// sums right in the later ones fails any other run as a stale launch, and
/// passes a canary run, whose last launch's sum is all that is read.
#[test]
#[cfg(solution)]
fn a_canary_run_times_its_launches_unjudged() {
    let kernel = kernel_with(&[
        (
            "extern \"C\" __global__ void dot(",
            "__device__ unsigned int blocks_seen;\n\nextern \"C\" __global__ void dot(",
        ),
        (
            "    extern __shared__ float cache[];\n",
            "    extern __shared__ float cache[];\n\
             \x20   __shared__ unsigned int launch;\n\
             \x20   if (threadIdx.x == 0) {\n\
             \x20       launch = atomicAdd(&blocks_seen, 1u) / gridDim.x;\n\
             \x20   }\n\
             \x20   __syncthreads();\n\
             \x20   if (launch == 0) {\n\
             \x20       return;\n\
             \x20   }\n",
        ),
    ]);
    let args = kernels::testing::KEPT_ANSWER_RUN;
    let run = |env: &[(&str, &str)]| {
        exercise().run_kernel_with("skips-its-first-launch", &kernel, &args, env)
    };
    run(&[]).assert_says(
        1,
        &["launch 1 of 3 of the kernel wrote an output that is not the answer to its inputs"],
    );
    run(&[(kernels::CANARY_RUN_ENV, "1")]).assert_says(0, &["PASS"]);
}
