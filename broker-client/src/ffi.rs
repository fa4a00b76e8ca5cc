//! What the entry points share at the C boundary: out-pointers, strings
//! read with a bound, handles as the broker's tokens.

use std::ffi::{c_char, c_void};

use crate::codes::INVALID_VALUE;
use crate::connection::{Fault, refuse};

/// Writes `value` through `out`; a null out-pointer is
/// `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
/// `out` is null or points to a writable `T` (the driver API's contract).
pub unsafe fn write_out<T>(out: *mut T, value: T) -> Result<(), Fault> {
    if out.is_null() {
        return Err(INVALID_VALUE.into());
    }
    // SAFETY: non-null and writable, per the contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Refuses a null out-pointer before the broker is asked (so nothing is
/// made that the program could never free).
pub fn needs<T>(out: *mut T) -> Result<(), Fault> {
    if out.is_null() {
        Err(INVALID_VALUE.into())
    } else {
        Ok(())
    }
}

/// The bytes of the NUL-terminated string at `text`, at most `max`.
///
/// # Safety
/// `text` is null or points to readable bytes up to a NUL or `max + 1`
/// bytes, whichever comes first.
pub unsafe fn c_bytes<'a>(text: *const c_char, max: usize, what: &str) -> Result<&'a [u8], Fault> {
    if text.is_null() {
        return Err(INVALID_VALUE.into());
    }
    let mut length = 0;
    // SAFETY: per the contract, each byte up to the NUL (or max) is readable.
    while unsafe { *text.add(length) } != 0 {
        length += 1;
        if length > max {
            return Err(refuse(
                INVALID_VALUE,
                &format!("the {what} is longer than the broker takes ({max} bytes)"),
            ));
        }
    }
    // SAFETY: `length` readable bytes, per the loop above.
    Ok(unsafe { std::slice::from_raw_parts(text.cast(), length) })
}

/// A name: a NUL-terminated UTF-8 string of at most `max` bytes.
///
/// # Safety
/// As [`c_bytes`].
pub unsafe fn c_name(text: *const c_char, max: usize) -> Result<String, Fault> {
    // SAFETY: per this function's contract.
    let bytes = unsafe { c_bytes(text, max, "name") }?;
    String::from_utf8(bytes.to_vec()).map_err(|_| crate::codes::NOT_FOUND.into())
}

/// A handle the program holds, as the broker's token.
pub fn token(handle: *mut c_void) -> u64 {
    handle as usize as u64
}

/// A token as the handle the program holds.
pub fn handle(token: u64) -> *mut c_void {
    token as usize as *mut c_void
}
