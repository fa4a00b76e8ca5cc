//! The table itself: one entry per exercise, in course order. A step's
//! `task` is its stub's `TODO(step N)` sentence; kernels/tests/stub_drift.rs
//! fails if the two differ.

use super::ExerciseId::{
    DotAtomic, DotGm, DotSm, MatmulNaive, MatmulTiled, MemspaceTiming, StreamsOverlap, VecaddAnyN,
};
use super::RunTag::*;
use super::StepFile::{Host, Kernel};
use super::{Behaviour, Emulated, Exercise, Lesson, PtxNeed, RunSpec, Shape, Step};
use ptx::features::Meaning::{Atomic, BlockBarrier, DataFrom, Loads, SpecialRegister, Stores};
use ptx::features::Space::{Const, Global, Param, Shared};

/// The runs of dot-sm and dot-atomic, whose kernels only sum the elements:
/// no run past 2^31 (dot-gm's kernel indexes every product).
const DOT_RUNS: &[RunSpec] = &[
    RunSpec::plain(OneElement),
    RunSpec::plain(GridSmallerThanN),
    RunSpec::plain(OneElementShows),
    RunSpec::plain(BlockOfOne),
    RunSpec::timed(DefaultInputs),
];

/// vecadd-anyN's and dot-gm's: kernels that loop over n elements with any
/// block and grid, past 2^31 too: the block sizes, n against the block and
/// the grid, the grid.
const ANY_BLOCK_SHAPES: &[Shape] = &[
    Shape::BlockOfOne,
    Shape::OneWarp,
    Shape::TwoWarps,
    Shape::NoPowerOfTwoBlock,
    Shape::DefaultBlock,
    Shape::LargestBlock,
    Shape::OneElement,
    Shape::NearBlockMultiple,
    Shape::NearGridMultiple,
    Shape::OneBlock,
    Shape::FewerThreadsThanElements,
    Shape::PastInt,
];

/// dot-sm's and dot-atomic's: their trees take power-of-two blocks only.
const TREE_SHAPES: &[Shape] = &[
    Shape::BlockOfOne,
    Shape::OneWarp,
    Shape::TwoWarps,
    Shape::DefaultBlock,
    Shape::LargestBlock,
    Shape::OneElement,
    Shape::NearBlockMultiple,
    Shape::NearGridMultiple,
    Shape::OneBlock,
    Shape::FewerThreadsThanElements,
];

/// Both matmul exercises': block edges and widths against them.
const MATMUL_SHAPES: &[Shape] = &[
    Shape::SmallestEdge,
    Shape::LargestBlock,
    Shape::DefaultBlock,
    Shape::WidthBelowEdge,
    Shape::WidthOnePastEdge,
    Shape::WidthOfWholeEdges,
    Shape::PartialBlocksOfTheSmallestEdge,
    Shape::PartialBlocksOfTheLargestEdge,
];

/// Every exercise, in course order.
pub const EXERCISES: [Exercise; 8] = [
    Exercise {
        id: VecaddAnyN,
        name: VecaddAnyN.name(),
        title: "Vector add, any length",
        summary: "c = a + b with a grid-stride loop, for any n and any launch shape.",
        steps: &[
            Step {
                file: Kernel,
                task: "store a[i] + b[i] into c[i] for every i below n, with a grid-stride loop.",
                hint: "A thread starts at its global index, blockIdx.x * blockDim.x + \
                       threadIdx.x, and steps by the number of threads in the whole grid, \
                       which blockDim.x and gridDim.x give. Use size_t for i: n may pass 2^31.",
            },
            Step {
                file: Host,
                task: ALLOCATE_ABC,
                hint: "DeviceBuffer::<f32>::zeroed(n) allocates n floats and fills them with \
                       zeros; it returns a Result, so end the line with `?`.",
            },
            Step {
                file: Host,
                task: COPY_AB,
                hint: COPY_IN_HINT,
            },
            Step {
                file: Host,
                task: "launch vecadd on `stream` with task.blocks blocks of task.threads \
                       threads, passing a, b, c and n, with cust's launch! macro \
                       (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: LAUNCH_HINT,
            },
            Step {
                file: Host,
                task: COPY_C_BACK,
                hint: COPY_OUT_HINT,
            },
            Step {
                file: Host,
                task: FREE_THREE,
                hint: FREE_HINT,
            },
        ],
        ptx: &[PtxNeed {
            kernel: Some("vecadd"),
            shows: SpecialRegister("%nctaid.x"),
            feature: "gridDim.x read, for the grid-stride loop",
            why: "the kernel never reads gridDim.x, so it cannot step by the whole grid",
        }],
        launches: &[&["vecadd"]],
        runs: &[
            RunSpec::plain(OneElement),
            RunSpec::plain(GridSmallerThanN),
            RunSpec::plain(EveryThreadLoops),
            RunSpec::plain(BlockOfOne),
            RunSpec::plain(OddBlock),
            RunSpec::timed(OneWave),
            RunSpec::past_int(PastInt),
        ],
        shapes: ANY_BLOCK_SHAPES,
        lesson: Some(Lesson {
            run: EveryThreadLoops,
            shows: Behaviour::CoalescedLoads,
        }),
    },
    Exercise {
        id: DotGm,
        name: DotGm.name(),
        title: "Dot, the host sums",
        summary: "Each thread multiplies, the products go to global memory, the host sums them.",
        steps: &[
            Step {
                file: Kernel,
                task: "store a[i] * b[i] into c[i] for every i below n, with a grid-stride loop.",
                hint: "The loop is vecadd-anyN's: start at the thread's global index and step \
                       by blockDim.x * gridDim.x. Only the operation changes.",
            },
            Step {
                file: Host,
                task: ALLOCATE_ABC,
                hint: "DeviceBuffer::<f32>::zeroed(n) allocates n floats; c needs as many as \
                       a and b, one product per element.",
            },
            Step {
                file: Host,
                task: COPY_AB,
                hint: COPY_IN_HINT,
            },
            Step {
                file: Host,
                task: "launch dot on `stream` with task.blocks blocks of task.threads threads, \
                       passing a, b, c and n, with cust's launch! macro \
                       (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: LAUNCH_HINT,
            },
            Step {
                file: Host,
                task: COPY_C_BACK,
                hint: COPY_OUT_HINT,
            },
            Step {
                file: Host,
                task: FREE_THREE,
                hint: FREE_HINT,
            },
        ],
        ptx: &[PtxNeed {
            kernel: Some("dot"),
            shows: Stores(Global),
            feature: "stores to global memory",
            why: "the kernel stores no products to global memory",
        }],
        launches: &[&["dot"]],
        runs: &[
            RunSpec::plain(OneElement),
            RunSpec::plain(GridSmallerThanN),
            RunSpec::plain(OneElementShows),
            RunSpec::plain(BlockOfOne),
            RunSpec::plain(OddBlock),
            RunSpec::timed(DefaultInputs),
            RunSpec::past_int(PastInt),
        ],
        shapes: ANY_BLOCK_SHAPES,
        lesson: Some(Lesson {
            run: GridSmallerThanN,
            shows: Behaviour::CoalescedLoads,
        }),
    },
    Exercise {
        id: DotSm,
        name: DotSm.name(),
        title: "Dot, shared-memory tree",
        summary: "Each block adds its products as a tree in shared memory and leaves one \
                  partial sum.",
        steps: &[
            Step {
                file: Kernel,
                task: RUNNING_SUM,
                hint: RUNNING_SUM_HINT,
            },
            Step {
                file: Kernel,
                task: TREE,
                hint: TREE_HINT,
            },
            Step {
                file: Kernel,
                task: "let thread 0 write the block's total, cache[0], to partials[blockIdx.x].",
                hint: "After the last barrier of the tree every thread could see the total; \
                       one write per block is enough, so test threadIdx.x first.",
            },
            Step {
                file: Host,
                task: "allocate a and b on the GPU, n floats each, and partials, one float \
                       per block, with DeviceBuffer::zeroed \
                       (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).",
                hint: "Three DeviceBuffer::<f32>::zeroed calls; the partials need `blocks` \
                       floats, not n.",
            },
            Step {
                file: Host,
                task: COPY_AB,
                hint: COPY_IN_HINT,
            },
            Step {
                file: Host,
                task: "launch dot on `stream` with task.blocks blocks of task.threads threads \
                       and one float of shared memory per thread, passing a, b, partials and \
                       n, with cust's launch! macro \
                       (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: SHARED_LAUNCH_HINT,
            },
            Step {
                file: Host,
                task: "copy the partials from the GPU into the host vector partials, with \
                       copy_to (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).",
                hint: COPY_OUT_HINT,
            },
            Step {
                file: Host,
                task: FREE_THREE,
                hint: FREE_HINT,
            },
        ],
        ptx: &[
            PtxNeed {
                kernel: Some("dot"),
                shows: BlockBarrier,
                feature: "a barrier, __syncthreads()",
                why: "the kernel has no __syncthreads(), which the shared-memory tree needs",
            },
            PtxNeed {
                kernel: Some("dot"),
                shows: Stores(Shared),
                feature: "stores to shared memory",
                why: "the kernel never stores to shared memory",
            },
            PtxNeed {
                kernel: Some("dot"),
                shows: Loads(Shared),
                feature: "loads from shared memory",
                why: "the kernel never loads from shared memory",
            },
        ],
        launches: &[&["dot"]],
        runs: DOT_RUNS,
        shapes: TREE_SHAPES,
        lesson: None,
    },
    Exercise {
        id: DotAtomic,
        name: DotAtomic.name(),
        title: "Dot, blocks add atomically",
        summary: "Blocks add their totals into one result with atomicAdd; --sweep times \
                  launch shapes.",
        steps: &[
            Step {
                file: Kernel,
                task: RUNNING_SUM,
                hint: RUNNING_SUM_HINT,
            },
            Step {
                file: Kernel,
                task: TREE,
                hint: TREE_HINT,
            },
            Step {
                file: Kernel,
                task: "let thread 0 add the block's total, cache[0], into *result with atomicAdd.",
                hint: "atomicAdd takes the address to add into and the value; every block \
                       adds into the same float, so a plain += would lose updates.",
            },
            Step {
                file: Host,
                task: "allocate a and b on the GPU, n floats each, and the result, one float, \
                       with DeviceBuffer::zeroed \
                       (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).",
                hint: "Three DeviceBuffer::<f32>::zeroed calls; the result is a buffer of \
                       length 1.",
            },
            Step {
                file: Host,
                task: COPY_AB,
                hint: COPY_IN_HINT,
            },
            Step {
                file: Host,
                task: "zero the result on `stream` before every launch, with set_zero_async \
                       (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceSlice.html), then \
                       launch dot with task.blocks blocks of task.threads threads and one float \
                       of shared memory per thread, passing a, b, result and n, with cust's \
                       launch! macro (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: "Each launch adds into the result, so a timed run must start from zero; \
                       queue the zeroing on the same stream so it happens before the kernel. \
                       Both calls are unsafe: say why they are sound in a SAFETY comment.",
            },
            Step {
                file: Host,
                task: "copy the result from the GPU into the host vector result, with copy_to \
                       (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).",
                hint: COPY_OUT_HINT,
            },
            Step {
                file: Host,
                task: FREE_THREE,
                hint: FREE_HINT,
            },
        ],
        ptx: &[PtxNeed {
            kernel: Some("dot"),
            shows: Atomic(Global),
            feature: "an atomic add to global memory, atomicAdd",
            why: "the kernel never adds atomically into global memory",
        }],
        launches: &[&["dot"]],
        runs: DOT_RUNS,
        shapes: TREE_SHAPES,
        lesson: None,
    },
    Exercise {
        id: MatmulNaive,
        name: MatmulNaive.name(),
        title: "Matmul, a thread per entry",
        summary: "P = M × N with a 2D grid: each thread computes one entry of P.",
        steps: &[
            Step {
                file: Kernel,
                task: "compute P[row][col] = the sum over k of M[row][k] * N[k][col], rows \
                       from the y indices and columns from the x indices, for threads inside \
                       the matrix only.",
                hint: "The matrices are stored row by row, so entry [r][c] is at \
                       r * width + c. The grid is rounded up, so some threads fall outside: \
                       test row and col against width before any read or write.",
            },
            Step {
                file: Host,
                task: ALLOCATE_MNP,
                hint: "A width × width matrix is width * width floats in one \
                       DeviceBuffer::<f32>::zeroed.",
            },
            Step {
                file: Host,
                task: COPY_MN,
                hint: COPY_IN_HINT,
            },
            Step {
                file: Host,
                task: "launch matmul on `stream` with task.block × task.block threads per \
                       block and enough blocks each way to cover the width, passing M, N, P \
                       and the width, with cust's launch! macro \
                       (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: MATMUL_LAUNCH_HINT,
            },
            Step {
                file: Host,
                task: COPY_P_BACK,
                hint: COPY_OUT_HINT,
            },
            Step {
                file: Host,
                task: FREE_THREE,
                hint: FREE_HINT,
            },
        ],
        ptx: &[PtxNeed {
            kernel: Some("matmul"),
            shows: SpecialRegister("%ctaid.y"),
            feature: "blockIdx.y read, a 2D grid",
            why: "the kernel does not use a 2D grid (blockIdx.y)",
        }],
        launches: &[&["matmul"]],
        runs: &[
            RunSpec::plain(SmallerThanABlock),
            RunSpec::plain(PartialTiles),
            RunSpec::plain(LargestBlock),
            // The naive kernel is the baseline tiling beats: not timed.
            RunSpec::plain(WholeTiles),
        ],
        shapes: MATMUL_SHAPES,
        lesson: None,
    },
    Exercise {
        id: MatmulTiled,
        name: MatmulTiled.name(),
        title: "Matmul with shared tiles",
        summary: "P = M × N a tile at a time: each block loads tiles of M and N into \
                  shared memory and every thread reuses them.",
        steps: &[
            Step {
                file: Kernel,
                task: "load this phase's tiles, m_tile[ty][tx] from M[row][phase * TILE + tx] \
                       and n_tile[ty][tx] from N[phase * TILE + ty][col], 0 past the matrix's \
                       edge, then __syncthreads().",
                hint: "Each thread loads one entry of each tile. Test the column of M and the \
                       row of N you read against width: the last phase may hang over the \
                       edge, and a 0 there adds nothing to the sum.",
            },
            Step {
                file: Kernel,
                task: "add m_tile[ty][k] * n_tile[k][tx] for every k in the tile to the sum, \
                       then __syncthreads() before the next phase overwrites the tiles.",
                hint: "A loop over k from 0 to TILE. The second barrier matters: without it a \
                       fast thread loads the next tile while a slow one still reads this one.",
            },
            Step {
                file: Kernel,
                task: "write the sum to P[row][col] if the thread lies inside the matrix.",
                hint: "Every thread, inside or not, had to reach the barriers; only now may \
                       the ones outside the matrix skip their write.",
            },
            Step {
                file: Host,
                task: ALLOCATE_MNP,
                hint: "A width × width matrix is width * width floats in one \
                       DeviceBuffer::<f32>::zeroed.",
            },
            Step {
                file: Host,
                task: COPY_MN,
                hint: COPY_IN_HINT,
            },
            Step {
                file: Host,
                task: "launch matmul on `stream` with task.block × task.block threads per \
                       block (one per entry of a tile) and enough blocks each way to cover \
                       the width, passing M, N, P and the width, with cust's launch! macro \
                       (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: MATMUL_LAUNCH_HINT,
            },
            Step {
                file: Host,
                task: COPY_P_BACK,
                hint: COPY_OUT_HINT,
            },
            Step {
                file: Host,
                task: FREE_THREE,
                hint: FREE_HINT,
            },
        ],
        ptx: &[
            PtxNeed {
                kernel: Some("matmul_tiled_16"),
                shows: BlockBarrier,
                feature: "a barrier, __syncthreads()",
                why: "the tiled kernel has no __syncthreads() between loading and using a tile",
            },
            PtxNeed {
                kernel: Some("matmul_tiled_16"),
                shows: Loads(Shared),
                feature: "loads from shared memory",
                why: "the tiled kernel never reads its tiles from shared memory",
            },
        ],
        launches: &[&["matmul_tiled_16", "matmul_tiled_32"]],
        runs: &[
            RunSpec::plain(SmallerThanABlock),
            RunSpec::plain(PartialTiles),
            RunSpec::plain(LargestBlock),
            RunSpec::timed(WholeTiles),
        ],
        shapes: MATMUL_SHAPES,
        lesson: Some(Lesson {
            run: LargestBlock,
            shows: Behaviour::TiledLoads,
        }),
    },
    Exercise {
        id: MemspaceTiming,
        name: MemspaceTiming.name(),
        title: "Four memory spaces timed",
        summary: "One sum read from four memory spaces, to see what each costs.",
        steps: &[
            Step {
                file: Kernel,
                task: "add data[j] for every j below SIZE (data[shifted(j)] if per_thread is \
                       set), and store the sum in out[thread_index()].",
                hint: "Test per_thread once, outside the loop, and write one loop for each \
                       pattern: the compiler can then see that the uniform loop reads the \
                       same address in every thread.",
            },
            Step {
                file: Kernel,
                task: "add const_data[j] for every j below SIZE (const_data[shifted(j)] if \
                       per_thread is set), and store the sum in out[thread_index()].",
                hint: "Step 1's kernel with const_data in place of data: the array is a \
                       __constant__ global, so the kernel reads it without a parameter.",
            },
            Step {
                file: Kernel,
                task: "add value to a running sum SIZE times, and store the sum in \
                       out[thread_index()].",
                hint: "value arrives as a parameter and lives in a register; the loop only \
                       adds it, so this kernel times the additions alone.",
            },
            Step {
                file: Kernel,
                task: "copy data into tile with the block's threads sharing the work, wait at \
                       __syncthreads(), then add tile[j] for every j below SIZE \
                       (tile[shifted(j)] if per_thread is set) and store the sum in \
                       out[thread_index()].",
                hint: "Thread t copies elements t, t + blockDim.x, t + 2 * blockDim.x, ... of \
                       data; nobody may read the tile until every thread has copied its part.",
            },
            Step {
                file: Host,
                task: "fill the module's __constant__ array const_data with task.data, through \
                       the symbol the module exports for it, with Module::get_global \
                       (https://docs.rs/cust/0.3.2/cust/module/struct.Module.html).",
                hint: "get_global takes the symbol's name as a C string (c\"...\") and the \
                       array's exact type, [f32; SIZE]; the Symbol it returns has copy_from.",
            },
            Step {
                file: Host,
                task: "allocate data on the GPU with task.data copied in, and out, one float \
                       per thread of the grid, with DeviceBuffer::from_slice and \
                       DeviceBuffer::zeroed \
                       (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).",
                hint: "from_slice allocates and copies in one call. The grid has \
                       threads_in_grid threads, and out holds one sum per thread.",
            },
            Step {
                file: Host,
                task: "launch sum_global on `stream` with task.blocks blocks of task.threads \
                       threads, passing data, out and per_thread, with cust's launch! macro \
                       (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: "The closure gets out as a device pointer already; data needs \
                       as_device_ptr(). No dynamic shared memory: the third launch value is 0.",
            },
            Step {
                file: Host,
                task: "launch sum_constant the same way, passing out and per_thread: it reads \
                       const_data.",
                hint: "The kernel's parameters are only out and per_thread, in that order.",
            },
            Step {
                file: Host,
                task: "launch sum_register the same way, passing REGISTER_VALUE and out.",
                hint: "Mind the order: the value comes first, then the output.",
            },
            Step {
                file: Host,
                task: "launch sum_shared the same way, passing data, out and per_thread.",
                hint: "The kernel declares its tile itself, so the launch asks for no dynamic \
                       shared memory.",
            },
            Step {
                file: Host,
                task: "free data and out with DeviceBuffer::drop \
                       (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html), \
                       which reports errors a plain drop hides.",
                hint: FREE_HINT,
            },
        ],
        // Each kernel reads its data from its own space and no other: the
        // lesson is the difference between them (the shared one fills its
        // tile from global memory, and sums from the tile).
        ptx: &[
            PtxNeed {
                kernel: Some("sum_global"),
                shows: DataFrom(Global),
                feature: "the global kernel reads its data from global memory",
                why: "the global kernel never reads global memory",
            },
            PtxNeed {
                kernel: Some("sum_constant"),
                shows: DataFrom(Const),
                feature: "the constant kernel reads its data from constant memory",
                why: "the constant kernel never reads constant memory",
            },
            PtxNeed {
                kernel: Some("sum_register"),
                shows: DataFrom(Param),
                feature: "the register kernel adds its parameter and reads no memory",
                why: "the register kernel never reads its value parameter",
            },
            PtxNeed {
                kernel: Some("sum_shared"),
                shows: DataFrom(Shared),
                feature: "the shared kernel sums from shared memory",
                why: "the shared kernel never reads shared memory",
            },
        ],
        launches: &[
            &["sum_global"],
            &["sum_constant"],
            &["sum_register"],
            &["sum_shared"],
        ],
        runs: &[RunSpec::plain(PerThreadReads), RunSpec::plain(UniformReads)],
        shapes: &[Shape::NoPowerOfTwoBlock, Shape::LargestBlock],
        lesson: None,
    },
    Exercise {
        id: StreamsOverlap,
        name: StreamsOverlap.name(),
        title: "Copies overlap kernels",
        summary: "Chunks on several streams, so one chunk's copies run while another's \
                  kernel does.",
        steps: &[
            Step {
                file: Kernel,
                task: "for every i below n, with a grid-stride loop, apply the step work times \
                       to in[i] and store the result in out[i].",
                hint: "Keep the value in a register while you apply the step work times, and \
                       store it once at the end; the step itself is the function above the \
                       kernel.",
            },
            Step {
                file: Host,
                task: "copy the input into pinned host memory, and allocate pinned host memory \
                       for the output, n values each, with LockedBuffer \
                       (https://docs.rs/cust/0.3.2/cust/memory/struct.LockedBuffer.html).",
                hint: "LockedBuffer has a constructor that copies a slice and one that fills \
                       n values with a given value. Only pinned memory lets a copy run \
                       asynchronously.",
            },
            Step {
                file: Host,
                task: "allocate the input and the output on the GPU, n values each, with \
                       DeviceBuffer::zeroed \
                       (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).",
                hint: "The values are u32, not f32: DeviceBuffer::<u32>::zeroed(n).",
            },
            Step {
                file: Host,
                task: "copy this chunk of h_in into the same chunk of d_in, asynchronously on \
                       chunk.stream, with async_copy_from \
                       (https://docs.rs/cust/0.3.2/cust/memory/trait.AsyncCopyDestination.html).",
                hint: "Index the device buffer with the chunk's range to get a DeviceSlice, \
                       and the host buffer with the same range. The call is unsafe: the host \
                       memory must outlive the copy; say why it does in a SAFETY comment.",
            },
            Step {
                file: Host,
                task: "launch transform on chunk.stream over this chunk, passing d_in and d_out \
                       from the chunk's start, the chunk's length and work, with cust's launch! \
                       macro (https://docs.rs/cust/0.3.2/cust/macro.launch.html).",
                hint: "Slice both device buffers with the chunk's range before taking their \
                       device pointers, and size the grid to the chunk, not to n.",
            },
            Step {
                file: Host,
                task: "copy this chunk of d_out into the same chunk of h_out, asynchronously \
                       on chunk.stream, with async_copy_to \
                       (https://docs.rs/cust/0.3.2/cust/memory/trait.AsyncCopyDestination.html).",
                hint: "Step 4 the other way round, on the same stream, so it waits for this \
                       chunk's kernel and no other.",
            },
            Step {
                file: Host,
                task: "free the four buffers with their drop functions, DeviceBuffer::drop \
                       and LockedBuffer::drop, which report errors a plain drop hides.",
                hint: "Take the buffers out of stages first (destructure it); each drop \
                       function returns a Result that `?` turns into the course's error.",
            },
        ],
        ptx: &[PtxNeed {
            kernel: Some("transform"),
            shows: Stores(Global),
            feature: "stores to global memory",
            why: "the kernel stores no results",
        }],
        launches: &[&["transform"]],
        runs: &[
            RunSpec::plain(UnevenChunks),
            RunSpec {
                emulated: Emulated::TooSlow("chunks this long take minutes on a CPU"),
                ..RunSpec::plain(ChunksPastTheGrid)
            },
        ],
        shapes: &[Shape::ChunksOffTheBlock, Shape::ChunksPastTheGrid],
        lesson: None,
    },
];

// Steps that read the same in several exercises.

const ALLOCATE_ABC: &str = "allocate a, b and c on the GPU, n floats each, with \
                            DeviceBuffer::zeroed \
                            (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).";
const ALLOCATE_MNP: &str = "allocate M, N and P on the GPU, width × width floats each, with \
                            DeviceBuffer::zeroed \
                            (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).";
const COPY_AB: &str = "copy a and b from the host into their GPU buffers, with copy_from \
                       (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).";
const COPY_MN: &str = "copy M and N from the host into their GPU buffers, with copy_from \
                       (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).";
const COPY_C_BACK: &str = "copy c from the GPU into the host vector c, with copy_to \
                           (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).";
const COPY_P_BACK: &str = "copy P from the GPU into the host vector p, with copy_to \
                           (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).";
const FREE_THREE: &str = "free the three GPU buffers with DeviceBuffer::drop \
                          (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html), \
                          which reports errors a plain drop hides.";
const RUNNING_SUM: &str = "sum a[i] * b[i] over this thread's grid-stride loop into a running sum.";
const TREE: &str = "store the running sum in cache[threadIdx.x], then add the cache up as a \
                    tree, with __syncthreads() after the store and after every step.";

const COPY_IN_HINT: &str = "copy_from comes from the CopyDestination trait, which \
                            cust::prelude brings in; it copies a whole host slice into a \
                            device buffer of the same length.";
const COPY_OUT_HINT: &str = "copy_to is copy_from the other way round: the device buffer \
                             writes into a host slice of the same length.";
const LAUNCH_HINT: &str = "launch!(kernel<<<blocks, threads, shared_bytes, stream>>>(args...)) \
                           is unsafe: the arguments must match the kernel's parameters in \
                           order and type. Pass each buffer as buffer.as_device_ptr(), and \
                           return the Result.";
const SHARED_LAUNCH_HINT: &str = "The third value in <<< >>> is the dynamic shared memory in \
                                  bytes: one f32 per thread is task.threads times \
                                  std::mem::size_of::<f32>().";
const MATMUL_LAUNCH_HINT: &str = "Blocks and grids take tuples, (x, y), for 2D. Divide the \
                                  width by the block size rounding up (div_ceil), or the last \
                                  rows and columns get no threads.";
const FREE_HINT: &str = "DeviceBuffer::drop(buffer) takes the buffer by value and returns a \
                         Result; `?` on it works, once per buffer.";
const RUNNING_SUM_HINT: &str = "dot-gm's grid-stride loop, but each thread keeps adding its \
                                products into a local float instead of storing them.";
const TREE_HINT: &str = "Halve the number of live slots each round: the threads below half \
                         add the slot half above theirs. Every thread must reach each \
                         __syncthreads(), so keep the barrier outside any if.";
