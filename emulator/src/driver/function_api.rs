//! A kernel's attributes: what `cuFuncGetAttribute` reports of it, and the
//! one a program may raise, the dynamic shared memory its launches may ask
//! for beyond 48 KiB.
//!
//! # Safety
//! Every function here is called from C with the driver API's contract:
//! out-pointers are null or writable.

use std::ffi::{c_int, c_void};

use super::codes::{self, CuResult};
use super::state::{self, write_out};
use crate::device;

/// `CUfunction_attribute` numbers.
const MAX_THREADS_PER_BLOCK: c_int = 0;
const SHARED_SIZE_BYTES: c_int = 1;
const CONST_SIZE_BYTES: c_int = 2;
const LOCAL_SIZE_BYTES: c_int = 3;
const NUM_REGS: c_int = 4;
const PTX_VERSION: c_int = 5;
const BINARY_VERSION: c_int = 6;
const CACHE_MODE_CA: c_int = 7;
const MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
const PREFERRED_SHARED_MEMORY_CARVEOUT: c_int = 9;

/// Registers per thread reported for every kernel: ptxas allocates them on
/// a GPU, and the emulator has no ptxas, so it reports a number that lets
/// any block of 1024 threads launch (65536 / 1024), and never refuses a
/// launch for registers.
pub const REPORTED_REGISTERS: c_int = 64;

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncGetAttribute(
    value: *mut c_int,
    attribute: c_int,
    function: *mut c_void,
) -> CuResult {
    state::with_driver("cuFuncGetAttribute", |driver| {
        let function = driver.function(function)?;
        let kernel = &function.kernel;
        let answer = match attribute {
            MAX_THREADS_PER_BLOCK => kernel.max_threads_per_block() as c_int,
            SHARED_SIZE_BYTES => kernel.static_shared as c_int,
            CONST_SIZE_BYTES => 0,
            LOCAL_SIZE_BYTES => kernel.local_bytes as c_int,
            NUM_REGS => REPORTED_REGISTERS,
            PTX_VERSION => kernel.ptx_version as c_int,
            BINARY_VERSION => (device::COMPUTE.0 * 10 + device::COMPUTE.1) as c_int,
            CACHE_MODE_CA => 0,
            MAX_DYNAMIC_SHARED_SIZE_BYTES => function.max_dynamic_shared as c_int,
            PREFERRED_SHARED_MEMORY_CARVEOUT => -1,
            _ => return Err(codes::INVALID_VALUE),
        };
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(value, answer) }
    })
}

/// Raises or lowers the dynamic shared memory a kernel's launches may ask
/// for, up to the device's opt-in maximum less its static shared memory;
/// the carveout preference is accepted and has no effect.
///
/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncSetAttribute(
    function: *mut c_void,
    attribute: c_int,
    value: c_int,
) -> CuResult {
    state::with_driver("cuFuncSetAttribute", |driver| {
        let function = driver.function(function)?;
        match attribute {
            MAX_DYNAMIC_SHARED_SIZE_BYTES => {
                let most =
                    device::SHARED_PER_BLOCK_OPTIN as i64 - function.kernel.static_shared as i64;
                if value < 0 || i64::from(value) > most {
                    return Err(codes::INVALID_VALUE);
                }
                function.max_dynamic_shared = value as u32;
                Ok(())
            }
            PREFERRED_SHARED_MEMORY_CARVEOUT if (-1..=100).contains(&value) => Ok(()),
            _ => Err(codes::INVALID_VALUE),
        }
    })
}
