//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/memspace-timing) and the solution's (solutions/memspace-timing/Cargo.toml names it
//! as its test); tests for only one of them are marked `#[cfg(solution)]`
//! or `#[cfg(not(solution))]` (build.rs sets it). Paths are the crate's own
//! (`CARGO_MANIFEST_DIR`), so each reads its own sources.
//!
//! GPU tests are ignored here; on a GPU: `cargo test -- --include-ignored`.
//! The last test, `the_exercise_is_done`, passes exactly when the exercise
//! is done on this machine, and until then says which step is next.

use kernels::checksum::Checksum;
use kernels::memspace;
use kernels::testing::Exercise;

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));
/// The sources as compiled, so a test can name the step that is next.
const KERNEL_CU: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/kernel.cu"));
const MAIN_RS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/main.rs"));

fn exercise() -> Exercise {
    Exercise::new(env!("CARGO_PKG_NAME"), "memspace-timing")
}

/// The PTX of one kernel: from its `.entry` to the next kernel's.
fn kernel(name: &str) -> &'static str {
    let start = PTX
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no kernel {name} in the PTX:\n{PTX}"));
    let rest = &PTX[start + 1..];
    &PTX[start..start + 1 + rest.find(".entry").unwrap_or(rest.len())]
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_flag() {
    exercise().assert_bad_arguments(&[
        (&["--threads", "0"], "--threads"),
        (&["--threads", "2048"], "--threads"),
        (&["--blocks", "0"], "--blocks"),
        (&["--blocks", "lots"], "--blocks"),
        (&["--pattern", "strided"], "--pattern"),
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
        "--threads",
        "--blocks",
        "--pattern",
        "--runs",
        "--json",
        "--accesses",
    ]);
}

#[test]
fn ptx_has_the_four_kernels_and_the_constant_array() {
    for name in ["sum_global", "sum_constant", "sum_register", "sum_shared"] {
        kernel(name);
    }
    assert!(
        PTX.contains(".const .align 4 .b8 const_data[16384]"),
        "{PTX}"
    );
}

#[test]
#[cfg(solution)]
fn each_solution_kernel_reads_its_own_memory_space() {
    assert!(kernel("sum_global").contains("ld.global"));
    assert!(kernel("sum_constant").contains("ld.const"));
    assert!(
        kernel("sum_shared").contains("ld.shared") && kernel("sum_shared").contains("bar.sync")
    );
    let register = kernel("sum_register");
    assert!(
        !register.contains("ld.global") && !register.contains("ld.const"),
        "{register}"
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
fn solution_passes_with_both_patterns_and_odd_shapes() {
    for args in [
        &["--pattern", "uniform"][..],
        &["--pattern", "per-thread"],
        &["--blocks", "7", "--threads", "96"],
        &[
            "--blocks",
            "3",
            "--threads",
            "1024",
            "--pattern",
            "per-thread",
        ],
    ] {
        let mut args = args.to_vec();
        args.extend(["--runs", "2"]);
        let (code, json) = exercise().json(&args);
        assert_eq!(code, 0, "{args:?}: {json}");
        let rows = json["results"]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 4, "{json}");
        let register = rows.iter().find(|r| r["space"] == "register").unwrap();
        assert_eq!(register["relative_to_register"], 1.0);
        let threads = json["parameters"]["blocks"].as_u64().unwrap()
            * json["parameters"]["threads"].as_u64().unwrap();
        assert_eq!(json["check"]["compared"], 4 * threads);
        // The sums themselves, as the grader rechecks them.
        let want = Checksum::of((0..4 * threads).map(|_| memspace::EXPECTED_SUM.to_bits()));
        let got = &json["results"]["checksum"];
        assert!(
            got["count"] == want.count && got["sum"] == want.sum && got["hash"] == want.hash,
            "checksum {got}, want {want:?}"
        );
    }
}

/// The classic mistakes of docs/src/memspace-timing.md, each made in this
/// crate's kernel (the solution's, where they run: the students' copy of
/// this file holds no solved kernel), with the first words a student meets
/// on the emulator.
fn kernel_with(edits: &[(&str, &str)]) -> String {
    kernels::testing::edited(KERNEL_CU, edits)
}

/// One block of one warp, one run: the emulator's slowest kernels stay quick.
const ONE_WARP: [&str; 6] = ["--threads", "32", "--blocks", "1", "--runs", "1"];

/// The shared tile's copy (step 4), as the solution writes it.
const TILE_COPY: &str = "for (int j = threadIdx.x; j < SIZE; j += blockDim.x) {";

/// `const_data` never filled, as the kernel sees it: the constant kernel
/// reads a `__constant__` array the host never filled (as when step 5
/// fills another one). Its sums are 0, and the hint says to fill
/// const_data through the module's symbol.
#[test]
#[cfg(solution)]
fn a_constant_array_never_filled_is_told_to_fill_const_data() {
    let kernel = kernel_with(&[
        (
            "__constant__ float const_data[SIZE];",
            "__constant__ float const_data[SIZE];\n__constant__ float never_filled[SIZE];",
        ),
        ("sum += const_data[", "sum += never_filled["),
    ]);
    exercise()
        .run_mistake("never-filled", &kernel, &ONE_WARP)
        .assert_says(
            1,
            &[
                "FAIL",
                "constant[0]: expected 8386560, got 0",
                "the constant kernel summed zeros: copy the data into const_data",
            ],
        );
}

/// Step 4's copy without `__syncthreads()` after it: a thread reads the
/// tile before another has filled its part. The emulator names the race in
/// `sum_shared`.
#[test]
#[cfg(solution)]
fn the_tile_copy_without_a_barrier_is_named_a_shared_memory_race() {
    let kernel = kernel_with(&[(
        "    // No thread may read the tile before every thread has written its part.\n    __syncthreads();\n",
        "",
    )]);
    exercise()
        .run_mistake("copy-unsynced", &kernel, &ONE_WARP)
        .assert_says(
            3,
            &[
                "[shared-memory-race]",
                "kernel `sum_shared`",
                "thread (0,0,0) read it",
                "put __syncthreads() between them",
            ],
        );
}

/// The copy loop stepping by 1 from `threadIdx.x`: every thread copies
/// almost all of the tile, writing the slots the other threads write. The
/// emulator names it a race between two threads' writes.
#[test]
#[cfg(solution)]
fn the_tile_copy_stepping_by_one_is_named_a_shared_memory_race() {
    let kernel = kernel_with(&[(TILE_COPY, "for (int j = threadIdx.x; j < SIZE; ++j) {")]);
    exercise()
        .run_mistake("copy-step-1", &kernel, &ONE_WARP)
        .assert_says(
            3,
            &[
                "[shared-memory-race]",
                "kernel `sum_shared`",
                "thread (0,0,0) wrote it",
                "thread (1,0,0) wrote it",
            ],
        );
}

#[test]
#[cfg(not(solution))]
#[ignore = "needs an NVIDIA GPU"]
fn while_a_step_is_left_it_fails_cleanly() {
    exercise().assert_fails_cleanly_while_steps_are_left(KERNEL_CU, MAIN_RS, &[]);
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn the_grader_s_batch_reports_each_run_as_alone() {
    exercise().assert_batch_reports_each_run_as_alone(&[
        &["--blocks", "3", "--threads", "96"],
        &[
            "--blocks",
            "2",
            "--threads",
            "64",
            "--pattern",
            "per-thread",
        ],
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
