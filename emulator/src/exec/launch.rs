//! A kernel launch: blocks spread over the host's cores, the first fault
//! stopping the rest, and the fault described with its block, thread,
//! address and `kernel.cu` line.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::access::{AccessError, LaunchMemory};
use super::block::{BlockError, BlockRunner};
use super::thread::ThreadError;
use crate::driver::codes::{self, CuResult};
use crate::ir::{Kernel, Space, fixed};
use crate::memory::Allocation;

/// The grid and block shape and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
}

/// A launch that failed as a GPU launch would, with what to tell the user.
#[derive(Debug)]
pub struct Fault {
    pub code: CuResult,
    pub message: String,
}

/// What a launch did.
#[derive(Debug, Default)]
pub struct Report {
    /// Thread-instructions executed.
    pub executed: u64,
    /// CPU seconds the workers spent, summed: executed / cpu_seconds is
    /// the rate per core, whatever else the machine is doing.
    pub cpu_seconds: f64,
}

/// CPU time this host thread has used, in nanoseconds.
fn thread_cpu_nanos() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Runs `kernel` over `shape` with `params` (its parameter buffer) against
/// `allocations`.
pub fn launch(
    kernel: &Kernel,
    shape: Shape,
    params: Vec<u8>,
    allocations: Vec<Arc<Allocation>>,
) -> Result<Report, Fault> {
    let threads: u64 = shape.block.iter().map(|&d| u64::from(d)).product();
    let blocks: u64 = shape.grid.iter().map(|&d| u64::from(d)).product();
    if threads == 0 || threads > 1024 || blocks == 0 || shape.block[2] > 64 {
        return Err(Fault {
            code: codes::INVALID_VALUE,
            message: format!(
                "kernel `{}`: a block of {:?} threads or a grid of {:?} blocks is not allowed",
                kernel.name, shape.block, shape.grid
            ),
        });
    }
    let shared = kernel.static_shared + u64::from(shape.dynamic_shared);
    if shared > 48 * 1024 {
        return Err(Fault {
            code: codes::INVALID_VALUE,
            message: format!(
                "kernel `{}` asks for {shared} bytes of shared memory; a block has 49152",
                kernel.name
            ),
        });
    }
    // The kernel's code is small; a copy carries this launch's shape.
    let mut shaped = kernel.clone();
    for axis in 0..3 {
        shaped.template[fixed::NTID as usize + axis] = u64::from(shape.block[axis]);
        shaped.template[fixed::NCTAID as usize + axis] = u64::from(shape.grid[axis]);
    }
    shaped.template[fixed::NWARPID as usize] = threads.div_ceil(32);
    let memory = LaunchMemory::new(allocations, params, threads);
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first_fault: Mutex<Option<Fault>> = Mutex::new(None);
    let executed = AtomicU64::new(0);
    let cpu_nanos = AtomicU64::new(0);
    let workers = workers().min(blocks as usize);
    let work = || {
        let started = thread_cpu_nanos();
        let mut runner = BlockRunner::new(&shaped, shape.block, shared as usize);
        while !stop.load(Ordering::Relaxed) {
            let linear = next.fetch_add(1, Ordering::Relaxed);
            if linear >= blocks {
                break;
            }
            let ctaid = [
                (linear % u64::from(shape.grid[0])) as u32,
                (linear / u64::from(shape.grid[0]) % u64::from(shape.grid[1])) as u32,
                (linear / (u64::from(shape.grid[0]) * u64::from(shape.grid[1]))) as u32,
            ];
            if let Err(error) = runner.run(&shaped, &memory, shape.block, ctaid, linear) {
                stop.store(true, Ordering::Relaxed);
                let fault = describe(&shaped, shape, ctaid, error);
                let mut slot = first_fault.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(fault);
                break;
            }
        }
        executed.fetch_add(runner.executed, Ordering::Relaxed);
        cpu_nanos.fetch_add(thread_cpu_nanos() - started, Ordering::Relaxed);
    };
    if workers <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(work);
            }
        });
    }
    match first_fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(fault) => Err(fault),
        None => Ok(Report {
            executed: executed.into_inner(),
            cpu_seconds: cpu_nanos.into_inner() as f64 * 1e-9,
        }),
    }
}

/// Host threads running blocks: one per core, or
/// `CUDA_COURSE_EMULATOR_THREADS` (what the benchmark uses to measure one
/// core).
fn workers() -> usize {
    std::env::var("CUDA_COURSE_EMULATOR_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn coords(index: u64, shape: [u32; 3]) -> String {
    let x = index % u64::from(shape[0]);
    let y = index / u64::from(shape[0]) % u64::from(shape[1]);
    let z = index / (u64::from(shape[0]) * u64::from(shape[1]));
    format!("({x},{y},{z})")
}

fn space_name(space: Space) -> &'static str {
    match space {
        Space::Global | Space::Generic => "global",
        Space::Shared => "shared",
        Space::Const => "constant",
        Space::Local => "local",
        Space::Param => "parameter",
    }
}

/// The message and CUDA error code for a block's failure.
fn describe(kernel: &Kernel, shape: Shape, ctaid: [u32; 3], error: BlockError) -> Fault {
    let block = format!("({},{},{})", ctaid[0], ctaid[1], ctaid[2]);
    let threads: u64 = shape.block.iter().map(|&d| u64::from(d)).product();
    let thread = |t: usize| coords(t as u64, shape.block);
    let origin = |pc: u32| {
        kernel.origins.get(pc as usize).map_or_else(
            || format!("instruction {pc}"),
            |o| format!("`{}` at {}", o.opcode, o.describe()),
        )
    };
    let head = format!("kernel `{}` block {block}", kernel.name);
    let (code, message) = match error {
        BlockError::Thread(t, pc, ThreadError::Unsupported(index)) => (
            codes::ILLEGAL_INSTRUCTION,
            format!(
                "{head} thread {}: {} (the emulator stops here rather than guess)",
                thread(t),
                kernel
                    .unsupported
                    .get(index as usize)
                    .map_or("unsupported instruction", String::as_str)
            ) + &format!(", {}", origin(pc)),
        ),
        BlockError::Thread(t, pc, ThreadError::Runaway) => (
            codes::LAUNCH_FAILED,
            format!(
                "{head} thread {}: ran more than {} instructions, so it is taken to loop forever; {}",
                thread(t),
                super::thread::RUNAWAY,
                origin(pc)
            ),
        ),
        BlockError::Thread(t, pc, ThreadError::Access(access)) => {
            let who = format!("{head} thread {}", thread(t));
            match access {
                AccessError::OutOfBounds {
                    space,
                    address,
                    len,
                    near,
                } => {
                    let place = match near {
                        Some((base, size, label)) if address >= base => format!(
                            "{} bytes past the start of a {size}-byte {label} allocation at {base:#x} (it ends at {:#x})",
                            address - base,
                            base + size
                        ),
                        _ => "in no allocation".to_string(),
                    };
                    (
                        codes::ILLEGAL_ADDRESS,
                        format!(
                            "{who}: out-of-bounds {} access of {len} bytes at {address:#x}, {place}; {}",
                            space_name(space),
                            origin(pc)
                        ),
                    )
                }
                AccessError::Misaligned {
                    space,
                    address,
                    align,
                } => (
                    codes::MISALIGNED_ADDRESS,
                    format!(
                        "{who}: misaligned {} access at {address:#x} (needs {align}-byte alignment); {}",
                        space_name(space),
                        origin(pc)
                    ),
                ),
                AccessError::Race {
                    space,
                    address,
                    write,
                    conflict,
                } => {
                    let other_block = coords(conflict.earlier.thread / threads, shape.grid);
                    let other_thread = coords(conflict.earlier.thread % threads, shape.block);
                    let (kind, fix) = match space {
                        Space::Shared => (
                            "shared-memory race",
                            "put __syncthreads() between them or use an atomic",
                        ),
                        _ => (
                            "global-memory conflict",
                            "give each thread its own element or use an atomic",
                        ),
                    };
                    (
                        codes::LAUNCH_FAILED,
                        format!(
                            "{kind} in kernel `{}` at {} address {address:#x}: block {other_block} thread \
                             {other_thread} {} it ({}), then block {block} thread {} {} it ({}) with no \
                             barrier between; {fix}",
                            kernel.name,
                            space_name(space),
                            if conflict.earlier_wrote {
                                "wrote"
                            } else {
                                "read"
                            },
                            origin(conflict.earlier.at),
                            thread(t),
                            if write { "wrote" } else { "read" },
                            origin(pc),
                        ),
                    )
                }
            }
        }
        BlockError::BarrierDivergence((t1, pc1), (t2, pc2)) => (
            codes::LAUNCH_FAILED,
            format!(
                "{head}: barrier not reached by every thread: thread {} waits at {} while thread {} waits at {}; \
                 every live thread of a block must reach the same __syncthreads()",
                thread(t1),
                origin(pc1),
                thread(t2),
                origin(pc2)
            ),
        ),
        BlockError::Deadlock(t, pc) => (
            codes::LAUNCH_FAILED,
            format!(
                "{head}: thread {} waits forever at {}: the other threads it waits for exited or wait elsewhere",
                thread(t),
                origin(pc)
            ),
        ),
    };
    Fault { code, message }
}
