//! A kernel launch: its blocks spread over the host's cores, the first
//! fault stopping the rest, and what the blocks printed, and what they
//! carried on past (`exec::memory::carry_on`), gathered in block order.
//! Faults stay typed (`exec::error`); the driver checks the launch's shape
//! before (`driver::limits`) and words the faults after (`driver::fault`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::exec::error::BlockError;
use crate::exec::memory::state::LaunchMemory;
use crate::exec::schedule::accesses::{self, Recorded, Recording};
use crate::exec::schedule::block::BlockRunner;
use crate::exec::schedule::counters::{self, PcCount};
use crate::heap::Allocation;
use crate::ir::{Kernel, Op, fixed};

/// The grid and block shape and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
    /// The kernel's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`; None:
    /// as it is before any `cuFuncSetAttribute` (48 KiB in all).
    pub dynamic_limit: Option<u32>,
}

impl Shape {
    /// A 1D launch with no dynamic shared memory.
    pub fn linear(grid: u32, block: u32) -> Shape {
        Shape {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared: 0,
            dynamic_limit: None,
        }
    }
}

/// What one block found: the block, by its index, and the error.
#[derive(Debug)]
pub struct Found {
    pub ctaid: [u32; 3],
    pub error: BlockError,
}

/// A launch a block's error stopped, as a GPU launch would stop.
#[derive(Debug)]
pub struct Failed {
    /// The error that stopped it, and its block (boxed: a launch's result
    /// stays small).
    pub stopped: Box<Found>,
    /// What the blocks printed before it.
    pub printed: Vec<u8>,
    /// What blocks carried on past before it (`exec::memory::carry_on`).
    pub findings: Vec<Found>,
}

/// What a launch did; its findings typed (`Found`), or as the driver
/// words them.
#[derive(Debug, Default)]
pub struct Report<F = Found> {
    /// Thread-instructions executed.
    pub executed: u64,
    /// CPU seconds the workers spent, summed: executed / cpu_seconds is
    /// the rate per core, whatever else the machine is doing.
    pub cpu_seconds: f64,
    /// What `printf` wrote, block by block in the grid's order.
    pub printed: Vec<u8>,
    /// What the blocks carried on past (`exec::memory::carry_on`), the
    /// first [`KEPT_FINDINGS`] in the grid's order.
    pub findings: Vec<F>,
    /// What the hardware would have counted, by instruction, where the
    /// launch was asked to count (`exec::schedule::counters`).
    pub counts: Option<Vec<PcCount>>,
    /// What a profiler's pictures show, where the launch was asked to
    /// record it (`exec::schedule::accesses`).
    pub recorded: Option<Recorded>,
}

/// Findings a launch keeps: the first few say what is wrong, and a kernel
/// wrong in every block would otherwise print a line for each.
pub const KEPT_FINDINGS: usize = 8;

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

/// Runs `kernel` over `shape` (which the driver checked against the
/// device's limits) with `params` (its parameter buffer) against
/// `allocations`; with `carry_on`, past what a GPU carries on past
/// (`exec::memory::carry_on`), those findings in the report; with `count`,
/// counting what the hardware would (`exec::schedule::counters`); with
/// `record`, also recording what a profiler's pictures show
/// (`exec::schedule::accesses`), which counting's access hook feeds.
pub fn launch(
    kernel: &Kernel,
    shape: Shape,
    params: Vec<u8>,
    allocations: Vec<Arc<Allocation>>,
    carry_on: bool,
    count: bool,
    record: Option<accesses::Ask>,
) -> Result<Report, Failed> {
    let count = count || record.is_some();
    let recording = record.map(|ask| Recording::new(kernel, ask.output));
    let warp: Mutex<Vec<accesses::LaneAccess>> = Mutex::new(Vec::new());
    let threads: u64 = shape.block.iter().map(|&d| u64::from(d)).product();
    let blocks: u64 = shape.grid.iter().map(|&d| u64::from(d)).product();
    let shared = kernel.static_shared + u64::from(shape.dynamic_shared);
    // The kernel's code is small; a copy carries this launch's shape.
    let mut shaped = kernel.clone();
    for axis in 0..3 {
        shaped.template[fixed::NTID as usize + axis] = u64::from(shape.block[axis]);
        shaped.template[fixed::NCTAID as usize + axis] = u64::from(shape.grid[axis]);
    }
    shaped.template[fixed::NWARPID as usize] = threads.div_ceil(32);
    let mut memory = LaunchMemory::new(
        allocations,
        params,
        threads,
        threads.saturating_mul(blocks),
        kernel.device_fence,
        kernel.code.iter().any(|i| matches!(i.op, Op::Warp { .. })),
    );
    memory.carry_on = carry_on;
    let memory = memory;
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first_fault: Mutex<Option<Found>> = Mutex::new(None);
    let executed = AtomicU64::new(0);
    let cpu_nanos = AtomicU64::new(0);
    let counts: Mutex<Option<Vec<PcCount>>> =
        Mutex::new(count.then(|| vec![PcCount::default(); kernel.code.len()]));
    let printed: Mutex<Vec<(u64, Vec<u8>)>> = Mutex::new(Vec::new());
    let findings: Mutex<Vec<(u64, Vec<Found>)>> = Mutex::new(Vec::new());
    let workers = workers().min(blocks as usize);
    let work = || {
        let started = thread_cpu_nanos();
        let mut runner = BlockRunner::new(&shaped, shape.block, shared as usize, count);
        if let (Some(counting), Some(recording)) = (runner.counting.as_mut(), recording.as_ref()) {
            counting.recorder = Some(recording.recorder());
        }
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
            let result = runner.run(&shaped, &memory, shape.block, ctaid, linear);
            let found = runner.take_findings();
            if !found.is_empty() {
                let found = found
                    .into_iter()
                    .map(|error| Found { ctaid, error })
                    .collect();
                let mut all = findings.lock().unwrap_or_else(|e| e.into_inner());
                all.push((linear, found));
            }
            let text = runner.take_printed();
            if !text.is_empty() {
                let mut all = printed.lock().unwrap_or_else(|e| e.into_inner());
                all.push((linear, text));
            }
            if let Err(error) = result {
                stop.store(true, Ordering::Relaxed);
                let mut slot = first_fault.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(Found { ctaid, error });
                break;
            }
        }
        executed.fetch_add(runner.executed, Ordering::Relaxed);
        if let Some(counting) = runner.counting.as_ref() {
            let mut all = counts.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(all) = all.as_mut() {
                counters::merge(all, &counting.total);
            }
            if let Some(recorder) = counting.recorder.as_ref() {
                let mut kept = warp.lock().unwrap_or_else(|e| e.into_inner());
                kept.extend_from_slice(&recorder.warp);
            }
        }
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
    let mut printed = printed.into_inner().unwrap_or_else(|e| e.into_inner());
    printed.sort_by_key(|(linear, _)| *linear);
    let printed: Vec<u8> = printed.into_iter().flat_map(|(_, text)| text).collect();
    let mut findings = findings.into_inner().unwrap_or_else(|e| e.into_inner());
    findings.sort_by_key(|(linear, _)| *linear);
    let findings: Vec<Found> = findings
        .into_iter()
        .flat_map(|(_, found)| found)
        .take(KEPT_FINDINGS)
        .collect();
    match first_fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(stopped) => Err(Failed {
            stopped: Box::new(stopped),
            printed,
            findings,
        }),
        None => Ok(Report {
            executed: executed.into_inner(),
            cpu_seconds: cpu_nanos.into_inner() as f64 * 1e-9,
            printed,
            findings,
            counts: counts.into_inner().unwrap_or_else(|e| e.into_inner()),
            recorded: recording.map(|recording| {
                recording.finish(warp.into_inner().unwrap_or_else(|e| e.into_inner()))
            }),
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
