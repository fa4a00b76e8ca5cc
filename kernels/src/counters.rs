//! `--counters`: the CPU emulator asked to count what a GPU's profiler
//! would for the kernel's first launch (the untimed warm-up), and what it
//! counted kept for the report (`crate::emulator_counters` defines the
//! counters and their lines). The emulator's two entry points are found
//! with `dlsym`; a GPU's driver (or the broker's client) has none, and
//! there `ncu` is what measures them.

use std::ffi::{c_char, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::emulator_counters::{COUNT_SYMBOL, COUNTED_SYMBOL, LaunchCounters};

/// Whether this run asked for counters.
static ASKED: AtomicBool = AtomicBool::new(false);
/// What the emulator counted for this run.
static COUNTED: Mutex<Vec<LaunchCounters>> = Mutex::new(Vec::new());

/// What a run that asked for counters has.
#[derive(Debug, Clone, PartialEq)]
pub enum Counted {
    /// The driver is not the emulator (a GPU's, or the grader's broker's
    /// client, whose backend may be either): only the emulator counts here;
    /// on a GPU, counters come from `ncu`.
    NotTheEmulator,
    /// The emulator's counts of the launches it counted (none where the
    /// exercise's launches do not go through the course's timing).
    Launches(Vec<LaunchCounters>),
}

/// Starts a run: counters asked for or not, nothing counted yet.
pub fn ask(on: bool) {
    ASKED.store(on, Ordering::Relaxed);
    COUNTED.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// What this run counted, where it asked; None where it did not.
pub fn counted() -> Option<Counted> {
    if !ASKED.load(Ordering::Relaxed) {
        return None;
    }
    let Some((_, _)) = entry_points() else {
        return Some(Counted::NotTheEmulator);
    };
    let launches = std::mem::take(&mut *COUNTED.lock().unwrap_or_else(|e| e.into_inner()));
    Some(Counted::Launches(launches))
}

/// Runs `launch` (one launch and its wait) counted, where this run asked
/// and the driver is the emulator; otherwise only runs it.
pub(crate) fn counting<T>(launch: impl FnOnce() -> T) -> T {
    let found = ASKED.load(Ordering::Relaxed).then(entry_points).flatten();
    let Some((count, take)) = found else {
        return launch();
    };
    // SAFETY: the emulator defines both with these signatures
    // (emulator/src/driver/counters.rs).
    unsafe { count(1) };
    let result = launch();
    // SAFETY: as above.
    unsafe { count(0) };
    let text = taken(take);
    COUNTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(LaunchCounters::parse_all(&text));
    result
}

type Count = unsafe extern "C" fn(u32);
/// An entry point that hands over what the emulator kept (its counters'
/// lines, or `crate::accesses`' recordings).
pub(crate) type Take = unsafe extern "C" fn(*mut c_char, usize) -> usize;

/// The emulator's entry points, where the driver loaded is the emulator.
fn entry_points() -> Option<(Count, Take)> {
    let (count, take) = (lookup(COUNT_SYMBOL)?, lookup(COUNTED_SYMBOL)?);
    // SAFETY: the emulator defines these symbols with these signatures
    // (`crate::emulator_counters` names them, and what they take).
    unsafe {
        Some((
            std::mem::transmute::<*mut c_void, Count>(count),
            std::mem::transmute::<*mut c_void, Take>(take),
        ))
    }
}

/// The address of `symbol` in this process, where something loaded
/// defines it: the emulator's entry points, which a GPU's driver lacks.
pub(crate) fn lookup(symbol: &std::ffi::CStr) -> Option<*mut c_void> {
    unsafe extern "C" {
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
    // SAFETY: dlsym with RTLD_DEFAULT (null on glibc) and a NUL-terminated
    // name only looks the symbol up.
    let found = unsafe { dlsym(std::ptr::null_mut(), symbol.as_ptr()) };
    (!found.is_null()).then_some(found)
}

/// The lines the emulator kept, taken from it.
pub(crate) fn taken(take: Take) -> String {
    // SAFETY: a null buffer only asks for the length.
    let mut len = unsafe { take(std::ptr::null_mut(), 0) };
    loop {
        let mut buffer = vec![0u8; len];
        // SAFETY: `buffer` has `len` writable bytes.
        let needed = unsafe { take(buffer.as_mut_ptr().cast(), buffer.len()) };
        if needed <= len {
            buffer.truncate(needed);
            return String::from_utf8_lossy(&buffer).into_owned();
        }
        // Another launch was counted in between: ask again.
        len = needed;
    }
}
