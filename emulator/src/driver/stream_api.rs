//! Streams and events. Work runs when it is issued, so every stream is
//! already in order and complete; events record the host clock, so elapsed
//! times are the emulator's own (CPU) times, not a GPU's.
//!
//! # Safety
//! Every function here is called from C with the driver API's contract:
//! out-pointers are null or writable.

use std::ffi::{c_int, c_uint, c_void};
use std::time::Instant;

use super::codes::{self, CuResult};
use super::state::{self, Driver, write_out};

fn check_stream(driver: &Driver, stream: *mut c_void) -> Result<(), CuResult> {
    let handle = stream as usize;
    // 0 is the default stream, 1 and 2 the legacy and per-thread ones.
    if handle <= 2 || driver.streams.contains(&handle) {
        Ok(())
    } else {
        Err(codes::INVALID_HANDLE)
    }
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut *mut c_void, _flags: c_uint) -> CuResult {
    state::with_driver("cuStreamCreate", |driver| {
        let handle = driver.handle();
        driver.streams.push(handle);
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(stream, handle as *mut c_void) }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    stream: *mut *mut c_void,
    flags: c_uint,
    _priority: c_int,
) -> CuResult {
    // SAFETY: same contract.
    unsafe { cuStreamCreate(stream, flags) }
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: *mut c_void) -> CuResult {
    state::with_driver("cuStreamDestroy_v2", |driver| {
        let before = driver.streams.len();
        driver.streams.retain(|&s| s != stream as usize);
        if driver.streams.len() == before {
            Err(codes::INVALID_HANDLE)
        } else {
            Ok(())
        }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamSynchronize(stream: *mut c_void) -> CuResult {
    state::with_driver("cuStreamSynchronize", |driver| {
        driver.flush_printf();
        check_stream(driver, stream)
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamQuery(stream: *mut c_void) -> CuResult {
    state::with_driver("cuStreamQuery", |driver| check_stream(driver, stream))
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamWaitEvent(
    stream: *mut c_void,
    event: *mut c_void,
    _flags: c_uint,
) -> CuResult {
    state::with_driver("cuStreamWaitEvent", |driver| {
        check_stream(driver, stream)?;
        driver
            .events
            .get(&(event as usize))
            .map(|_| ())
            .ok_or(codes::INVALID_HANDLE)
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(event: *mut *mut c_void, _flags: c_uint) -> CuResult {
    state::with_driver("cuEventCreate", |driver| {
        let handle = driver.handle();
        driver.events.insert(handle, None);
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(event, handle as *mut c_void) }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventDestroy_v2(event: *mut c_void) -> CuResult {
    state::with_driver("cuEventDestroy_v2", |driver| {
        driver
            .events
            .remove(&(event as usize))
            .map(|_| ())
            .ok_or(codes::INVALID_HANDLE)
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventRecord(event: *mut c_void, stream: *mut c_void) -> CuResult {
    state::with_driver("cuEventRecord", |driver| {
        check_stream(driver, stream)?;
        let slot = driver
            .events
            .get_mut(&(event as usize))
            .ok_or(codes::INVALID_HANDLE)?;
        *slot = Some(Instant::now());
        Ok(())
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventSynchronize(event: *mut c_void) -> CuResult {
    state::with_driver("cuEventSynchronize", |driver| {
        driver.flush_printf();
        driver
            .events
            .get(&(event as usize))
            .map(|_| ())
            .ok_or(codes::INVALID_HANDLE)
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventQuery(event: *mut c_void) -> CuResult {
    // SAFETY: same contract.
    unsafe { cuEventSynchronize(event) }
}

/// Milliseconds between two recorded events, measured on the host clock
/// while the emulator ran the work between them.
///
/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> CuResult {
    state::with_driver("cuEventElapsedTime", |driver| {
        let at = |e: *mut c_void| {
            driver
                .events
                .get(&(e as usize))
                .copied()
                .ok_or(codes::INVALID_HANDLE)
        };
        let (Some(start), Some(end)) = (at(start)?, at(end)?) else {
            return Err(codes::INVALID_HANDLE);
        };
        let elapsed = end.saturating_duration_since(start).as_secs_f64() * 1e3;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(ms, elapsed as f32) }
    })
}
