//! What a profiler's pictures show, as the driver hands it on: whether a
//! launch records (the course's host code asking through
//! [`cuda_course_emulator_record`], naming the output buffer), a launch's
//! recording (`exec::schedule::accesses`) turned into
//! `kernels::emulator_accesses`' typed launch, and kept for
//! [`cuda_course_emulator_recorded`]. The same channel as the counters'
//! (`driver::counters`): entry points the host finds with `dlsym`.

use std::ffi::c_char;
use std::sync::Mutex;

use kernels::emulator_accesses::{Kind, Lane, LaunchAccesses, Output, Space, WarpAccess};

use crate::exec::launch::Shape;
use crate::exec::schedule::accesses::{self, Ask, Recorded};
use crate::ir::{Kernel, Op};

/// Recording asked for by the host code, for the launches that follow.
static ASKED: Mutex<Option<Ask>> = Mutex::new(None);
/// The lines of launches recorded while asked, until taken.
static KEPT: Mutex<String> = Mutex::new(String::new());

/// What the next launch records, if anything.
pub fn wanted() -> Option<Ask> {
    *ASKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps a recorded launch for the host code.
pub fn hand_on(launch: &LaunchAccesses) {
    KEPT.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push_str(&launch.to_string());
}

/// A launch of `kernel` over `shape`, its recording read by `kernel.cu`
/// line: each memory instruction of warp 0, its lanes in order.
pub fn launch_accesses(kernel: &Kernel, shape: Shape, recorded: &Recorded) -> LaunchAccesses {
    let mut by_pc: Vec<&accesses::LaneAccess> = recorded.warp.iter().collect();
    by_pc.sort_by_key(|a| (a.pc, a.shared, a.lane));
    let mut warp = Vec::new();
    for group in by_pc.chunk_by(|a, b| (a.pc, a.shared) == (b.pc, b.shared)) {
        let first = group[0];
        let kind = match kernel.code.get(first.pc as usize).map(|i| &i.op) {
            Some(Op::Load { .. }) => Kind::Load,
            Some(Op::Store { .. }) => Kind::Store,
            Some(Op::Atomic { .. }) => Kind::Atomic,
            _ => continue,
        };
        warp.push(WarpAccess {
            line: kernel
                .origins
                .get(first.pc as usize)
                .and_then(|o| o.kernel_line),
            space: if first.shared {
                Space::Shared
            } else {
                Space::Global
            },
            kind,
            bytes: group.iter().map(|a| u32::from(a.bytes)).max().unwrap_or(0),
            lanes: group
                .iter()
                .map(|a| Lane {
                    lane: a.lane,
                    address: a.address,
                })
                .collect(),
        });
    }
    let output = recorded.output.as_ref().map(|(output, writers)| {
        let writers: Vec<Option<u64>> = writers.iter().map(|w| w.map(u64::from)).collect();
        Output::from_writers(output.element_bytes, &writers)
    });
    LaunchAccesses {
        kernel: kernel.name.clone(),
        grid: shape.grid,
        block: shape.block,
        warp,
        output,
    }
}

/// Records the launches that follow (`on` 1) or stops recording them (0):
/// the course's host code calls it (found with `dlsym`) around the launch
/// it draws, naming the buffer the kernel writes its answer to (`output`,
/// `output_bytes` long, in elements of `element_bytes`; 0 bytes: none).
/// Named in `kernels::emulator_accesses`.
#[unsafe(no_mangle)]
pub extern "C" fn cuda_course_emulator_record(
    on: u32,
    output: u64,
    output_bytes: u64,
    element_bytes: u32,
) {
    let ask = (on != 0).then(|| Ask {
        output: (output_bytes > 0 && element_bytes > 0).then_some(accesses::Output {
            base: output,
            bytes: output_bytes,
            element_bytes,
        }),
    });
    *ASKED.lock().unwrap_or_else(|e| e.into_inner()) = ask;
}

/// Writes the lines of the launches recorded since the last call to `out`
/// and forgets them, where they fit in `capacity` bytes; returns their
/// length either way (ask with a null `out` to learn it).
///
/// # Safety
/// `out` is null or points to `capacity` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuda_course_emulator_recorded(out: *mut c_char, capacity: usize) -> usize {
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
