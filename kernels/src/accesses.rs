//! `--accesses FILE`: the CPU emulator asked to record, for the kernel's
//! first launch (the untimed warm-up, the one `--counters` counts), what a
//! profiler's pictures show: warp 0's accesses lane by lane and which
//! block wrote each element of the output (`crate::emulator_accesses`
//! defines the recording; `crate::access_picture` draws it). The same
//! channel as `crate::counters`: the emulator's entry points, found with
//! `dlsym`; a GPU's driver has none, and there no picture is drawn.

use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::counters::{Take, lookup, taken};
use crate::emulator_accesses::{LaunchAccesses, RECORD_SYMBOL, RECORDED_SYMBOL};

/// Whether this run asked for the picture.
static ASKED: AtomicBool = AtomicBool::new(false);
/// What the emulator recorded for this run.
static RECORDED: Mutex<Vec<LaunchAccesses>> = Mutex::new(Vec::new());

/// What a run that asked for the picture has.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// The driver is a GPU's: nothing records accesses there.
    OnGpu,
    /// The emulator's recordings of the launches it recorded (none where
    /// the exercise's launches do not go through the course's timing).
    Launches(Vec<LaunchAccesses>),
}

/// Starts a run: the picture asked for or not, nothing recorded yet.
pub fn ask(on: bool) {
    ASKED.store(on, Ordering::Relaxed);
    RECORDED.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// What this run recorded, where it asked; None where it did not.
pub fn recorded() -> Option<Recorded> {
    if !ASKED.load(Ordering::Relaxed) {
        return None;
    }
    if entry_points().is_none() {
        return Some(Recorded::OnGpu);
    }
    let launches = std::mem::take(&mut *RECORDED.lock().unwrap_or_else(|e| e.into_inner()));
    Some(Recorded::Launches(launches))
}

/// The kernel's output buffer, as the emulator is told it: its device
/// address, its length in bytes and its elements' size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutputBuffer {
    pub address: u64,
    pub bytes: u64,
    pub element_bytes: u32,
}

/// Runs `launch` (one launch and its wait) recorded, with `output` named,
/// where this run asked and the driver is the emulator; otherwise only
/// runs it.
pub(crate) fn recording<T>(output: Option<OutputBuffer>, launch: impl FnOnce() -> T) -> T {
    let found = ASKED.load(Ordering::Relaxed).then(entry_points).flatten();
    let Some((record, take)) = found else {
        return launch();
    };
    let output = output.unwrap_or(OutputBuffer {
        address: 0,
        bytes: 0,
        element_bytes: 0,
    });
    // SAFETY: the emulator defines both with these signatures
    // (emulator/src/driver/accesses.rs).
    unsafe { record(1, output.address, output.bytes, output.element_bytes) };
    let result = launch();
    // SAFETY: as above.
    unsafe { record(0, 0, 0, 0) };
    let text = taken(take);
    RECORDED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(LaunchAccesses::parse_all(&text));
    result
}

type Record = unsafe extern "C" fn(u32, u64, u64, u32);

/// The emulator's entry points, where the driver loaded is the emulator.
fn entry_points() -> Option<(Record, Take)> {
    let (record, take) = (lookup(RECORD_SYMBOL)?, lookup(RECORDED_SYMBOL)?);
    // SAFETY: the emulator defines these symbols with these signatures
    // (`crate::emulator_accesses` names them, and what they take).
    unsafe {
        Some((
            std::mem::transmute::<*mut c_void, Record>(record),
            std::mem::transmute::<*mut c_void, Take>(take),
        ))
    }
}
