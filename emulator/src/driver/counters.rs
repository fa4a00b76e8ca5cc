//! Counters the hardware has, as the driver hands them on: whether a
//! launch counts (`CUDA_COURSE_EMULATOR_COUNTERS`, or the course's own
//! host code asking through [`cuda_course_emulator_count`]), a launch's
//! per-instruction counts (`exec::schedule::counters`) turned into
//! `kernels::emulator_counters`' typed launch and `kernel.cu` lines, and
//! where they go: stderr, or kept for [`cuda_course_emulator_counted`].

use std::ffi::c_char;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use kernels::emulator_counters::{COUNTERS_VARIABLE, Counts, LaunchCounters, LineCounts, Traffic};

use crate::exec::launch::Shape;
use crate::exec::schedule::counters::{self, PcCount};
use crate::ir::{Kernel, Op};

/// Counting asked for by the host code, for the launches that follow.
static ASKED: AtomicBool = AtomicBool::new(false);
/// The lines of launches counted while asked, until taken.
static KEPT: Mutex<String> = Mutex::new(String::new());

/// Whether the next launch counts.
pub fn wanted() -> bool {
    ASKED.load(Ordering::Relaxed) || std::env::var(COUNTERS_VARIABLE).is_ok_and(|v| v == "1")
}

/// Hands a counted launch on: its lines on stderr under the variable,
/// kept for the host code when it asked.
pub fn hand_on(launch: &LaunchCounters) {
    if std::env::var(COUNTERS_VARIABLE).is_ok_and(|v| v == "1") {
        eprint!("{launch}");
    }
    if ASKED.load(Ordering::Relaxed) {
        KEPT.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_str(&launch.to_string());
    }
}

fn traffic(from: counters::Traffic) -> Traffic {
    Traffic {
        requests: from.requests,
        transactions: from.transactions,
        ideal: from.ideal,
    }
}

/// What instruction `op` counted, as the kinds of access name it.
fn counted(op: &Op, count: &PcCount) -> Counts {
    let mut counts = Counts {
        inst: count.warp,
        lanes: count.lanes,
        ..Counts::default()
    };
    let (global, shared) = (traffic(count.global), traffic(count.shared));
    match op {
        Op::Load { .. } => {
            counts.global_load = global;
            counts.shared_load = shared;
        }
        Op::Store { .. } => {
            counts.global_store = global;
            counts.shared_store = shared;
        }
        // Shared atomics are left out.
        Op::Atomic { .. } => counts.global_atomic = global,
        _ => {}
    }
    counts
}

/// A launch of `kernel` over `shape`, its counts by instruction.
pub fn launch_counters(kernel: &Kernel, shape: Shape, by_pc: &[PcCount]) -> LaunchCounters {
    let mut total = Counts::default();
    let mut lines: Vec<LineCounts> = Vec::new();
    for (pc, count) in by_pc.iter().enumerate() {
        if count.lanes == 0 {
            continue;
        }
        let counts = counted(&kernel.code[pc].op, count);
        total.add(&counts);
        let Some(line) = kernel.origins.get(pc).and_then(|o| o.kernel_line) else {
            continue;
        };
        match lines.binary_search_by_key(&line, |l| l.line) {
            Ok(at) => lines[at].counts.add(&counts),
            Err(at) => lines.insert(at, LineCounts { line, counts }),
        }
    }
    LaunchCounters {
        kernel: kernel.name.clone(),
        grid: shape.grid,
        block: shape.block,
        shared: kernel.static_shared,
        dynamic_shared: u64::from(shape.dynamic_shared),
        registers: kernel.declared_registers,
        total,
        lines,
    }
}

/// Counts the launches that follow (`on` 1) or stops counting them (0):
/// the course's host code calls it (found with `dlsym`) around the launch
/// whose counters it shows. Named in `kernels::emulator_counters`.
#[unsafe(no_mangle)]
pub extern "C" fn cuda_course_emulator_count(on: u32) {
    ASKED.store(on != 0, Ordering::Relaxed);
}

/// Writes the lines of the launches counted since the last call to `out`
/// and forgets them, where they fit in `capacity` bytes; returns their
/// length either way (ask with a null `out` to learn it).
///
/// # Safety
/// `out` is null or points to `capacity` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuda_course_emulator_counted(out: *mut c_char, capacity: usize) -> usize {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let len = kept.len();
    if !out.is_null() && len <= capacity {
        // SAFETY: `out` has `capacity` >= `len` writable bytes (the
        // contract), and `kept` is a distinct buffer of `len` bytes.
        unsafe { std::ptr::copy_nonoverlapping(kept.as_ptr(), out.cast::<u8>(), len) };
        kept.clear();
    }
    len
}
