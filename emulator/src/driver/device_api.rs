//! Start-up, the one emulated device, its primary context, versions and
//! error names.
//!
//! # Safety
//! Every function here is called from C with the driver API's contract: each
//! out-pointer is null or points to writable memory of its type, and each
//! string pointer is a NUL-terminated string.

use std::ffi::{c_char, c_int, c_uint, c_void};

use super::codes::{self, CuResult};
use super::state::{self, write_out};
use crate::device;
use crate::heap::TOTAL_BYTES;

/// What `cuDeviceGetName` answers: it says plainly that this is no GPU.
pub const DEVICE_NAME: &str = "cuda-course CPU emulator";
/// The driver API version reported (CUDA 12.0).
const DRIVER_VERSION: c_int = 12000;
/// The primary context's handle: there is one device and one context.
const PRIMARY_CONTEXT: usize = 0xc0;

/// The emulated device's attributes, by `CUdevice_attribute` number: a small
/// compute capability 7.5 device with 2 multiprocessors, so the course's
/// default grids stay small on a CPU.
fn attribute(number: c_int) -> Option<c_int> {
    let int = |v: u32| v as c_int;
    Some(match number {
        1 => int(device::MAX_THREADS_PER_BLOCK),
        2..=4 => int(device::MAX_BLOCK[number as usize - 2]),
        5..=7 => int(device::MAX_GRID[number as usize - 5]),
        8 => int(device::SHARED_PER_BLOCK),
        9 => 64 * 1024, // constant memory
        10 => int(device::WARP_SIZE),
        11 => i32::MAX, // max pitch
        12 => int(device::REGISTERS_PER_BLOCK),
        13 => 1_000_000, // clock rate, kHz
        14 => 512,       // texture alignment
        15 => 1,         // gpu overlap
        16 => int(device::MULTIPROCESSORS),
        19 => 1,               // can map host memory
        31 => 1,               // concurrent kernels
        36 => 1_000_000,       // memory clock rate, kHz
        37 => 256,             // memory bus width, bits
        38 => 4 * 1024 * 1024, // L2 cache
        39 => 1024,            // max threads per multiprocessor (sm_75)
        40 => 1,               // async engines
        41 => 1,               // unified addressing
        75 => int(device::COMPUTE.0),
        76 => int(device::COMPUTE.1),
        81 => int(device::SHARED_PER_MULTIPROCESSOR),
        82 => int(device::REGISTERS_PER_BLOCK),
        97 => int(device::SHARED_PER_BLOCK_OPTIN),
        106 => 16, // max blocks per multiprocessor
        0 | 141.. => return None,
        _ => 0,
    })
}

/// `CUDA_VISIBLE_DEVICES` hides the device unless it lists device 0 first,
/// as it hides GPUs from the real driver (tests use `""` to mean "no GPU").
fn hidden_by_environment() -> bool {
    std::env::var("CUDA_VISIBLE_DEVICES")
        .is_ok_and(|list| list.split(',').next().map(str::trim) != Some("0"))
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CuResult {
    if flags != 0 {
        return codes::INVALID_VALUE;
    }
    if hidden_by_environment() {
        return codes::NO_DEVICE;
    }
    state::initialize()
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CuResult {
    // SAFETY: the caller's out-pointer, per the module's contract.
    state::stateless("cuDriverGetVersion", || unsafe {
        write_out(version, DRIVER_VERSION)
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CuResult {
    // SAFETY: the caller's out-pointer, per the module's contract.
    state::with_device("cuDeviceGetCount", |_| unsafe { write_out(count, 1) })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(device: *mut c_int, ordinal: c_int) -> CuResult {
    state::with_device("cuDeviceGet", |_| {
        if ordinal != 0 {
            return Err(codes::INVALID_DEVICE);
        }
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(device, 0) }
    })
}

fn check_device(device: c_int) -> Result<(), CuResult> {
    if device == 0 {
        Ok(())
    } else {
        Err(codes::INVALID_DEVICE)
    }
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    value: *mut c_int,
    number: c_int,
    device: c_int,
) -> CuResult {
    state::with_device("cuDeviceGetAttribute", |_| {
        check_device(device)?;
        let answer = attribute(number).ok_or(codes::INVALID_VALUE)?;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(value, answer) }
    })
}

/// # Safety
/// See the module's contract; `name` has room for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, device: c_int) -> CuResult {
    state::with_device("cuDeviceGetName", |_| {
        check_device(device)?;
        if name.is_null() || len <= 0 {
            return Err(codes::INVALID_VALUE);
        }
        let bytes = DEVICE_NAME.as_bytes();
        let n = bytes.len().min(len as usize - 1);
        // SAFETY: `name` has room for `len` > n bytes, per the contract.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), name.cast(), n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: c_int) -> CuResult {
    state::with_device("cuDeviceTotalMem_v2", |_| {
        check_device(device)?;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(bytes, TOTAL_BYTES as usize) }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(
    context: *mut *mut c_void,
    device: c_int,
) -> CuResult {
    state::with_driver("cuDevicePrimaryCtxRetain", |_| {
        check_device(device)?;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(context, PRIMARY_CONTEXT as *mut c_void) }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(device: c_int) -> CuResult {
    state::with_driver("cuDevicePrimaryCtxRelease_v2", |driver| {
        driver.flush_printf();
        check_device(device)
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSetCurrent(context: *mut c_void) -> CuResult {
    state::with_driver("cuCtxSetCurrent", |_| match context as usize {
        0 | PRIMARY_CONTEXT => Ok(()),
        _ => Err(codes::INVALID_CONTEXT),
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCurrent(context: *mut *mut c_void) -> CuResult {
    // SAFETY: the caller's out-pointer, per the module's contract.
    state::with_driver("cuCtxGetCurrent", |_| unsafe {
        write_out(context, PRIMARY_CONTEXT as *mut c_void)
    })
}

/// Work runs when it is issued, so there is never anything to wait for.
///
/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSynchronize() -> CuResult {
    state::with_driver("cuCtxSynchronize", |driver| {
        driver.flush_printf();
        Ok(())
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(code: CuResult, text: *mut *const c_char) -> CuResult {
    state::stateless("cuGetErrorName", || {
        let (name, _) = codes::describe(code).ok_or(codes::INVALID_VALUE)?;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(text, name.as_ptr().cast()) }
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(code: CuResult, text: *mut *const c_char) -> CuResult {
    state::stateless("cuGetErrorString", || {
        let (_, description) = codes::describe(code).ok_or(codes::INVALID_VALUE)?;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(text, description.as_ptr().cast()) }
    })
}
