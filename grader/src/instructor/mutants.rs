//! The grader's own test class: every solution, every stub, one mutant per
//! classic bug (a solution with that one bug put in), and correct variants
//! written differently from the solutions. Each is an edit of the current
//! solution, applied when the class is written, so the class follows the
//! solutions; an edit that no longer applies is an error, not a silent pass.
//! `verify` says which expectations a graded class broke.

use std::fs;
use std::path::Path;

use kernels::catalogue::ExerciseId::{self, *};

use crate::error::{Error, Result};
use crate::plan::runs::{Role, Tag};
use crate::record::outcome::{CheckName, FindingKind};
use crate::record::results::{self, Results};

/// One change to a solution file: `from` must occur in it.
pub struct Edit {
    pub file: &'static str,
    pub from: &'static str,
    pub to: &'static str,
}

/// What grading must do with a submission.
pub enum Expect {
    /// Every point.
    Full,
    /// No point in any exercise (the stubs).
    Nothing,
    /// Every run of the kernel in the course's host code fails, and with
    /// them the PTX, memory-safety and speed points, which need a kernel
    /// that passes its runs. (The student's host code is judged with the
    /// grader's canary kernel, so a kernel's bug costs it nothing.)
    LosesEveryKernelRun,
    /// A bug in the host code: every run of the student's binary fails,
    /// and every run of their kernel in the course's host code passes.
    LosesHostRuns,
    /// Loses the student's binary's run of this tag, whose verdict only a
    /// GPU's time reaches (streams' overlap), and keeps every kernel run.
    LosesHostRun(Tag),
    /// Loses the kernel's run (in the course's host code) of this tag (any
    /// run if None); in results made before kernel runs, any run of it.
    LosesRun(Option<Tag>),
    /// Loses this point (on the emulator, memory safety to its own
    /// findings; speed it does not assess, so such a mutant says what it
    /// loses there in [`Mutant::on_emulator`]).
    LosesCheck(CheckName),
    /// Loses the PTX point, and so every run's points.
    LosesPtx,
    /// Undefined behaviour a GPU may well run correctly: only the
    /// emulator's expectation ([`Mutant::on_emulator`]) is checked.
    OnlyOnTheEmulator,
}

/// What grading on the CPU emulator (`--emulate`) must do where it differs
/// from a GPU. The emulator carries on past what a GPU carries on past, so
/// a run's verdict is what it would be on a GPU, and its findings cost the
/// memory-safety point, as compute-sanitizer's do.
pub enum Emulated {
    /// A run names the emulator's finding of this kind, with its
    /// `kernel.cu` line, and the memory-safety point is lost to it, besides
    /// the GPU's expectation.
    Finds(FindingKind),
    /// Every point: the one run that catches it needs a GPU's speed, and the
    /// emulator skips it.
    Full,
    /// Loses the memory-safety point to the emulator's finding of this kind
    /// where a GPU's tools see nothing (threads writing one word, even the
    /// same value), not the point the GPU's expectation names.
    Stricter(FindingKind),
}

pub struct Mutant {
    pub exercise: ExerciseId,
    /// Short, for the student folder: `<exercise>.<name>`.
    pub name: &'static str,
    pub bug: &'static str,
    pub edits: &'static [Edit],
    pub expect: Expect,
    /// Where grading on the CPU emulator must differ from a GPU's.
    pub on_emulator: Option<Emulated>,
}

const fn edit(file: &'static str, from: &'static str, to: &'static str) -> Edit {
    Edit { file, from, to }
}

/// vecadd-anyN's host adds a and b itself, after the copy back.
const HOST_ADDS: Edit = edit(
    "main.rs",
    "    d_c.copy_to(&mut c)?;\n",
    "    d_c.copy_to(&mut c)?;\n    for (i, x) in c.iter_mut().enumerate() {\n        *x = task.a[i] + task.b[i];\n    }\n",
);

/// The solutions' two grid-stride loops, the float4 one and the tail, of
/// c[i] = a[i] `$op` b[i]: dot-gm's (`*`) and vecadd-anyN's (`+`).
macro_rules! grid_stride_loops {
    ($op:literal) => {
        concat!(
            "    for (size_t i = first; i < n / 4; i += stride) {\n",
            "        const float4 x = a4[i];\n",
            "        const float4 y = b4[i];\n",
            "        c4[i] = make_float4(x.x ",
            $op,
            " y.x, x.y ",
            $op,
            " y.y, x.z ",
            $op,
            " y.z, x.w ",
            $op,
            " y.w);\n",
            "    }\n",
            "    // The last n % 4 elements, one float each.\n",
            "    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {\n",
            "        c[i] = a[i] ",
            $op,
            " b[i];\n",
            "    }\n"
        )
    };
}
const GM_LOOPS: &str = grid_stride_loops!("*");
const VECADD_LOOPS: &str = grid_stride_loops!("+");

/// Thread `first` of `stride` runs `$body` over elements [first·per,
/// first·per + per) of its own: every element once, a warp's lanes `per`
/// words apart.
macro_rules! contiguous_run {
    ($body:literal) => {
        concat!(
            "    const size_t per = (n + stride - 1) / stride;\n",
            "    const size_t stop = first * per + per;\n",
            "    const size_t end = stop < n ? stop : n;\n",
            "    for (size_t i = first * per; i < end; ++i) {\n",
            $body,
            "    }\n"
        )
    };
}
const CONTIGUOUS_PRODUCTS: &str = contiguous_run!("        c[i] = a[i] * b[i];\n");
const CONTIGUOUS_SUMS: &str = contiguous_run!("        c[i] = a[i] + b[i];\n");

/// Block b of the grid takes a contiguous chunk of ⌈n / blocks⌉ elements,
/// its threads stepping through it by the block's size.
const BLOCK_CHUNK_PRODUCTS: &str = "    const size_t chunk = (n + gridDim.x - 1) / gridDim.x;\n    const size_t start = (size_t)blockIdx.x * chunk;\n    const size_t stop = start + chunk < n ? start + chunk : n;\n    for (size_t i = start + threadIdx.x; i < stop; i += blockDim.x) {\n        c[i] = a[i] * b[i];\n    }\n";

/// dot-sm's and dot-atomic's tree, after the first barrier.
const TREE: &str = "    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {\n        if (threadIdx.x < half) {\n            cache[threadIdx.x] += cache[threadIdx.x + half];\n        }\n        // Outside the if: every thread of the block must reach the barrier.\n        __syncthreads();\n    }\n";

/// The tree with block barriers while more than 32 slots are live, then
/// the first warp alone, with `__syncwarp` between its steps.
const SYNCWARP_TAIL: &str = "    for (unsigned int half = blockDim.x / 2; half > 16; half /= 2) {\n        if (threadIdx.x < half) {\n            cache[threadIdx.x] += cache[threadIdx.x + half];\n        }\n        __syncthreads();\n    }\n    if (threadIdx.x < 32) {\n        volatile float* v = cache;\n        for (unsigned int half = min(16u, blockDim.x / 2); half > 0; half /= 2) {\n            if (threadIdx.x < half) {\n                v[threadIdx.x] += v[threadIdx.x + half];\n            }\n            __syncwarp();\n        }\n    }\n";

/// The tree with block barriers down to 64 live slots, then the first warp
/// adds the upper 32, 16, ... by hand with `__syncwarp` between steps: right
/// for blocks of 64 threads or more, and reading past the block's shared
/// memory below that.
const TAIL_FROM_64: &str = "    for (unsigned int half = blockDim.x / 2; half > 32; half /= 2) {\n        if (threadIdx.x < half) {\n            cache[threadIdx.x] += cache[threadIdx.x + half];\n        }\n        __syncthreads();\n    }\n    if (threadIdx.x < 32) {\n        volatile float* v = cache;\n        for (unsigned int half = 32; half > 0; half /= 2) {\n            v[threadIdx.x] += v[threadIdx.x + half];\n            __syncwarp();\n        }\n    }\n";

/// [`SYNCWARP_TAIL`] without its `__syncwarp`: a race inside the warp.
const WARP_TAIL_UNSYNCED: &str =
    "    for (unsigned int half = blockDim.x / 2; half > 16; half /= 2) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        volatile float* v = cache;
        for (unsigned int half = min(16u, blockDim.x / 2); half > 0; half /= 2) {
            if (threadIdx.x < half) {
                v[threadIdx.x] += v[threadIdx.x + half];
            }
        }
    }
";

/// Each warp sums its lanes' floats with shuffles (lanes past the block's
/// end add nothing), lane 0 keeps the warp's sum in cache[warp], and the
/// first warp sums those the same way into cache[0].
const WARP_SUM_FLOAT: &str = "    const unsigned int lane = threadIdx.x % 32;\n    const unsigned int warp = threadIdx.x / 32;\n    const unsigned int lanes = min(32u, blockDim.x - warp * 32);\n    for (unsigned int offset = 16; offset > 0; offset /= 2) {\n        const float other = __shfl_down_sync(__activemask(), sum, offset);\n        if (lane + offset < lanes) {\n            sum += other;\n        }\n    }\n    if (lane == 0) {\n        cache[warp] = sum;\n    }\n    __syncthreads();\n    if (warp == 0) {\n        const unsigned int warps = (blockDim.x + 31) / 32;\n        float total = lane < warps ? cache[lane] : 0.0f;\n        for (unsigned int offset = 16; offset > 0; offset /= 2) {\n            const float other = __shfl_down_sync(__activemask(), total, offset);\n            if (lane + offset < lanes) {\n                total += other;\n            }\n        }\n        if (lane == 0) {\n            cache[0] = total;\n        }\n    }\n    __syncthreads();\n";

/// Each warp sums its lanes' products in double with double shuffles.
const WARP_SUM_DOUBLE: &str = "    const unsigned int lane = threadIdx.x % 32;\n    const unsigned int lanes = min(32u, blockDim.x - threadIdx.x / 32 * 32);\n    double total = sum;\n    for (unsigned int offset = 16; offset > 0; offset /= 2) {\n        const double other = __shfl_down_sync(__activemask(), total, offset);\n        if (lane + offset < lanes) {\n            total += other;\n        }\n    }\n";

const CG_INCLUDE: &str =
    "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n\n// extern \"C\" keeps";

const CG_REDUCE_INCLUDE: &str = "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\n\n// extern \"C\" keeps";

const CG_INCLUDE_BEFORE_TEMPLATE: &str = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n\n// The kernel for one tile size;";

/// The mutants and the correct variants.
pub const MUTANTS: &[Mutant] = &[
    Mutant {
        exercise: VecaddAnyN,
        name: "no-grid-stride",
        bug: "each thread takes its first elements only: no grid-stride loop",
        edits: &[
            edit("kernel.cu", "i < n / 4; i += stride", "i < n / 4; i += n"),
            edit("kernel.cu", "i < n; i += stride", "i < n; i += n"),
        ],
        expect: Expect::LosesRun(Some(Tag::GridSmallerThanN)),
        on_emulator: None,
    },
    Mutant {
        exercise: VecaddAnyN,
        name: "host-computes",
        bug: "the host computes c; the kernel does nothing",
        edits: &[
            edit("kernel.cu", "    // Step 1:", "    return;\n    // Step 1:"),
            HOST_ADDS,
        ],
        expect: Expect::LosesPtx,
        on_emulator: None,
    },
    Mutant {
        exercise: VecaddAnyN,
        name: "comment-fakes-the-ptx",
        bug: "the host computes c; the empty kernel's asm comment names %nctaid.x",
        edits: &[
            edit(
                "kernel.cu",
                "    // Step 1:",
                "    asm volatile(\"// %nctaid.x\");\n    return;\n    // Step 1:",
            ),
            HOST_ADDS,
        ],
        expect: Expect::LosesPtx,
        on_emulator: None,
    },
    Mutant {
        exercise: VecaddAnyN,
        name: "prints-the-default",

        bug: "main prints a report for the default n, whatever it is asked",
        edits: &[edit(
            "main.rs",
            "fn main() -> ExitCode {\n    run_exercise(add_on_gpu)\n}",
            "fn main() -> ExitCode {\n    let _ = run_exercise;\n    println!(r#\"{{\"schema_version\":1,\"exercise\":\"vecadd-anyN\",\"device\":{{\"name\":\"GPU\",\"compute_capability\":\"9.0\",\"multiprocessors\":132,\"memory_bytes\":1,\"driver_cuda_version\":\"13.0\"}},\"parameters\":{{\"n\":33554435,\"threads\":256,\"blocks\":16896,\"runs\":10}},\"results\":{{\"checksum\":206158540800.0,\"expected_checksum\":206158540800}},\"check\":{{\"passed\":true,\"criterion\":\"c\",\"compared\":33554435,\"wrong\":0,\"failures\":[]}},\"timings\":[]}}\"#);\n    ExitCode::SUCCESS\n}",
        )],
        expect: Expect::LosesHostRuns,
        on_emulator: None,
    },
    Mutant {
        exercise: DotGm,
        name: "cpu-answer",
        bug: "never launches the kernel; the host computes the products after the copy back",
        edits: &[
            edit(
                "main.rs",
                "    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_a, &d_b], &d_c, || {\n",
                "    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_a, &d_b], &d_c, || {\n        if task.runs > 0 {\n            return Ok(());\n        }\n",
            ),
            edit(
                "main.rs",
                "    d_c.copy_to(&mut c)?;\n",
                "    d_c.copy_to(&mut c)?;\n    for (i, x) in c.iter_mut().enumerate() {\n        *x = task.a[i] * task.b[i];\n    }\n",
            ),
        ],
        // The kernel is the solution's: it keeps its points in the
        // course's host code; the trace shows no launch.
        expect: Expect::LosesHostRuns,
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "b-never-copied",
        bug: "allocates b on the GPU without a value and never copies b into it",
        edits: &[
            edit(
                "main.rs",
                "    let mut d_b = DeviceBuffer::<f32>::zeroed(n)?;\n",
                "    // SAFETY: none; b is read before anything writes it.\n    let d_b = unsafe { DeviceBuffer::<f32>::uninitialized(n)? };\n",
            ),
            edit("main.rs", "    d_b.copy_from(&task.b)?;\n", ""),
        ],
        // The class of stale memory: in the student's batch (one process
        // for several runs) an earlier run's b, freed, could sit where this
        // run's d_b is allocated and make it pass. The broker keeps those
        // frees from the driver in a batch (`run::batch`), so every run
        // reads memory no run wrote, as it would alone.
        expect: Expect::LosesHostRuns,
        on_emulator: None,
    },
    Mutant {
        exercise: DotGm,
        name: "drops-the-last-element",
        bug: "the tail loop stops one element early",
        edits: &[edit(
            "kernel.cu",
            "i < n; i += stride",
            "i + 1 < n; i += stride",
        )],
        expect: Expect::LosesRun(Some(Tag::OneElementShows)),
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "no-barrier-in-the-tree",
        bug: "no __syncthreads() between the tree's steps",
        edits: &[edit(
            "kernel.cu",
            "        // Outside the if: every thread of the block must reach the barrier.\n        __syncthreads();\n",
            "",
        )],
        // Its runs pass or fail by luck; racecheck finds the race every time.
        expect: Expect::LosesCheck(CheckName::MemorySafety),
        on_emulator: Some(Emulated::Finds(FindingKind::SharedMemoryRace)),
    },
    Mutant {
        exercise: DotSm,
        name: "barrier-inside-the-if",
        bug: "a second __syncthreads() inside the if: the block's threads wait at two barriers",
        edits: &[edit(
            "kernel.cu",
            "            cache[threadIdx.x] += cache[threadIdx.x + half];\n        }\n",
            "            cache[threadIdx.x] += cache[threadIdx.x + half];\n            __syncthreads();\n        }\n",
        )],
        // Undefined behaviour that an H200 runs to the right sums: the lanes
        // that skip the if wait where their warp reconverges (the emulator
        // lets them, `exec::carry_on`). synccheck, or the emulator, names it.
        expect: Expect::LosesCheck(CheckName::MemorySafety),
        on_emulator: Some(Emulated::Finds(FindingKind::Barrier)),
    },
    Mutant {
        exercise: DotAtomic,
        name: "plain-add-race",
        bug: "*result += total instead of atomicAdd: blocks race",
        edits: &[edit(
            "kernel.cu",
            "atomicAdd(result, cache[0]);",
            "*result += cache[0];",
        )],
        expect: Expect::LosesPtx,
        on_emulator: Some(Emulated::Finds(FindingKind::GlobalMemoryConflict)),
    },
    Mutant {
        exercise: DotAtomic,
        name: "accumulator-not-zeroed",
        bug: "the result is not zeroed before each launch",
        edits: &[edit(
            "main.rs",
            "        unsafe { d_result.set_zero_async(stream)? };\n",
            "",
        )],
        expect: Expect::LosesHostRuns,
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulNaive,
        name: "transposed-n",
        bug: "N read transposed",
        edits: &[edit(
            "kernel.cu",
            "n[k * width + col]",
            "n[col * width + k]",
        )],
        expect: Expect::LosesEveryKernelRun,
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulNaive,
        name: "no-bounds-check",
        bug: "threads past the matrix's edge read and write",
        edits: &[edit("kernel.cu", "if (row < width && col < width) {", "{")],
        expect: Expect::LosesRun(Some(Tag::SmallerThanABlock)),
        on_emulator: Some(Emulated::Finds(FindingKind::OutOfBounds)),
    },
    Mutant {
        exercise: MatmulTiled,
        name: "no-partial-tile",
        bug: "the last, partial tile along k is skipped",
        edits: &[edit(
            "kernel.cu",
            "phase < (width + TILE - 1) / TILE",
            "phase < width / TILE",
        )],
        expect: Expect::LosesRun(Some(Tag::PartialTiles)),
        on_emulator: None,
    },
    // Which tile meets a partial width is a class the plan covers at every
    // seed (issue 51): the 16 tile right below one tile and wrong on the
    // last, partial tile of a wider matrix passed where the plan drew 32.
    Mutant {
        exercise: MatmulTiled,
        name: "tile-16-skips-a-partial-last-tile",
        bug: "the 16 tile skips the last, partial tile along k once the width passes one tile",
        edits: &[edit(
            "kernel.cu",
            "phase < (width + TILE - 1) / TILE",
            "phase < (TILE == 16 && width > TILE ? width / TILE : (width + TILE - 1) / TILE)",
        )],
        expect: Expect::LosesRun(Some(Tag::PartialTiles)),
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulTiled,
        name: "no-zero-padding",
        bug: "tile loads past the matrix's edge are not replaced by zeros",
        edits: &[
            edit(
                "kernel.cu",
                "(row < width && m_col < width) ? m[row * width + m_col] : 0.0f",
                "m[row * width + m_col]",
            ),
            edit(
                "kernel.cu",
                "(n_row < width && col < width) ? n[n_row * width + col] : 0.0f",
                "n[n_row * width + col]",
            ),
        ],
        expect: Expect::LosesRun(Some(Tag::PartialTiles)),
        on_emulator: Some(Emulated::Finds(FindingKind::OutOfBounds)),
    },
    // Correct, but half the lesson (issue 23): one matrix staged in shared
    // memory, the other read from global memory W times over, as in
    // matmul-naive. The speed point's bar for matmul-tiled is set so that
    // neither keeps it.
    Mutant {
        exercise: MatmulTiled,
        name: "tiles-only-m",
        bug: "stages M's tiles in shared memory and reads N from global memory in the inner loop",
        edits: &[
            edit(
                "kernel.cu",
                "    __shared__ float n_tile[TILE][TILE];\n",
                "",
            ),
            edit(
                "kernel.cu",
                "        const int n_row = phase * TILE + ty;\n",
                "",
            ),
            edit(
                "kernel.cu",
                "        n_tile[ty][tx] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;\n",
                "",
            ),
            edit(
                "kernel.cu",
                "            sum += m_tile[ty][k] * n_tile[k][tx];\n",
                "            const int n_row = phase * TILE + k;\n            sum += m_tile[ty][k] * ((n_row < width && col < width) ? n[n_row * width + col] : 0.0f);\n",
            ),
        ],
        // Correct, and slow on a GPU: its warps load one operand from global
        // memory every step, which the lesson's count sees on the emulator
        // and on a GPU node alike.
        expect: Expect::LosesCheck(CheckName::Lesson),
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulTiled,
        name: "tiles-only-n",
        bug: "stages N's tiles in shared memory and reads M from global memory in the inner loop",
        edits: &[
            edit(
                "kernel.cu",
                "    __shared__ float m_tile[TILE][TILE];\n",
                "",
            ),
            edit(
                "kernel.cu",
                "        const int m_col = phase * TILE + tx;\n",
                "",
            ),
            edit(
                "kernel.cu",
                "        m_tile[ty][tx] = (row < width && m_col < width) ? m[row * width + m_col] : 0.0f;\n",
                "",
            ),
            edit(
                "kernel.cu",
                "            sum += m_tile[ty][k] * n_tile[k][tx];\n",
                "            const int m_col = phase * TILE + k;\n            sum += ((row < width && m_col < width) ? m[row * width + m_col] : 0.0f) * n_tile[k][tx];\n",
            ),
        ],
        // Correct, and slow on a GPU: its warps load one operand from global
        // memory every step, which the lesson's count sees on the emulator
        // and on a GPU node alike.
        expect: Expect::LosesCheck(CheckName::Lesson),
        on_emulator: None,
    },
    Mutant {
        exercise: MemspaceTiming,
        name: "constant-never-filled",
        bug: "const_data is never copied to the GPU",
        edits: &[edit(
            "main.rs",
            "    const_data.copy_from(&task.data)?;\n",
            "",
        )],
        expect: Expect::LosesHostRuns,
        on_emulator: None,
    },
    Mutant {
        exercise: StreamsOverlap,
        name: "pageable-buffers",
        bug: "the host buffers are plain Vecs, not page-locked: the copies cannot overlap",
        edits: &[
            edit(
                "main.rs",
                "use cust::memory::{AsyncCopyDestination, LockedBuffer};",
                "use cust::memory::AsyncCopyDestination;",
            ),
            edit(
                "main.rs",
                "    h_in: LockedBuffer<u32>,\n    h_out: LockedBuffer<u32>,\n",
                "    h_in: Vec<u32>,\n    h_out: Vec<u32>,\n",
            ),
            edit(
                "main.rs",
                "    let h_in = LockedBuffer::from_slice(&task.input)?;\n    let h_out = LockedBuffer::new(&0u32, n)?;\n",
                "    let h_in = task.input.to_vec();\n    let h_out = vec![0u32; n];\n",
            ),
            edit(
                "main.rs",
                "    LockedBuffer::drop(h_in)?;\n    LockedBuffer::drop(h_out)?;\n",
                "    drop((h_in, h_out));\n",
            ),
        ],
        // The values are right; the trace shows pageable copies.
        expect: Expect::LosesHostRuns,
        on_emulator: None,
    },
    Mutant {
        exercise: StreamsOverlap,
        name: "waits-after-each-chunk",
        bug: "waits for each chunk's stream once its copy out is queued: no chunk overlaps another",
        edits: &[edit(
            "main.rs",
            "                .async_copy_to(&mut self.h_out[range], chunk.stream)?\n        };\n",
            "                .async_copy_to(&mut self.h_out[range], chunk.stream)?\n        };\n        chunk.stream.synchronize()?;\n",
        )],
        // Right values, page-locked asynchronous copies on every stream:
        // only the time of the run the overlap is judged at shows it.
        expect: Expect::LosesHostRun(crate::plan::streams::OVERLAP_TIMED),
        on_emulator: Some(Emulated::Full),
    },
    // The overlap was read from the report's times until the broker's
    // timeline took its place: host code that waits after each chunk and
    // reports half the serial time as its overlapped time claimed it.
    Mutant {
        exercise: StreamsOverlap,
        name: "reports-an-overlap",
        bug: "waits after each chunk, then reports the overlapped run as twice as fast as the serial one",
        edits: &[
            edit(
                "main.rs",
                "                .async_copy_to(&mut self.h_out[range], chunk.stream)?\n        };\n",
                "                .async_copy_to(&mut self.h_out[range], chunk.stream)?\n        };\n        chunk.stream.synchronize()?;\n",
            ),
            edit(
                "main.rs",
                "    let measured = measure_pipelines(gpu, task, &mut stages)?;\n",
                "    let mut measured = measure_pipelines(gpu, task, &mut stages)?;\n    measured.overlapped.ms = measured.serial.ms / 2.0;\n",
            ),
        ],
        // Its report claims what a GPU's timeline does not show; only the
        // run the overlap is judged at can see it, and the emulator skips it.
        expect: Expect::LosesHostRun(crate::plan::streams::OVERLAP_TIMED),
        on_emulator: Some(Emulated::Full),
    },
    Mutant {
        exercise: StreamsOverlap,
        name: "wrong-chunk-offset",
        bug: "the kernel gets the buffers' starts, not the chunk's",
        edits: &[
            edit(
                "main.rs",
                "self.d_in.index(range.clone()).as_device_ptr()",
                "self.d_in.as_device_ptr()",
            ),
            edit(
                "main.rs",
                "self.d_out.index(range.clone()).as_device_ptr()",
                "self.d_out.as_device_ptr()",
            ),
        ],
        expect: Expect::LosesHostRuns,
        on_emulator: None,
    },
    // Shortcuts that fixed public inputs let through (issue 17).
    Mutant {
        exercise: VecaddAnyN,
        name: "closed-form-writer",
        bug: "writes the default inputs' c[i] = 3·(i mod 4096) without reading a or b",
        edits: &[
            edit(
                "kernel.cu",
                "c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);",
                "c4[i] = make_float4(3.0f * ((4 * i) % 4096), 3.0f * ((4 * i + 1) % 4096), \
                 3.0f * ((4 * i + 2) % 4096), 3.0f * ((4 * i + 3) % 4096));",
            ),
            edit(
                "kernel.cu",
                "c[i] = a[i] + b[i];",
                "c[i] = 3.0f * (i % 4096);",
            ),
        ],
        // Every seeded run, the one above 2^31 included; the one-element
        // run only when a[0] + b[0] ≠ 0 (127 seeds in 128), so the
        // expectation names a run of millions. A kernel that loses a run
        // keeps no PTX, memory-safety or speed point either.
        expect: Expect::LosesRun(Some(Tag::EveryThreadLoops)),
        on_emulator: None,
    },
    // A kernel that shows the right instructions but never reads its
    // inputs: every run draws its own, and the PTX, memory-safety and
    // speed points need a kernel that passes its runs (issue 23).
    Mutant {
        exercise: DotGm,
        name: "formula-writer",
        bug: "stores the default inputs' products, c[i] = i · 2i, without reading a or b",
        edits: &[
            edit(
                "kernel.cu",
                "c4[i] = make_float4(x.x * y.x, x.y * y.y, x.z * y.z, x.w * y.w);",
                "const float j = 4.0f * i;\n        c4[i] = make_float4(2.0f * j * j, 2.0f * (j + 1) * (j + 1), \
                 2.0f * (j + 2) * (j + 2), 2.0f * (j + 3) * (j + 3));",
            ),
            edit("kernel.cu", "c[i] = a[i] * b[i];", "c[i] = 2.0f * i * i;"),
        ],
        // Its host code is the solution's, so the canary earns the host
        // points; everything its kernel could earn goes.
        expect: Expect::LosesEveryKernelRun,
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulNaive,
        name: "int-accumulator",
        bug: "sums the products in an int, truncating each partial sum",
        edits: &[edit("kernel.cu", "float sum = 0.0f;", "int sum = 0;")],
        expect: Expect::LosesEveryKernelRun,
        on_emulator: None,
    },
    // Shortcuts that closed-form or exactly representable inputs let
    // through, which drawn inputs catch (issue 51): every graded run of
    // these exercises draws values of both signs and magnitudes that need
    // all 24 bits of a float32.
    Mutant {
        exercise: VecaddAnyN,
        name: "half-precision-inputs",
        bug: "rounds a[i] and b[i] to half precision before adding them",
        edits: &[
            edit(
                "kernel.cu",
                "extern \"C\" __global__ void vecadd(",
                "#include <cuda_fp16.h>\n\n__device__ float half_of(float x) { return __half2float(__float2half(x)); }\n\nextern \"C\" __global__ void vecadd(",
            ),
            edit(
                "kernel.cu",
                "c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);",
                "c4[i] = make_float4(half_of(x.x) + half_of(y.x), half_of(x.y) + half_of(y.y), \
                 half_of(x.z) + half_of(y.z), half_of(x.w) + half_of(y.w));",
            ),
            edit(
                "kernel.cu",
                "c[i] = a[i] + b[i];",
                "c[i] = half_of(a[i]) + half_of(b[i]);",
            ),
        ],
        // No drawn value is exact in half precision: every element of
        // every run is wrong. Its host code is the solution's.
        expect: Expect::LosesEveryKernelRun,
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "extrapolates-two-elements",
        bug: "reads a[0], a[1], b[0] and b[1] and extrapolates the rest along a line",
        edits: &[edit(
            "kernel.cu",
            "    for (size_t i = first; i < n / 4; i += stride) {\n        const float4 x = a4[i];\n        const float4 y = b4[i];\n        sum += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;\n    }\n    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {\n        sum += a[i] * b[i];\n    }\n",
            "    (void)a4;\n    (void)b4;\n    const float a0 = a[0], b0 = b[0];\n    const float da = n > 1 ? a[1] - a0 : 0.0f, db = n > 1 ? b[1] - b0 : 0.0f;\n    for (size_t i = first; i < n; i += stride) {\n        sum += (a0 + i * da) * (b0 + i * db);\n    }\n",
        )],
        // Right at one element, where nothing is extrapolated; wrong at
        // every drawn run past two (affine inputs it would match exactly).
        expect: Expect::LosesRun(Some(Tag::OneElementShows)),
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulNaive,
        name: "half-precision-inputs",
        bug: "rounds M and N to half precision before multiplying",
        edits: &[
            edit(
                "kernel.cu",
                "extern \"C\" __global__ void matmul(",
                "#include <cuda_fp16.h>\n\n__device__ float half_of(float x) { return __half2float(__float2half(x)); }\n\nextern \"C\" __global__ void matmul(",
            ),
            edit(
                "kernel.cu",
                "sum += m[row * width + k] * n[k * width + col];",
                "sum += half_of(m[row * width + k]) * half_of(n[k * width + col]);",
            ),
        ],
        // Its error, about 2^-11 of each product, passes the bound of W
        // float32 roundings only at large widths (2^12 / W^1.5 < 1): the
        // widths below a block fail at every seed.
        expect: Expect::LosesRun(Some(Tag::SmallerThanABlock)),
        on_emulator: None,
    },
    Mutant {
        exercise: StreamsOverlap,
        name: "no-grid-stride",
        bug: "each thread takes one element: chunks past 65535 blocks are left unwritten",
        edits: &[edit("kernel.cu", "i < n; i += stride", "i < n; i += n")],
        expect: Expect::LosesRun(Some(Tag::ChunksPastTheGrid)),
        on_emulator: Some(Emulated::Full),
    },
    // Correct but wasteful: the answers are right, every run passes; the
    // speed point is what it loses.
    Mutant {
        exercise: VecaddAnyN,
        name: "redundant-stride",
        bug: "strides by gridDim.x, not the whole grid: every element done blockDim.x times",
        edits: &[edit(
            "kernel.cu",
            "const size_t stride = (size_t)blockDim.x * gridDim.x;",
            "const size_t stride = gridDim.x;",
        )],
        expect: Expect::LosesCheck(CheckName::Speed),
        on_emulator: Some(Emulated::Stricter(FindingKind::GlobalMemoryConflict)),
    },
    // What only the run above 2^31 elements, and memcheck, see (issue 11).
    Mutant {
        exercise: VecaddAnyN,
        name: "int-index",
        bug: "an int loop index: past 2^31 it overflows, and the elements beyond are never written",
        edits: &[
            edit("kernel.cu", "i = first; i < n / 4;", "i = first; i < 0;"),
            edit(
                "kernel.cu",
                "for (size_t i = n / 4 * 4 + first; i < n;",
                "for (int i = first; i < n;",
            ),
        ],
        expect: Expect::LosesRun(Some(Tag::PastInt)),
        on_emulator: Some(Emulated::Full),
    },
    Mutant {
        exercise: DotGm,
        name: "one-past-the-end",
        bug: "the tail loop runs to i <= n: one element past the end of a, b and c, in allocation padding",
        edits: &[edit(
            "kernel.cu",
            "i < n; i += stride",
            "i <= n; i += stride",
        )],
        expect: Expect::LosesCheck(CheckName::MemorySafety),
        on_emulator: Some(Emulated::Finds(FindingKind::OutOfBounds)),
    },
    Mutant {
        exercise: DotGm,
        name: "contiguous-runs",
        bug: "each thread multiplies a contiguous run of n / threads elements of its own, not \
              every stride-th: right, and a warp's 32 lanes read 32 words far apart",
        edits: &[edit("kernel.cu", GM_LOOPS, CONTIGUOUS_PRODUCTS)],
        expect: Expect::LosesCheck(CheckName::Lesson),
        on_emulator: None,
    },
    Mutant {
        exercise: VecaddAnyN,
        name: "contiguous-runs",
        bug: "each thread adds a contiguous run of n / threads elements of its own, not every \
              stride-th: right, and a warp's 32 lanes read 32 words far apart",
        edits: &[edit("kernel.cu", VECADD_LOOPS, CONTIGUOUS_SUMS)],
        expect: Expect::LosesCheck(CheckName::Lesson),
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulTiled,
        name: "naive-at-partial-widths",
        bug: "tiles only where the width is a multiple of the tile; at any other width each \
              thread reads its row and column from global memory",
        edits: &[edit(
            "kernel.cu",
            "    float sum = 0.0f;\n\n    for (int phase = 0;",
            "    float sum = 0.0f;\n    if (width % TILE != 0) {\n        if (row < width && col < width) {\n            for (int k = 0; k < width; ++k) {\n                sum += m[row * width + k] * n[k * width + col];\n            }\n            p[row * width + col] = sum;\n        }\n        return;\n    }\n\n    for (int phase = 0;",
        )],
        expect: Expect::LosesCheck(CheckName::Lesson),
        on_emulator: None,
    },
    // Correct, written differently from the solutions: they must pass.
    Mutant {
        exercise: DotGm,
        name: "variant-block-chunks",
        bug: "none: each block takes a contiguous chunk and its threads step through it by the \
              block's size, so a warp still reads 32 neighbouring words",
        edits: &[edit("kernel.cu", GM_LOOPS, BLOCK_CHUNK_PRODUCTS)],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: VecaddAnyN,
        name: "variant-scalar-loop",
        bug: "none: one float per access, the course notes' loop",
        edits: &[
            edit("kernel.cu", "i = first; i < n / 4;", "i = first; i < 0;"),
            edit("kernel.cu", "i = n / 4 * 4 + first;", "i = first;"),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "variant-scalar-loop",
        bug: "none: one float per load",
        edits: &[
            edit("kernel.cu", "i = first; i < n / 4;", "i = first; i < 0;"),
            edit("kernel.cu", "i = n / 4 * 4 + first;", "i = first;"),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotAtomic,
        name: "variant-per-warp-atomics",
        bug: "none: warp shuffles, then one atomicAdd per warp (another summation order)",
        edits: &[
            edit(
                "kernel.cu",
                "    cache[threadIdx.x] = sum;\n    __syncthreads();\n    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {\n        if (threadIdx.x < half) {\n            cache[threadIdx.x] += cache[threadIdx.x + half];\n        }\n        // Outside the if: every thread of the block must reach the barrier.\n        __syncthreads();\n    }\n",
                // Lanes past the block's end add nothing: blocks of 1 to 16
                // threads have a partial warp.
                "    const unsigned int lane = threadIdx.x % 32;\n    const unsigned int lanes = min(32u, blockDim.x - threadIdx.x / 32 * 32);\n    for (unsigned int offset = 16; offset > 0; offset /= 2) {\n        const float other = __shfl_down_sync(__activemask(), sum, offset);\n        if (lane + offset < lanes) {\n            sum += other;\n        }\n    }\n",
            ),
            edit(
                "kernel.cu",
                "    if (threadIdx.x == 0) {\n        atomicAdd(result, cache[0]);",
                "    if (threadIdx.x % 32 == 0) {\n        atomicAdd(result, sum);",
            ),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "variant-interleaved-tree",
        bug: "none: the tree adds neighbours at doubling distances (another summation order)",
        edits: &[edit(
            "kernel.cu",
            "    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {\n        if (threadIdx.x < half) {\n            cache[threadIdx.x] += cache[threadIdx.x + half];",
            "    for (unsigned int s = 1; s < blockDim.x; s *= 2) {\n        if (threadIdx.x % (2 * s) == 0) {\n            cache[threadIdx.x] += cache[threadIdx.x + s];",
        )],
        expect: Expect::Full,
        on_emulator: None,
    },
    // What only the sanitizers see, and only where they now look (issue
    // 23): an edge-shape run of moderate size besides the smallest, any
    // racecheck hazard, initcheck and synccheck.
    Mutant {
        exercise: VecaddAnyN,
        name: "prefetch-past-the-end",
        bug: "prefetches the next float4 of a while i + stride <= n / 4: one float4 past the end, only once the grid does not cover n / 4",
        edits: &[edit(
            "kernel.cu",
            "    for (size_t i = first; i < n / 4; i += stride) {\n        const float4 x = a4[i];\n",
            "    float4 x_next = first < n / 4 ? a4[first] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n    for (size_t i = first; i < n / 4; i += stride) {\n        const float4 x = x_next;\n        if (i + stride <= n / 4) {\n            x_next = a4[i + stride];\n        }\n",
        )],
        // Every answer right, the read lands in allocation padding; the
        // smallest run (n = 1) never reads past the end.
        expect: Expect::LosesCheck(CheckName::MemorySafety),
        on_emulator: Some(Emulated::Finds(FindingKind::OutOfBounds)),
    },
    // Issue 27: a vector access over an array's end, which a GPU runs
    // through (the bytes past n are the allocation's padding) and the
    // emulator must too, its bytes inside the array read and written for
    // real; memcheck, or the emulator, names it.
    Mutant {
        exercise: VecaddAnyN,
        name: "float4-over-the-end",
        bug: "rounds the float4 loop up to cover n and drops the scalar tail: the last float4 reads and writes past the end whenever n is no multiple of 4",
        edits: &[
            edit(
                "kernel.cu",
                "i = first; i < n / 4;",
                "i = first; i < (n + 3) / 4;",
            ),
            edit(
                "kernel.cu",
                "    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {\n        c[i] = a[i] + b[i];\n    }\n",
                "",
            ),
        ],
        // Every answer right; the smallest run (n = 1) reads and writes 12
        // bytes past each array.
        expect: Expect::LosesCheck(CheckName::MemorySafety),
        on_emulator: Some(Emulated::Finds(FindingKind::OutOfBounds)),
    },
    // Issue 23: an answer that comes from an earlier launch, and shared
    // memory a block never wrote (a fresh process's starts zeroed).
    Mutant {
        exercise: VecaddAnyN,
        name: "works-once",
        bug: "counts its launches in device memory and does the work in the first only: the timed launches return at once, the output left from the first",
        edits: &[
            edit(
                "kernel.cu",
                "extern \"C\" __global__ void vecadd(",
                "__device__ unsigned int blocks_seen;\n\nextern \"C\" __global__ void vecadd(",
            ),
            edit(
                "kernel.cu",
                "    const size_t stride = (size_t)blockDim.x * gridDim.x;\n",
                "    __shared__ unsigned int launch;\n    if (threadIdx.x == 0) {\n        launch = atomicAdd(&blocks_seen, 1u) / gridDim.x;\n    }\n    __syncthreads();\n    if (launch > 0) {\n        return;\n    }\n    const size_t stride = (size_t)blockDim.x * gridDim.x;\n",
            ),
        ],
        // The course fills c with NaN before every launch and reads parts
        // of it back after each: the second launch leaves NaN.
        expect: Expect::LosesEveryKernelRun,
        on_emulator: None,
    },
    // Issue 52: a kernel that keeps its whole answer in device memory and
    // copies it out in later launches, which agreed with every launch's
    // output until each launch got inputs of its own.
    Mutant {
        exercise: MatmulTiled,
        name: "keeps-its-answer",
        bug: "computes P in its first launch, keeps it in a __device__ array and writes it in every later launch: the timed launches are a copy",
        edits: &[
            edit(
                "kernel.cu",
                "template <int TILE>\n__device__ void matmul_tiled(",
                "__device__ float kept[1 << 22];\n__device__ unsigned int blocks_seen;\n\ntemplate <int TILE>\n__device__ void matmul_tiled(",
            ),
            edit(
                "kernel.cu",
                "    float sum = 0.0f;\n\n    for (int phase",
                "    __shared__ unsigned int launch;\n    if (tx == 0 && ty == 0) {\n        launch = atomicAdd(&blocks_seen, 1u) / (gridDim.x * gridDim.y);\n    }\n    __syncthreads();\n    if (launch > 0) {\n        if (row < width && col < width) {\n            p[row * width + col] = kept[row * width + col];\n        }\n        return;\n    }\n    float sum = 0.0f;\n\n    for (int phase",
            ),
            edit(
                "kernel.cu",
                "        p[row * width + col] = sum;\n",
                "        p[row * width + col] = sum;\n        kept[row * width + col] = sum;\n",
            ),
        ],
        // Every timed launch gets M and N of its own: the second launch's
        // P answers the first's, a stale launch.
        expect: Expect::LosesEveryKernelRun,
        on_emulator: None,
    },
    Mutant {
        exercise: DotAtomic,
        name: "keeps-its-sum",
        bug: "sums in its first launch, keeps the sum in a __device__ float and writes it in every later launch",
        edits: &[
            edit(
                "kernel.cu",
                "extern \"C\" __global__ void dot(",
                "__device__ float kept;\n__device__ unsigned int blocks_seen;\n\nextern \"C\" __global__ void dot(",
            ),
            edit(
                "kernel.cu",
                "    extern __shared__ float cache[];\n",
                "    extern __shared__ float cache[];\n    __shared__ unsigned int launch;\n    if (threadIdx.x == 0) {\n        launch = atomicAdd(&blocks_seen, 1u) / gridDim.x;\n    }\n    __syncthreads();\n    if (launch > 0) {\n        if (blockIdx.x == 0 && threadIdx.x == 0) {\n            *result = kept;\n        }\n        return;\n    }\n",
            ),
            edit(
                "kernel.cu",
                "        atomicAdd(result, cache[0]);\n",
                "        atomicAdd(result, cache[0]);\n        atomicAdd(&kept, cache[0]);\n",
            ),
        ],
        // Every timed launch gets a and b of its own: the second launch's
        // sum answers the first's, a stale launch.
        expect: Expect::LosesEveryKernelRun,
        on_emulator: None,
    },
    // Issue 23's shape classes: bugs that show only at some launch shapes,
    // which every grading now covers whatever its seed.
    Mutant {
        exercise: VecaddAnyN,
        name: "no-scalar-tail",
        bug: "adds the float4s and forgets the last n % 4 elements, which only an n that is no multiple of 4 has",
        edits: &[edit(
            "kernel.cu",
            "    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {\n        c[i] = a[i] + b[i];\n    }\n",
            "",
        )],
        // n = 1, and every n one off a multiple of the block.
        expect: Expect::LosesRun(Some(Tag::OneElement)),
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "tail-assumes-two-warps",
        bug: "the tree stops at 64 slots and the first warp adds cache[t + 32] and on by hand: past the block's shared memory in blocks under 64 threads",
        edits: &[edit("kernel.cu", TREE, TAIL_FROM_64)],
        expect: Expect::LosesRun(Some(Tag::BlockOfOne)),
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "idle-threads-skip-their-slot",
        bug: "a thread whose first element is past n never stores its sum in cache, and the tree adds its slot anyway",
        edits: &[edit(
            "kernel.cu",
            "    cache[threadIdx.x] = sum;\n    __syncthreads();\n",
            "    if (first < n) {\n        cache[threadIdx.x] = sum;\n    }\n    __syncthreads();\n",
        )],
        // The course fills shared memory with NaN bits before each launch:
        // any run whose grid has threads past n reads them.
        expect: Expect::LosesRun(None),
        on_emulator: Some(Emulated::Finds(FindingKind::Uninitialised)),
    },
    Mutant {
        exercise: DotSm,
        name: "warp-tail-without-syncwarp",
        bug: "the first warp finishes the tree on a volatile view with no __syncwarp between steps: lanes race inside the warp",
        edits: &[edit("kernel.cu", TREE, WARP_TAIL_UNSYNCED)],
        // Lanes mostly move together, so the sums come out right; racecheck
        // reports the hazards (as warnings on some GPUs: they count).
        expect: Expect::LosesCheck(CheckName::MemorySafety),
        on_emulator: Some(Emulated::Finds(FindingKind::SharedMemoryRace)),
    },
    Mutant {
        exercise: MatmulTiled,
        name: "n-tile-unpadded",
        bug: "n_tile is loaded only inside the matrix, never zeroed past its edge: the first partial tile multiplies 0 by whatever shared memory held",
        edits: &[edit(
            "kernel.cu",
            "        n_tile[ty][tx] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;\n",
            "        if (n_row < width && col < width) {\n            n_tile[ty][tx] = n[n_row * width + col];\n        }\n",
        )],
        // 0 × garbage is 0 unless the garbage is NaN or infinite: a GPU
        // shows it only where shared memory is poisoned before the kernel
        // (issue 23's other half); the emulator poisons and traces it.
        expect: Expect::OnlyOnTheEmulator,
        on_emulator: Some(Emulated::Finds(FindingKind::Uninitialised)),
    },
    Mutant {
        exercise: DotSm,
        name: "split-barrier",
        bug: "the tree's threads wait at two different __syncthreads(), one in each branch of the if",
        edits: &[edit(
            "kernel.cu",
            "            cache[threadIdx.x] += cache[threadIdx.x + half];\n        }\n        // Outside the if: every thread of the block must reach the barrier.\n        __syncthreads();\n",
            "            cache[threadIdx.x] += cache[threadIdx.x + half];\n            __syncthreads();\n        } else {\n            __syncthreads();\n        }\n",
        )],
        // Undefined behaviour, and on an H100 (threads of a warp scheduled
        // apart since Volta) the two barriers deadlock: every kernel run
        // timed out there (2026-11-25), where synccheck would have had the
        // last word on a GPU that sums right. The emulator names the
        // divergent barrier. Blocks of one thread have no other thread to
        // wait for: that run passes.
        expect: Expect::LosesRun(None),
        on_emulator: Some(Emulated::Finds(FindingKind::Barrier)),
    },
    // Correct in the styles issue 23 names; the PTX is read by meaning, so
    // each keeps every point (kernels/tests/ptx_styles/ has more).
    Mutant {
        exercise: DotSm,
        name: "variant-cg-block-sync",
        bug: "none: cooperative groups' block.sync() and cg::sync (barrier.sync in the PTX)",
        edits: &[
            edit("kernel.cu", "// extern \"C\" keeps", CG_INCLUDE),
            edit(
                "kernel.cu",
                "    cache[threadIdx.x] = sum;\n    __syncthreads();\n",
                "    cache[threadIdx.x] = sum;\n    cg::this_thread_block().sync();\n",
            ),
            edit(
                "kernel.cu",
                "        // Outside the if: every thread of the block must reach the barrier.\n        __syncthreads();\n",
                "        cg::sync(cg::this_thread_block());\n",
            ),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "variant-syncwarp-tail",
        bug: "none: block barriers down to 32 slots, then the first warp finishes with __syncwarp on a volatile view",
        edits: &[edit("kernel.cu", TREE, SYNCWARP_TAIL)],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotSm,
        name: "variant-float-shuffles",
        bug: "none: each warp sums with float shuffles, one shared slot per warp, the first warp sums those",
        edits: &[
            edit(
                "kernel.cu",
                "    cache[threadIdx.x] = sum;\n    __syncthreads();\n",
                WARP_SUM_FLOAT,
            ),
            edit("kernel.cu", TREE, ""),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotAtomic,
        name: "variant-cg-reduce",
        bug: "none: cg::reduce over each warp's coalesced group, one atomicAdd per warp",
        edits: &[
            edit("kernel.cu", "// extern \"C\" keeps", CG_REDUCE_INCLUDE),
            edit(
                "kernel.cu",
                "    cache[threadIdx.x] = sum;\n    __syncthreads();\n",
                "    cg::coalesced_group active = cg::coalesced_threads();\n    const float warp_total = cg::reduce(active, sum, cg::plus<float>());\n",
            ),
            edit("kernel.cu", TREE, ""),
            edit(
                "kernel.cu",
                "    if (threadIdx.x == 0) {\n        atomicAdd(result, cache[0]);",
                "    if (active.thread_rank() == 0) {\n        atomicAdd(result, warp_total);",
            ),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotAtomic,
        name: "variant-double-shuffles",
        bug: "none: each warp sums in double with double shuffles, one atomicAdd per warp",
        edits: &[
            edit(
                "kernel.cu",
                "    cache[threadIdx.x] = sum;\n    __syncthreads();\n",
                WARP_SUM_DOUBLE,
            ),
            edit("kernel.cu", TREE, ""),
            edit(
                "kernel.cu",
                "    if (threadIdx.x == 0) {\n        atomicAdd(result, cache[0]);",
                "    if (lane == 0) {\n        atomicAdd(result, (float)total);",
            ),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: DotAtomic,
        name: "variant-block-scope-atomics",
        bug: "none: threads add into a shared total with atomicAdd_block, then one atomicAdd per block",
        edits: &[
            edit(
                "kernel.cu",
                "    extern __shared__ float cache[];\n",
                "    extern __shared__ float cache[];\n    if (threadIdx.x == 0) {\n        cache[0] = 0.0f;\n    }\n    __syncthreads();\n",
            ),
            edit(
                "kernel.cu",
                "    cache[threadIdx.x] = sum;\n    __syncthreads();\n",
                "    atomicAdd_block(&cache[0], sum);\n    __syncthreads();\n",
            ),
            edit("kernel.cu", TREE, ""),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: MatmulTiled,
        name: "variant-cg-block-sync",
        bug: "none: cooperative groups' block.sync() between loading and using a tile",
        edits: &[
            edit(
                "kernel.cu",
                "// The kernel for one tile size;",
                CG_INCLUDE_BEFORE_TEMPLATE,
            ),
            edit(
                "kernel.cu",
                "        n_tile[ty][tx] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;\n        __syncthreads();\n",
                "        n_tile[ty][tx] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;\n        cg::this_thread_block().sync();\n",
            ),
            edit(
                "kernel.cu",
                "            sum += m_tile[ty][k] * n_tile[k][tx];\n        }\n        __syncthreads();\n",
                "            sum += m_tile[ty][k] * n_tile[k][tx];\n        }\n        cg::this_thread_block().sync();\n",
            ),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: MemspaceTiming,
        name: "variant-vector-loads",
        bug: "none: the global kernel's uniform loop and the shared kernel's copy move four floats at a time",
        edits: &[
            edit(
                "kernel.cu",
                "        for (int j = 0; j < SIZE; ++j) {\n            sum += data[j];\n        }\n",
                "        const float4* four = reinterpret_cast<const float4*>(data);\n        for (int j = 0; j < SIZE / 4; ++j) {\n            const float4 v = four[j];\n            sum += v.x;\n            sum += v.y;\n            sum += v.z;\n            sum += v.w;\n        }\n",
            ),
            edit(
                "kernel.cu",
                "    __shared__ float tile[SIZE];",
                "    __shared__ __align__(16) float tile[SIZE];",
            ),
            edit(
                "kernel.cu",
                "    for (int j = threadIdx.x; j < SIZE; j += blockDim.x) {\n        tile[j] = data[j];\n    }\n",
                "    for (int j = threadIdx.x; j < SIZE / 4; j += blockDim.x) {\n        reinterpret_cast<float4*>(tile)[j] = reinterpret_cast<const float4*>(data)[j];\n    }\n",
            ),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: MemspaceTiming,
        name: "variant-memcpy-async",
        bug: "none: the shared kernel's block copies its tile with cooperative groups' memcpy_async and waits for it",
        edits: &[
            edit(
                "kernel.cu",
                "#define SIZE 4096\n",
                "#include <cooperative_groups.h>\n#include <cooperative_groups/memcpy_async.h>\n\n#define SIZE 4096\n",
            ),
            edit(
                "kernel.cu",
                "    for (int j = threadIdx.x; j < SIZE; j += blockDim.x) {\n        tile[j] = data[j];\n    }\n    // No thread may read the tile before every thread has written its part.\n    __syncthreads();\n",
                "    cooperative_groups::thread_block block = cooperative_groups::this_thread_block();\n    cooperative_groups::memcpy_async(block, tile, data, sizeof(float) * SIZE);\n    // Waits for the copy and, as a barrier, for every thread of the block.\n    cooperative_groups::wait(block);\n",
            ),
        ],
        expect: Expect::Full,
        on_emulator: None,
    },
    Mutant {
        exercise: MemspaceTiming,
        name: "tile-read-before-filled",
        bug: "no __syncthreads() between filling the tile and summing it: a thread reads parts of the tile other warps have not written yet",
        edits: &[edit(
            "kernel.cu",
            "    // No thread may read the tile before every thread has written its part.\n    __syncthreads();\n",
            "",
        )],
        // The runs pass on a GPU (the tile happens to be filled in time);
        // racecheck, over memspace-timing's cut grid of three blocks, finds
        // the race, kernel.cu's fill against its sum (an H200, 2026-11-29:
        // 5 of 6).
        expect: Expect::LosesCheck(CheckName::MemorySafety),
        on_emulator: Some(Emulated::Finds(FindingKind::SharedMemoryRace)),
    },
    // Each memspace kernel must read its own space and no other (issue 23):
    // these compute the right sums, so only the PTX point says so.
    Mutant {
        exercise: MemspaceTiming,
        name: "shared-sums-global",
        bug: "sum_shared fills its tile, then sums the uniform pattern from global memory",
        edits: &[edit(
            "kernel.cu",
            "            sum += tile[j];",
            "            sum += data[j];",
        )],
        expect: Expect::LosesPtx,
        on_emulator: None,
    },
    Mutant {
        exercise: MemspaceTiming,
        name: "register-reads-memory",
        bug: "sum_register keeps its running sum in out, in global memory, not in a register",
        edits: &[edit(
            "kernel.cu",
            "    float sum = 0.0f;\n    for (int j = 0; j < SIZE; ++j) {\n        sum += value;\n    }\n    out[thread_index()] = sum;\n",
            "    volatile float* sum = &out[thread_index()];\n    *sum = 0.0f;\n    for (int j = 0; j < SIZE; ++j) {\n        *sum += value;\n    }\n",
        )],
        expect: Expect::LosesPtx,
        on_emulator: None,
    },
    Mutant {
        exercise: StreamsOverlap,
        name: "variant-smaller-blocks",
        bug: "none: 128-thread blocks",
        edits: &[edit(
            "main.rs",
            "const THREADS: u32 = 256;",
            "const THREADS: u32 = 128;",
        )],
        expect: Expect::Full,
        on_emulator: None,
    },
];

/// The student id of a mutant.
pub fn student(mutant: &Mutant) -> String {
    format!("{}.{}", mutant.exercise, mutant.name)
}

/// Writes the class into `dir`: students `solutions` and `stubs` with every
/// exercise, and one student per mutant with its one exercise.
pub fn write_class(course: &Path, dir: &Path) -> Result<()> {
    for (student, from) in [("solutions", "solutions"), ("stubs", "exercises")] {
        for exercise in kernels::catalogue::EXERCISES {
            copy_src(
                &course.join(from).join(exercise.name),
                &dir.join(student).join(exercise.name),
            )
            .map_err(Error::io(dir))?;
        }
    }
    for mutant in MUTANTS {
        let target = dir.join(student(mutant)).join(mutant.exercise.name());
        copy_src(
            &course.join("solutions").join(mutant.exercise.name()),
            &target,
        )
        .map_err(Error::io(&target))?;
        for change in mutant.edits {
            let path = target.join("src").join(change.file);
            let text = fs::read_to_string(&path).map_err(Error::io(&path))?;
            if !text.contains(change.from) {
                return Err(Error::Usage(format!(
                    "mutant {}: {:?} is no longer in {}/src/{}; update the edit",
                    student(mutant),
                    change.from,
                    mutant.exercise,
                    change.file
                )));
            }
            fs::write(&path, text.replacen(change.from, change.to, 1)).map_err(Error::io(&path))?;
        }
    }
    Ok(())
}

fn copy_src(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to.join("src"))?;
    for entry in fs::read_dir(from.join("src"))? {
        let entry = entry?;
        fs::copy(entry.path(), to.join("src").join(entry.file_name()))?;
    }
    Ok(())
}

/// How many expectations [`verify`] checks: the solutions', the stubs' and
/// each mutant's.
pub fn expectations() -> usize {
    2 + MUTANTS.len()
}

/// The expectations a graded class broke; empty when every one held.
pub fn verify(results: &Results) -> Vec<String> {
    let mut cases: Vec<(String, Option<ExerciseId>, &Expect, Option<&Emulated>)> = vec![
        ("solutions".into(), None, &Expect::Full, None),
        ("stubs".into(), None, &Expect::Nothing, None),
    ];
    cases.extend(MUTANTS.iter().map(|m| {
        let on_emulator = m.on_emulator.as_ref();
        (student(m), Some(m.exercise), &m.expect, on_emulator)
    }));
    let mut broken = Vec::new();
    for (who, exercise, expect, on_emulator) in cases {
        let held = match (results.emulated, on_emulator) {
            (true, Some(Emulated::Full)) => check(results, &who, exercise, &Expect::Full),
            (true, Some(Emulated::Stricter(_))) => check(
                results,
                &who,
                exercise,
                &Expect::LosesCheck(CheckName::MemorySafety),
            ),
            (_, _) => check(results, &who, exercise, expect),
        };
        broken.extend(held);
        if let (true, Some(Emulated::Finds(kind) | Emulated::Stricter(kind))) =
            (results.emulated, on_emulator)
        {
            broken.extend(found(results, &who, *kind));
        }
    }
    broken
}

/// None when a run of `who` names the emulator's finding of `kind` with
/// its `kernel.cu` line and that exercise's memory-safety point is lost;
/// else what was found instead.
fn found(results: &Results, who: &str, kind: FindingKind) -> Option<String> {
    let exercises = results
        .students
        .get(who)
        .into_iter()
        .flat_map(|s| s.exercises.values());
    let mut said = None;
    for graded in exercises {
        let lost = graded
            .checks
            .iter()
            .any(|c| c.name == CheckName::MemorySafety && c.assessed && !c.passed);
        for run in &graded.runs {
            let named = run
                .findings
                .iter()
                .any(|f| f.kind == kind && f.line.is_some());
            if named && lost {
                return None;
            }
            said.get_or_insert_with(|| format!("{:?}", run.findings.first().map(|f| f.kind)));
        }
    }
    Some(format!(
        "{who}: no run names the emulator's {kind:?} with its kernel.cu line at a memory-safety \
         point lost (first run's: {})",
        said.as_deref().unwrap_or("none")
    ))
}

/// None when `who` was graded as `expect` says (on `exercise`, or on
/// everything when None); else what happened.
fn check(
    results: &Results,
    who: &str,
    exercise: Option<ExerciseId>,
    expect: &Expect,
) -> Option<String> {
    if matches!(expect, Expect::OnlyOnTheEmulator) {
        return None;
    }
    let Some(graded) = results.students.get(who) else {
        return Some(format!("{who}: not graded"));
    };
    let (got, max) = match exercise {
        Some(e) => graded
            .exercises
            .get(e.name())
            .map_or((0, 0), |x| (x.points, x.max_points)),
        None => graded.points(),
    };
    let mutated = exercise.and_then(|e| graded.exercises.get(e.name()));
    let runs = mutated.map(|e| e.runs.as_slice()).unwrap_or_default();
    let kernel = |r: &&results::Run| r.role == Some(Role::KernelInCourseHost);
    let held = match expect {
        Expect::Full => max > 0 && got == max,
        Expect::Nothing => got == 0,
        Expect::LosesEveryKernelRun => {
            runs.iter().filter(kernel).count() > 0
                && runs.iter().filter(kernel).all(|r| r.points == 0)
                && mutated.is_some_and(|e| {
                    e.kernel_lost.is_some() && e.checks.iter().all(|c| c.points == 0)
                })
        }
        Expect::LosesHostRuns => {
            let host: Vec<_> = runs
                .iter()
                .filter(|r| r.role == Some(Role::StudentHost))
                .collect();
            !host.is_empty()
                && host.iter().all(|r| r.points == 0)
                && runs.iter().filter(kernel).all(|r| !r.lost())
        }
        Expect::LosesHostRun(tag) => {
            runs.iter()
                .any(|r| r.role == Some(Role::StudentHost) && r.tag == *tag && r.points == 0)
                && runs.iter().filter(kernel).all(|r| !r.lost())
        }
        Expect::LosesRun(tag) => runs
            .iter()
            .filter(kernel)
            .any(|r| r.lost() && tag.is_none_or(|t| r.tag == t)),
        Expect::LosesCheck(name) => mutated.is_some_and(|e| {
            e.checks
                .iter()
                .any(|c| c.name == *name && c.assessed && !c.passed && c.points == 0)
        }),
        Expect::LosesPtx => mutated.is_some_and(|e| !e.ptx_missing.is_empty() && e.points == 0),
        Expect::OnlyOnTheEmulator => true,
    };
    (!held).then(|| format!("{who}: {got} of {max} points"))
}

/// The golden listing of a graded class (`grader mutants listing`): one line
/// per exercise (points, and how many PTX needs are missing), per run (what
/// it is about, whether it ran the kernel in the course's host code or the
/// student's binary, its verdict kind and points) and per check, tab
/// separated, in student and plan order. Nothing in it depends on the
/// machine (no times, paths or digests), so a class graded again with the
/// same seed on the emulator lists the same lines (scripts/golden-class.sh).
pub fn listing(results: &Results) -> String {
    let mut out = String::new();
    for (student, graded) in &results.students {
        for (exercise, e) in &graded.exercises {
            out.push_str(&format!(
                "{student}\t{exercise}\t{} of {}\tptx missing {}{}\n",
                e.points,
                e.max_points,
                e.ptx_missing.len(),
                match (&e.absent, &e.build_errors, &e.refused_binary) {
                    (Some(_), _, _) => "\tabsent",
                    (None, Some(_), _) => "\tno build",
                    (None, None, Some(_)) => "\trefused",
                    (None, None, None) => "",
                }
            ));
            for run in &e.runs {
                let role = match run.role {
                    Some(Role::KernelInCourseHost) => "kernel",
                    Some(Role::StudentHost) => "host",
                    None => "-",
                };
                out.push_str(&format!(
                    "{student}\t{exercise}\trun {}\t{role}\t{}\t{} of {}\n",
                    run.about(),
                    run.verdict.kind(),
                    run.points,
                    run.max_points
                ));
            }
            for check in &e.checks {
                out.push_str(&format!(
                    "{student}\t{exercise}\tcheck {}\t{}\t{}\t{} of {}\n",
                    check.name,
                    if check.assessed {
                        "assessed"
                    } else {
                        "not assessed"
                    },
                    if check.passed { "passed" } else { "not passed" },
                    check.points,
                    check.max_points
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::outcome::Verdict;

    #[test]
    fn every_edit_still_applies_to_the_current_solutions() {
        let course = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = tempfile::tempdir().unwrap();
        write_class(course, dir.path()).unwrap();
        let students = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(students, 2 + MUTANTS.len());
    }

    /// The golden class (scripts/golden-class.sh): the grader's own class
    /// built with seed 2026 and graded on the CPU emulator by this grader,
    /// kept with --update (the runs' reports left out). Every mutant of the
    /// class is in it.
    fn golden() -> Results {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden-class/results.json");
        Results::load(&path).unwrap()
    }

    /// `verify` finds exactly these expectations broken, in this order,
    /// each named by how its line starts.
    fn assert_broken(results: &Results, starts: &[&str]) {
        let broken = verify(results);
        assert_eq!(broken.len(), starts.len(), "{broken:?}");
        for (line, start) in broken.iter().zip(starts) {
            assert!(line.starts_with(start), "{broken:?}");
        }
    }

    #[test]
    fn verify_accepts_the_golden_class() {
        assert_eq!(verify(&golden()), Vec::<String>::new());
    }

    /// The fixture's record of `who`'s `exercise`.
    fn record<'a>(
        results: &'a mut Results,
        who: &str,
        exercise: ExerciseId,
    ) -> &'a mut results::Exercise {
        results
            .students
            .get_mut(who)
            .unwrap()
            .exercises
            .get_mut(exercise.name())
            .unwrap()
    }

    fn verdict(passes: bool) -> Verdict {
        if passes {
            Verdict::Passed
        } else {
            Verdict::Failed {
                failure: crate::record::outcome::Failure::UncheckedLaunch,
            }
        }
    }

    /// The fixture's record of `who` with every kernel run (in the course's
    /// host code) made to pass or fail.
    fn with_kernel_runs(results: &mut Results, who: &str, exercise: ExerciseId, passes: bool) {
        let graded = record(results, who, exercise);
        let kernel_runs = graded
            .runs
            .iter_mut()
            .filter(|r| r.role == Some(Role::KernelInCourseHost));
        for run in kernel_runs {
            run.verdict = verdict(passes);
            run.points = if passes { run.max_points } else { 0 };
        }
    }

    #[test]
    fn a_host_bug_must_leave_the_kernel_runs_and_a_kernel_bug_must_not() {
        // As graded: the host bug's kernel runs pass, the kernel bug's fail.
        let mut results = golden();
        with_kernel_runs(
            &mut results,
            "vecadd-anyN.prints-the-default",
            VecaddAnyN,
            false,
        );
        with_kernel_runs(&mut results, "dot-gm.drops-the-last-element", DotGm, true);
        assert_broken(
            &results,
            &[
                "vecadd-anyN.prints-the-default",
                "dot-gm.drops-the-last-element",
            ],
        );
    }

    #[test]
    fn a_mutant_that_kept_its_points_or_a_variant_that_lost_them_is_reported() {
        let mut results = golden();
        let graded = record(&mut results, "dot-atomic.accumulator-not-zeroed", DotAtomic);
        for run in &mut graded.runs {
            run.points = run.max_points;
            run.verdict = Verdict::Passed;
        }
        graded.points = graded.max_points;
        let kept = format!(
            "dot-atomic.accumulator-not-zeroed: {0} of {0}",
            graded.max_points
        );
        let variant = record(&mut results, "vecadd-anyN.variant-scalar-loop", VecaddAnyN);
        variant.points = 0;
        let lost = format!(
            "vecadd-anyN.variant-scalar-loop: 0 of {}",
            variant.max_points
        );
        assert_broken(&results, &[&kept, &lost]);
    }

    #[test]
    fn a_run_lost_by_another_tag_is_not_the_run_a_mutant_must_lose() {
        let mut results = golden();
        let who = "matmul-tiled.no-partial-tile";
        let graded = record(&mut results, who, MatmulTiled);
        // Only its partial-tiles runs fail; moved to another tag, they
        // no longer show the bug caught where it should be.
        for run in &mut graded.runs {
            if run.tag == Tag::PartialTiles {
                run.tag = Tag::WholeTiles;
            }
        }
        assert_broken(&results, &[who]);
    }

    #[test]
    fn an_emulator_finding_of_another_kind_or_without_its_line_is_reported() {
        let mut results = golden();
        let graded = record(&mut results, "dot-sm.no-barrier-in-the-tree", DotSm);
        for finding in graded.runs.iter_mut().flat_map(|r| r.findings.iter_mut()) {
            finding.line = None;
        }
        let graded = record(&mut results, "dot-atomic.plain-add-race", DotAtomic);
        for finding in graded.runs.iter_mut().flat_map(|r| r.findings.iter_mut()) {
            finding.kind = FindingKind::OutOfBounds;
        }
        assert_broken(
            &results,
            &["dot-sm.no-barrier-in-the-tree", "dot-atomic.plain-add-race"],
        );
    }

    #[test]
    fn on_a_gpu_a_mutant_that_kept_its_memory_safety_or_speed_point_is_reported() {
        let mut results = golden();
        results.emulated = false;
        for (who, exercise, name) in [
            ("dot-gm.one-past-the-end", DotGm, CheckName::MemorySafety),
            ("vecadd-anyN.redundant-stride", VecaddAnyN, CheckName::Speed),
        ] {
            let expect = &MUTANTS.iter().find(|m| student(m) == who).unwrap().expect;
            let graded = record(&mut results, who, exercise);
            let point = graded.checks.iter_mut().find(|c| c.name == name).unwrap();
            // Lost on a GPU: assessed, not passed.
            point.assessed = true;
            assert_eq!(check(&results, who, Some(exercise), expect), None);
            // Kept: the expectation is broken.
            let graded = record(&mut results, who, exercise);
            let point = graded.checks.iter_mut().find(|c| c.name == name).unwrap();
            point.passed = true;
            point.points = point.max_points;
            assert!(check(&results, who, Some(exercise), expect).is_some());
            // Not assessed (--no-sanitize) is not lost either.
            let graded = record(&mut results, who, exercise);
            let point = graded.checks.iter_mut().find(|c| c.name == name).unwrap();
            (point.passed, point.points, point.assessed) = (false, 0, false);
            assert!(check(&results, who, Some(exercise), expect).is_some());
        }
    }

    #[test]
    fn on_a_gpu_a_pipeline_that_never_overlaps_must_lose_its_judged_host_run_only() {
        let who = "streams-overlap.waits-after-each-chunk";
        let expect = &MUTANTS.iter().find(|m| student(m) == who).unwrap().expect;
        let judged = |r: &results::Run| {
            r.role == Some(Role::StudentHost) && r.tag == crate::plan::streams::OVERLAP_TIMED
        };
        // The golden record (graded on the emulator, every run kept) as a
        // GPU grading, with the judged host run lost (`lost`), or another
        // host run lost in its place, and the kernel runs kept or not.
        let graded_so = |lost: bool, kernel_runs_pass: bool| {
            let mut results = golden();
            results.emulated = false;
            with_kernel_runs(&mut results, who, StreamsOverlap, kernel_runs_pass);
            let graded = record(&mut results, who, StreamsOverlap);
            assert!(graded.runs.iter().any(judged));
            for run in graded.runs.iter_mut().filter(|r| judged(r)) {
                (run.verdict, run.points) = (verdict(false), 0);
                if !lost {
                    run.tag = Tag::ChunksPastTheGrid;
                }
            }
            check(&results, who, Some(StreamsOverlap), expect)
        };
        assert_eq!(graded_so(true, true), None);
        assert!(graded_so(false, true).is_some());
        assert!(graded_so(true, false).is_some());
        // As the emulator graded it, every run kept: broken on a GPU.
        let mut results = golden();
        results.emulated = false;
        assert!(check(&results, who, Some(StreamsOverlap), expect).is_some());
    }

    #[test]
    fn every_exercise_has_a_mutant() {
        for exercise in kernels::catalogue::EXERCISES {
            let caught = MUTANTS
                .iter()
                .any(|m| m.exercise == exercise.id && !matches!(m.expect, Expect::Full));
            assert!(caught, "{} has no mutant", exercise.name);
        }
    }

    #[test]
    fn the_listing_has_a_line_per_exercise_run_and_check() {
        let results = golden();
        let listing = listing(&results);
        let exercises = results.students.values().flat_map(|s| s.exercises.values());
        let want: usize = exercises.map(|e| 1 + e.runs.len() + e.checks.len()).sum();
        assert_eq!(listing.lines().count(), want);
        // A kernel run and a run of the student's binary are told apart.
        assert!(listing.contains("\tkernel\tpassed\t1 of 1\n"));
        assert!(listing.contains("\thost\tpassed\t1 of 1\n"));
        // And it is the golden listing itself.
        let golden_listing = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden-class/verdicts.tsv"),
        )
        .unwrap();
        assert_eq!(listing, golden_listing);
    }
}
