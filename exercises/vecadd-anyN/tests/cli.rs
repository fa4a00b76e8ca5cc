//! The exercise binary as a user meets it. This one file is the stub's
//! (exercises/vecadd-anyN) and the solution's (solutions/vecadd-anyN/Cargo.toml names it
//! as its test); tests for only one of them are marked `#[cfg(solution)]`
//! or `#[cfg(not(solution))]` (build.rs sets it). Paths are the crate's own
//! (`CARGO_MANIFEST_DIR`), so each reads its own sources.
//!
//! GPU tests are ignored here; on a GPU: `cargo test -- --include-ignored`.
//! The last test, `the_exercise_is_done`, passes exactly when the exercise
//! is done on this machine, and until then says which step is next.

use kernels::testing::Exercise;
use predicates::prelude::*;

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));
/// The sources as compiled, so a test can name the step that is next.
const KERNEL_CU: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/kernel.cu"));
const MAIN_RS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/main.rs"));

fn exercise() -> Exercise {
    Exercise::new(env!("CARGO_PKG_NAME"), "vecadd-anyN")
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_flag() {
    exercise().assert_bad_arguments(&[
        (&["--n", "0"], "--n"),
        (&["--n", "ten"], "--n"),
        (&["--n", "-5"], "--n"),
        (&["--threads", "0"], "--threads"),
        (&["--threads", "2048"], "--threads"),
        (&["--threads", "1.5"], "--threads"),
        (&["--blocks", "0"], "--blocks"),
        (&["--blocks", "-1"], "--blocks"),
        (&["--runs", "0"], "--runs"),
        (&["--accesses", "no-such-folder/accesses.svg"], "--accesses"),
        (&["--seed", "-1"], "--seed"),
        (&["--seed", "many"], "--seed"),
        (&["--inputs-on-gpu=yes"], "--inputs-on-gpu"),
    ]);
}

#[test]
fn an_n_larger_than_any_gpu_is_refused_before_touching_one() {
    exercise()
        .command(&["--n", "100000000000"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("more than any GPU holds"));
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
        "--runs",
        "--seed",
        "--json",
        "--accesses",
        "--counters",
    ]);
}

#[test]
fn ptx_has_an_unmangled_vecadd_kernel() {
    assert!(
        PTX.contains(".entry vecadd("),
        "no vecadd kernel in the PTX:\n{PTX}"
    );
}

/// Σ 3·(i mod 4096) for i < n, by brute force: independent of the closed
/// form the binary uses.
fn brute_force_checksum(n: u64) -> u64 {
    (0..n).map(|i| 3 * (i % 4096)).sum()
}

#[test]
#[cfg(solution)]
fn solution_ptx_shows_what_the_catalogue_says_the_exercise_is_about() {
    exercise().assert_ptx_shows_what_the_exercise_is_about(PTX);
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
        let (code, json) = exercise().json(&args);
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

/// The classic first mistake: one element a thread, no grid-stride loop.
const NO_LOOP_KERNEL: &str = "extern \"C\" __global__ void vecadd(const float* a, const float* b, float* c, size_t n)\n\
     {\n\
     \x20   const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n\
     \x20   if (i < n) c[i] = a[i] + b[i];\n\
     }\n";

/// The classic first mistake, one element a thread and no grid-stride
/// loop, gets the check's words for it (which elements and why), not the
/// course's stale-launch guard, which speaks only when launches disagree.
#[test]
#[cfg(solution)]
fn a_kernel_without_a_grid_stride_loop_is_told_to_loop() {
    let run = exercise().run_kernel_with(
        "no-loop",
        NO_LOOP_KERNEL,
        &[
            "--n",
            "1000",
            "--threads",
            "128",
            "--blocks",
            "2",
            "--runs",
            "3",
            "--json",
        ],
        &[],
    );
    let stdout = &run.stdout;
    assert_eq!(run.code, Some(1), "{run}");
    assert!(stdout.contains(r#""passed":false"#), "{stdout}");
    assert!(
        stdout.contains("every element from c[256] on is wrong")
            && stdout.contains("each thread must loop")
            && stdout.contains("blockDim.x * gridDim.x"),
        "{stdout}"
    );
    assert!(!stdout.contains("launch 1 of"), "{stdout}");
}

/// A classic mistake of docs/src/vecadd-anyN.md, made in this crate's
/// kernel (the solution's, where it runs), with the first words a student
/// meets on the emulator. A bound of `i <= n` (here in the loop over the
/// last n % 4 elements, one at a time): one element past the end, an
/// illegal address every time, after the emulator's line naming the block,
/// the thread and the kernel's line.
#[test]
#[cfg(solution)]
fn a_bound_of_i_le_n_is_an_illegal_address_named_by_block_thread_and_line() {
    let kernel = kernels::testing::edited(KERNEL_CU, &[("; i < n; i", "; i <= n; i")]);
    let line = kernels::testing::line_of(&kernel, "c[i] = a[i] + b[i];");
    exercise()
        .run_mistake(
            "le-n",
            &kernel,
            &[
                "--n",
                "1000",
                "--threads",
                "128",
                "--blocks",
                "2",
                "--runs",
                "1",
            ],
        )
        .assert_says(
            3,
            &[
                "[out-of-bounds] block=(0,0,0) thread=(0,0,0)",
                "4000 bytes past the start of a 4000-byte",
                &format!("-le-n-{}.cu:{line} ", std::process::id()),
                "CUDA_ERROR_ILLEGAL_ADDRESS",
                "bounds tests (i < n;",
            ],
        );
}

/// `--counters` on the emulator: the solution's float4 loop is coalesced.
/// n = 4096 is 1024 float4s an array; 4 blocks of 128 threads go round
/// twice, every lane active, and each warp instruction's 32 lanes of 16
/// bytes are 512 bytes, 16 sectors, the fewest they fit in. So a and b
/// take 2 x 1024 / 32 = 64 load requests of 16 sectors and c 32 store
/// requests (n % 4 = 0: the tail loop makes none). On a GPU the report
/// has none: `ncu` measures them there.
#[test]
#[cfg(solution)]
fn counters_show_the_float4_loop_coalesced() {
    let args = [
        "--n",
        "4096",
        "--threads",
        "128",
        "--blocks",
        "4",
        "--runs",
        "1",
        "--counters",
    ];
    let (code, json) = exercise().json(&args);
    assert_eq!(
        (code, &json["check"]["passed"]),
        (0, &true.into()),
        "{json}"
    );
    let Some(counters) = json.get("counters") else {
        // A GPU's run: counters are `ncu`'s there.
        assert!(
            !json["device"]["name"].to_string().contains("emulator"),
            "{json}"
        );
        return;
    };
    let vecadd = &counters[0];
    assert_eq!(vecadd["kernel"], "vecadd", "{counters}");
    let traffic = |kind: &str| {
        let t = &vecadd["total"][kind];
        [&t["requests"], &t["transactions"], &t["ideal"]].map(|v| v.as_u64().unwrap())
    };
    assert_eq!(traffic("global_load"), [64, 1024, 1024], "{counters}");
    assert_eq!(traffic("global_store"), [32, 512, 512], "{counters}");
    assert_eq!(traffic("shared_load"), [0, 0, 0], "{counters}");
}

/// `--accesses` on the emulator, for the classic mistake of a grid without
/// a grid-stride loop: 2 blocks of 128 threads write c[0] to c[255], one
/// element a thread, block 0 the first 128 and block 1 the next; the 744
/// elements from c[256] on, past blocks x threads, no thread writes. Warp
/// 0's load of a[i] is lanes 0 to 31 reading 32 consecutive floats: 128
/// bytes, 4 sectors, the fewest. The picture says both in words, and the
/// run's verdict (a failed check, exit 1) is the run's as without it.
#[test]
#[cfg(solution)]
fn accesses_draw_the_elements_a_grid_without_a_loop_never_writes() {
    let picture = std::env::temp_dir().join(format!(
        "cuda-course-accesses-no-loop-{}.svg",
        std::process::id()
    ));
    let run = exercise().run_kernel_with(
        "accesses-no-loop",
        NO_LOOP_KERNEL,
        &[
            "--n",
            "1000",
            "--threads",
            "128",
            "--blocks",
            "2",
            "--runs",
            "1",
            "--accesses",
            picture.to_str().unwrap(),
        ],
        &[],
    );
    let stderr = &run.stderr;
    assert_eq!(run.code, Some(1), "{run}");
    if stderr.contains("needs the CPU emulator") {
        // A GPU's run: it records no accesses, and says so.
        assert!(!picture.exists());
        return;
    }
    assert!(
        stderr.contains("--accesses: drew kernel `vecadd`'s first launch in"),
        "{stderr}"
    );
    let svg = std::fs::read_to_string(&picture).unwrap();
    std::fs::remove_file(&picture).unwrap();
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert!(
        svg.contains(
            "1,000 elements of 4 B: 2 blocks wrote 256 of them; 744 were never written, \
             the first at element 256."
        ),
        "{svg}"
    );
    assert!(svg.contains(r#"class="unwritten""#), "{svg}");
    assert_eq!(
        svg.matches(r#"class="written" data-block="1""#).count(),
        2,
        "{svg}"
    );
    assert!(
        svg.contains("32 lanes read 4 B each: 4 sectors of 32 B in 1 line of 128 B"),
        "{svg}"
    );
    assert_eq!(svg.matches(r#"class="sector""#).count(), 4, "{svg}");
}

/// `--accesses` where the first launch faults (the bound of `i <= n`): no
/// launch finished, so nothing is drawn, and one line says so; the run
/// ends as it does without the flag (exit 3, the illegal address).
#[test]
#[cfg(solution)]
fn accesses_say_a_launch_that_faulted_left_nothing_to_draw() {
    let kernel = kernels::testing::edited(KERNEL_CU, &[("; i < n; i", "; i <= n; i")]);
    let picture = std::env::temp_dir().join(format!(
        "cuda-course-accesses-le-n-{}.svg",
        std::process::id()
    ));
    let picture_arg = picture.to_str().unwrap();
    let said = exercise()
        .run_mistake(
            "accesses-le-n",
            &kernel,
            &[
                "--n",
                "1000",
                "--threads",
                "128",
                "--blocks",
                "2",
                "--runs",
                "1",
                "--accesses",
                picture_arg,
            ],
        )
        .run;
    let stderr = &said.stderr;
    if stderr.contains("needs the CPU emulator") {
        return;
    }
    assert_eq!(said.code, Some(3), "{said}");
    assert!(
        stderr.contains(
            "--accesses: the kernel's first launch did not finish, so there is nothing to draw"
        ),
        "{said}"
    );
    assert!(!picture.exists(), "{said}");
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn solution_passes_seeded_inputs() {
    let seed = 2026;
    let n = 1_000_003;
    let (code, json) = exercise().json(&[
        "--n",
        "1000003",
        "--threads",
        "1024",
        "--blocks",
        "7",
        "--seed",
        "2026",
        "--runs",
        "2",
    ]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["check"]["passed"], true, "{json}");
    assert_eq!(json["parameters"]["seed"], seed);
    // Σ fl(a[i] + b[i]) from the drawn values (each sum rounded once to
    // f32, as c holds it), summed here exactly, not the binary's own
    // expected_checksum.
    let mut sum = kernels::vecadd::ExactSum::default();
    for i in 0..n {
        sum.add(kernels::seeded::drawn(seed, 1, i) + kernels::seeded::drawn(seed, 2, i));
    }
    let brute = sum.value();
    assert_eq!(json["results"]["checksum"].as_f64().unwrap(), brute);
    assert_ne!(brute as u64, brute_force_checksum(n));
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
fn person_report_shows_pass_timings_and_bandwidth() {
    exercise()
        .command(&["--n", "1000003", "--runs", "3"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("PASS"))
        .stdout(predicate::str::contains("kernel"))
        .stdout(predicate::str::contains("device-to-device copy"));
}

#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn the_grader_s_batch_reports_each_run_as_alone() {
    exercise().assert_batch_reports_each_run_as_alone(&[
        &["--n", "1000"],
        &["--n", "77", "--threads", "32"],
        &["--runs", "1"],
    ]);
}

/// The grader's runs above 2^31 elements make a and b on the GPU and check
/// c there: the same report as the host's inputs give, for the solution's
/// kernel, for one that subtracts, and for one that overwrites a and b to
/// agree with a wrong c, across seeded inputs' period (1000003) and the
/// readable inputs' (4096).
#[test]
#[cfg(solution)]
#[ignore = "needs an NVIDIA GPU"]
fn the_grader_s_inputs_on_gpu_give_the_host_s_report() {
    exercise().assert_inputs_on_gpu_report_as_on_host(
        PTX,
        ("add.f32", "sub.f32"),
        &[
            &[
                "--n",
                "1000010",
                "--seed",
                "7",
                "--threads",
                "256",
                "--blocks",
                "40",
                "--runs",
                "1",
            ],
            &[
                "--n",
                "10001",
                "--threads",
                "96",
                "--blocks",
                "3",
                "--runs",
                "1",
            ],
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

/// A kernel that keeps its answer: it adds in its first launch, keeps c in
/// a `__device__` array and copies it out in every later launch (issue 52,
/// the works-once mutant's next step). Every timed launch
/// gets inputs of its own and its whole output checked, so the second
/// launch's output answers the first's inputs and the run fails saying
/// so; the solution passes the same run.
#[test]
#[cfg(solution)]
fn a_kernel_that_keeps_c_between_launches_fails_the_run() {
    let kernel = kernels::testing::edited(
        KERNEL_CU,
        &[
            (
                "extern \"C\" __global__ void vecadd(",
                "__device__ float kept[4096];\n__device__ unsigned int blocks_seen;\n\n\
             extern \"C\" __global__ void vecadd(",
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
                "        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);\n",
                "        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);\n\
             \x20       reinterpret_cast<float4*>(kept)[i] = c4[i];\n",
            ),
            (
                "        c[i] = a[i] + b[i];\n",
                "        c[i] = a[i] + b[i];\n        kept[i] = c[i];\n",
            ),
        ],
    );
    exercise().assert_a_kept_answer_fails(
        "keeps-its-answer",
        &kernel,
        KERNEL_CU,
        &kernels::testing::KEPT_ANSWER_RUN,
    );
}
