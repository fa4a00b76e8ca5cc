//! Device allocations, copies and memsets, and pinned host buffers (the
//! driver's, and the caller's own it registers). Work runs when it is
//! issued, so the async forms are the synchronous ones in stream order.
//!
//! # Safety
//! Every function here is called from C with the driver API's contract:
//! out-pointers are null or writable, host pointers cover the byte counts
//! given. Device addresses are checked against the allocations.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ffi::{c_uchar, c_uint, c_void};
use std::sync::{Mutex, MutexGuard};

use super::codes::{self, CuResult};
use super::state::{self, Driver, write_out};

type DevicePtr = u64;
type Stream = *mut c_void;

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(out: *mut DevicePtr, bytes: usize) -> CuResult {
    state::with_driver("cuMemAlloc_v2", |driver| {
        if bytes == 0 {
            return Err(codes::INVALID_VALUE);
        }
        let base = driver
            .heap
            .allocate(bytes as u64, "cuMemAlloc")
            .ok_or(codes::OUT_OF_MEMORY)?;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(out, base) }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFree_v2(address: DevicePtr) -> CuResult {
    state::with_driver("cuMemFree_v2", |driver| {
        if address == 0 || driver.heap.free(address) {
            Ok(())
        } else {
            Err(codes::INVALID_VALUE)
        }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CuResult {
    state::with_driver("cuMemGetInfo_v2", |driver| {
        // SAFETY: the caller's out-pointers, per the module's contract.
        unsafe {
            write_out(free, driver.heap.free_bytes() as usize)?;
            write_out(total, crate::heap::TOTAL_BYTES as usize)
        }
    })
}

/// `bytes` device bytes at `address`, all inside one allocation.
fn device_range(driver: &Driver, address: DevicePtr, bytes: usize) -> Result<*mut u8, CuResult> {
    driver
        .heap
        .range(address, bytes as u64)
        .ok_or(codes::INVALID_VALUE)
}

/// As `device_range`, for bytes the call writes: initialised from now on.
fn device_destination(
    driver: &Driver,
    address: DevicePtr,
    bytes: usize,
) -> Result<*mut u8, CuResult> {
    driver
        .heap
        .range_to_write(address, bytes as u64)
        .ok_or(codes::INVALID_VALUE)
}

fn copy(
    name: &str,
    bytes: usize,
    ends: impl FnOnce(&Driver) -> Result<(*const u8, *mut u8), CuResult>,
) -> CuResult {
    state::with_driver(name, |driver| {
        // A blocking copy waits for the kernels before it, whose printf
        // output comes out then.
        driver.flush_printf();
        if bytes == 0 {
            return Ok(());
        }
        let (from, to) = ends(driver)?;
        // SAFETY: device ends are checked against their allocation; host ends
        // cover `bytes` per the module's contract; `ptr::copy` allows overlap.
        unsafe { std::ptr::copy(from, to, bytes) };
        Ok(())
    })
}

fn host_ptr<T>(ptr: *const T) -> Result<*const u8, CuResult> {
    if ptr.is_null() {
        Err(codes::INVALID_VALUE)
    } else {
        Ok(ptr.cast())
    }
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dst: DevicePtr,
    src: *const c_void,
    bytes: usize,
) -> CuResult {
    copy("cuMemcpyHtoD_v2", bytes, |d| {
        Ok((host_ptr(src)?, device_destination(d, dst, bytes)?))
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    dst: *mut c_void,
    src: DevicePtr,
    bytes: usize,
) -> CuResult {
    copy("cuMemcpyDtoH_v2", bytes, |d| {
        Ok((device_range(d, src, bytes)?, host_ptr(dst)?.cast_mut()))
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(dst: DevicePtr, src: DevicePtr, bytes: usize) -> CuResult {
    copy("cuMemcpyDtoD_v2", bytes, |d| {
        Ok((
            device_range(d, src, bytes)?,
            device_destination(d, dst, bytes)?,
        ))
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: DevicePtr,
    src: *const c_void,
    bytes: usize,
    _stream: Stream,
) -> CuResult {
    // SAFETY: same contract as the synchronous copy.
    unsafe { cuMemcpyHtoD_v2(dst, src, bytes) }
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: DevicePtr,
    bytes: usize,
    _stream: Stream,
) -> CuResult {
    // SAFETY: same contract as the synchronous copy.
    unsafe { cuMemcpyDtoH_v2(dst, src, bytes) }
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    _stream: Stream,
) -> CuResult {
    // SAFETY: same contract as the synchronous copy.
    unsafe { cuMemcpyDtoD_v2(dst, src, bytes) }
}

/// Fills `count` elements of `N` bytes at `address` with `pattern`.
fn fill<const N: usize>(
    name: &str,
    address: DevicePtr,
    pattern: [u8; N],
    count: usize,
) -> CuResult {
    state::with_driver(name, |driver| {
        let bytes = count.checked_mul(N).ok_or(codes::INVALID_VALUE)?;
        if bytes == 0 {
            return Ok(());
        }
        if address % N as u64 != 0 {
            return Err(codes::INVALID_VALUE);
        }
        let start = device_destination(driver, address, bytes)?;
        for i in 0..count {
            // SAFETY: element i lies inside the range checked above.
            unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), start.add(i * N), N) };
        }
        Ok(())
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8_v2(
    address: DevicePtr,
    value: c_uchar,
    count: usize,
) -> CuResult {
    fill("cuMemsetD8_v2", address, [value], count)
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD32_v2(
    address: DevicePtr,
    value: c_uint,
    count: usize,
) -> CuResult {
    fill("cuMemsetD32_v2", address, value.to_ne_bytes(), count)
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8Async(
    address: DevicePtr,
    value: c_uchar,
    count: usize,
    _stream: Stream,
) -> CuResult {
    fill("cuMemsetD8Async", address, [value], count)
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD32Async(
    address: DevicePtr,
    value: c_uint,
    count: usize,
    _stream: Stream,
) -> CuResult {
    fill("cuMemsetD32Async", address, value.to_ne_bytes(), count)
}

/// Pinned host memory is ordinary memory here, 4 KiB aligned like pages.
fn host_layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1), 4096).ok()
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocHost_v2(out: *mut *mut c_void, bytes: usize) -> CuResult {
    state::with_driver("cuMemAllocHost_v2", |driver| {
        let layout = host_layout(bytes).ok_or(codes::INVALID_VALUE)?;
        // SAFETY: the layout has a non-zero size.
        let buffer = unsafe { std::alloc::alloc_zeroed(layout) };
        if buffer.is_null() {
            return Err(codes::OUT_OF_MEMORY);
        }
        driver.host_buffers.insert(buffer as usize, bytes);
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(out, buffer.cast()) }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFreeHost(buffer: *mut c_void) -> CuResult {
    state::with_driver("cuMemFreeHost", |driver| {
        let bytes = driver
            .host_buffers
            .remove(&(buffer as usize))
            .ok_or(codes::INVALID_VALUE)?;
        let layout = host_layout(bytes).ok_or(codes::INVALID_VALUE)?;
        // SAFETY: `buffer` came from cuMemAllocHost_v2 with this layout and
        // was removed from the table, so it is freed once.
        unsafe { std::alloc::dealloc(buffer.cast(), layout) };
        Ok(())
    })
}

/// Host ranges `cuMemHostRegister_v2` page-locked: address -> length. Kept
/// apart from `Driver::host_buffers`, which `cuMemFreeHost` frees: these
/// are the caller's memory, and freeing one is refused as on a GPU. (The
/// GPU broker registers the memory it shares with its client.)
static REGISTERED: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

fn registered() -> MutexGuard<'static, BTreeMap<usize, usize>> {
    REGISTERED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Page-locks `bytes` of the caller's memory at `address`: recorded, as
/// the emulator's host memory is all alike. A range that overlaps one
/// already registered is refused.
///
/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostRegister_v2(
    address: *mut c_void,
    bytes: usize,
    _flags: c_uint,
) -> CuResult {
    state::with_driver("cuMemHostRegister_v2", |_| {
        let start = address as usize;
        let end = start.checked_add(bytes).ok_or(codes::INVALID_VALUE)?;
        if start == 0 || bytes == 0 {
            return Err(codes::INVALID_VALUE);
        }
        let mut table = registered();
        let before = table.range(..end).next_back();
        if before.is_some_and(|(&at, &length)| at + length > start) {
            return Err(codes::INVALID_VALUE);
        }
        table.insert(start, bytes);
        Ok(())
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostUnregister(address: *mut c_void) -> CuResult {
    state::with_driver("cuMemHostUnregister", |_| {
        registered()
            .remove(&(address as usize))
            .map(|_| ())
            .ok_or(codes::INVALID_VALUE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_memory_is_the_caller_s_and_registered_once() {
        // SAFETY: the buffer outlives every call; no out-pointers.
        unsafe {
            assert_eq!(super::super::device_api::cuInit(0), codes::SUCCESS);
            let mut buffer = vec![0u8; 8192];
            let at = buffer.as_mut_ptr().cast::<c_void>();
            assert_eq!(cuMemHostRegister_v2(at, 8192, 0), codes::SUCCESS);
            // Overlapping it, freeing it as the driver's, or an empty range.
            let inside = at.cast::<u8>().add(4096).cast();
            assert_eq!(cuMemHostRegister_v2(inside, 16, 0), codes::INVALID_VALUE);
            assert_eq!(cuMemFreeHost(at), codes::INVALID_VALUE);
            assert_eq!(cuMemHostRegister_v2(at, 0, 0), codes::INVALID_VALUE);
            assert_eq!(cuMemHostUnregister(inside), codes::INVALID_VALUE);
            assert_eq!(cuMemHostUnregister(at), codes::SUCCESS);
            assert_eq!(cuMemHostUnregister(at), codes::INVALID_VALUE);
            assert_eq!(cuMemHostRegister_v2(inside, 16, 0), codes::SUCCESS);
            assert_eq!(cuMemHostUnregister(inside), codes::SUCCESS);
        }
    }
}
