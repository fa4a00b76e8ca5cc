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
        (&["--accesses", "no-such-folder/accesses.svg"], "--accesses"),
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
    exercise().assert_help_lists(&[
        "--width",
        "--tile",
        "--runs",
        "--seed",
        "--json",
        "--accesses",
    ]);
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
    // Entries drawn from the seed (both signs, magnitudes 1/8 to 16, all
    // 24 bits), as the grader passes them: P within its bound.
    for block in ["16", "32"] {
        for width in ["33", "1024"] {
            let json = exercise().assert_matmul_passes(&[
                "--width", width, "--tile", block, "--seed", "2026", "--runs", "2",
            ]);
            assert_eq!(json["parameters"]["seed"], 2026);
        }
    }
}

/// The classic mistakes of docs/src/matmul-tiled.md, each made in this crate's
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

/// `args` at width `width` with tiles of 16.
fn at_width(width: &str) -> [&str; 6] {
    ["--width", width, "--tile", "16", "--runs", "1"]
}

/// W / TILE phases instead of ⌈W / TILE⌉: the last partial tile along k is
/// never added, and at W < TILE nothing is (every entry 0). The hint names
/// the skipped tile.
#[test]
#[cfg(solution)]
fn w_over_tile_phases_is_told_the_last_tile_was_skipped() {
    let kernel = kernel_with(&[("(width + TILE - 1) / TILE", "width / TILE")]);
    exercise()
        .run_mistake("floor-phases", &kernel, &at_width("33"))
        .assert_says(
            1,
            &[
                "FAIL",
                "the last tile along k, only 1 wide, was skipped",
                "loop over ⌈W / TILE⌉ tiles",
            ],
        );
    exercise()
        .run_mistake("floor-phases", &kernel, &at_width("7"))
        .assert_says(
            1,
            &[
                "checksum = 0.0",
                "49 of 49 wrong",
                "the last tile along k, only 7 wide, was skipped",
            ],
        );
}

/// No zero padding (each load's bounds test made always true): the last
/// rows' loads read past the end of M or N. The emulator stops at the
/// first and names the thread and the load.
#[test]
#[cfg(solution)]
fn loads_without_zero_padding_are_an_illegal_address_named_by_the_load() {
    let kernel = kernel_with(&[("? m[", "|| true ? m["), ("? n[", "|| true ? n[")]);
    exercise()
        .run_mistake("no-padding", &kernel, &at_width("33"))
        .assert_says(
            3,
            &[
                "[out-of-bounds]",
                "past the start of a 4356-byte",
                "`ld.global",
                &at_line("no-padding", &kernel, "|| true ? n[", ','),
                "CUDA_ERROR_ILLEGAL_ADDRESS",
            ],
        );
}

/// The second `__syncthreads()` left out: a thread loads the next phase's
/// tile while another still reads this one. The emulator names the race
/// between the load and the read.
#[test]
#[cfg(solution)]
fn no_second_barrier_is_named_a_shared_memory_race() {
    let kernel = kernel_with(&[(
        "        }\n        __syncthreads();\n    }\n",
        "        }\n    }\n",
    )]);
    exercise()
        .run_mistake("one-barrier", &kernel, &at_width("33"))
        .assert_says(
            3,
            &[
                "[shared-memory-race]",
                &at_line("one-barrier", &kernel, "m_tile[ty][tx] =", ','),
                &at_line("one-barrier", &kernel, "sum += m_tile", ','),
                "put __syncthreads() between them",
            ],
        );
}

/// The phases inside `if (row < width && col < width)`: threads outside
/// the matrix skip them, their barriers and their tiles' slots (the zeros
/// past the edge), so the edge blocks' threads inside it read slots no
/// thread wrote. The emulator names that read.
#[test]
#[cfg(solution)]
fn phases_inside_the_bounds_test_read_tile_slots_no_thread_wrote() {
    let kernel = kernel_with(&[(
        "    for (int phase = 0;",
        "    if (row < width && col < width)\n    for (int phase = 0;",
    )]);
    exercise()
        .run_mistake("phases-in-bounds", &kernel, &at_width("33"))
        .assert_says(
            3,
            &[
                "[uninitialised] block=(2,0,0)",
                "which no thread of the block had written",
                &at_line("phases-in-bounds", &kernel, "sum += m_tile", ','),
                "write every element before any thread reads it",
            ],
        );
}

/// One tile index swapped (stored `m_tile[tx][ty]`, read `m_tile[ty][k]`):
/// wrong products, and the hint names the tiles' index order. (Both
/// swapped is right, with bank conflicts on a GPU.)
#[test]
#[cfg(solution)]
fn one_tile_index_swapped_is_told_to_index_tiles_the_same_way_round() {
    let stored_swapped = ("m_tile[ty][tx] =", "m_tile[tx][ty] =");
    exercise()
        .run_mistake("swapped", &kernel_with(&[stored_swapped]), &at_width("33"))
        .assert_says(
            1,
            &[
                "FAIL",
                "indexed [ty][tx] where it is stored",
                "one of them swapped multiplies the wrong slots",
            ],
        );
    let both = kernel_with(&[stored_swapped, ("m_tile[ty][k]", "m_tile[k][ty]")]);
    exercise()
        .run_mistake("swapped-both", &both, &at_width("33"))
        .assert_says(0, &["PASS"]);
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

/// A kernel that keeps its answer: it computes P in its first launch,
/// keeps it in a `__device__` array and writes it in every later launch
/// (issue 52: on an H100 it earned the speed point at 34.8 times the
/// course's speed). Every timed launch gets M and N of its own and its
/// whole P checked, so the second launch's P answers the first's inputs
/// and the run fails saying so; the solution passes the same run.
#[test]
#[cfg(solution)]
fn a_kernel_that_keeps_its_answer_between_launches_fails_the_run() {
    let kernel = kernel_with(&[
        (
            "template <int TILE>\n__device__ void matmul_tiled(",
            "__device__ float kept[64 * 64];\n__device__ unsigned int blocks_seen;\n\n\
             template <int TILE>\n__device__ void matmul_tiled(",
        ),
        (
            "    float sum = 0.0f;\n\n    for (int phase",
            "    __shared__ unsigned int launch;\n\
             \x20   if (tx == 0 && ty == 0) {\n\
             \x20       launch = atomicAdd(&blocks_seen, 1u) / (gridDim.x * gridDim.y);\n\
             \x20   }\n\
             \x20   __syncthreads();\n\
             \x20   if (launch > 0) {\n\
             \x20       if (row < width && col < width) {\n\
             \x20           p[row * width + col] = kept[row * width + col];\n\
             \x20       }\n\
             \x20       return;\n\
             \x20   }\n\
             \x20   float sum = 0.0f;\n\n    for (int phase",
        ),
        (
            "        p[row * width + col] = sum;\n",
            "        p[row * width + col] = sum;\n        kept[row * width + col] = sum;\n",
        ),
    ]);
    let args = [
        "--width", "33", "--tile", "16", "--seed", "7", "--runs", "2",
    ];
    exercise().assert_a_kept_answer_fails("keeps-its-answer", &kernel, KERNEL_CU, &args);
}
