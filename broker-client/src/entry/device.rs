//! Start-up, the device, the context, versions and error texts. The
//! broker owns the one context; the program sees device 0 and a token.

#![expect(
    clippy::missing_safety_doc,
    reason = "each entry point has the driver's contract (cuda.h), stated in `entry`"
)]

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::Mutex;

use kernels::broker_wire::{Reply, Request};

use crate::codes::{CuResult, INVALID_VALUE, NO_DEVICE, local_text};
use crate::connection::{Fault, unexpected, with};
use crate::ffi::{handle, token, write_out};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CuResult {
    with(|c| c.done(&Request::Init { flags }))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CuResult {
    with(|c| {
        let v = c.int(&Request::DriverGetVersion)?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(version, v as c_int) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CuResult {
    with(|c| {
        let n = c.int(&Request::DeviceGetCount)?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(count, n as c_int) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(device: *mut c_int, ordinal: c_int) -> CuResult {
    with(|c| {
        let d = c.int(&Request::DeviceGet { ordinal })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(device, d as c_int) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    value: *mut c_int,
    attribute: c_int,
    device: c_int,
) -> CuResult {
    with(|c| {
        let v = c.int(&Request::DeviceGetAttribute { attribute, device })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(value, v as c_int) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, device: c_int) -> CuResult {
    with(|c| {
        if name.is_null() || len <= 0 {
            return Err(INVALID_VALUE.into());
        }
        let request = Request::DeviceGetName { device };
        let text = match c.ask(&request)? {
            Reply::Text(text) => text,
            other => return Err(unexpected(&request, &other)),
        };
        let n = text.len().min(len as usize - 1);
        // SAFETY: `name` has room for `len` > n bytes, per the contract.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), name.cast(), n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: c_int) -> CuResult {
    with(|c| {
        let total = c.value(&Request::DeviceTotalMem { device })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(bytes, total as usize) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(
    context: *mut *mut c_void,
    device: c_int,
) -> CuResult {
    with(|c| {
        let t = c.value(&Request::PrimaryCtxRetain { device })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(context, handle(t)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(device: c_int) -> CuResult {
    with(|c| c.value(&Request::PrimaryCtxRelease { device }).map(|_| ()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSetCurrent(context: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::CtxSetCurrent {
            context: token(context),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCurrent(context: *mut *mut c_void) -> CuResult {
    with(|c| {
        let t = c.value(&Request::CtxGetCurrent)?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(context, handle(t)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSynchronize() -> CuResult {
    with(|c| c.done(&Request::CtxSynchronize))
}

/// Texts the broker sent, kept for the process's life (C callers keep the
/// pointers): at most one per code and kind, and at most this many.
const MAX_TEXTS: usize = 512;
static TEXTS: Mutex<Vec<(CuResult, bool, &'static CStr)>> = Mutex::new(Vec::new());

/// The driver's name or description of `code`, asked of the broker once;
/// without a broker, the client's own for the codes it returns.
fn error_text(code: CuResult, description: bool, out: *mut *const c_char) -> CuResult {
    let known = |texts: &[(CuResult, bool, &'static CStr)]| {
        texts
            .iter()
            .find(|&&(c, d, _)| c == code && d == description)
            .map(|&(_, _, text)| text)
    };
    let kept = known(&TEXTS.lock().unwrap_or_else(|p| p.into_inner()));
    let mut found = kept;
    let rc = with(|c| {
        if found.is_some() {
            return Ok(());
        }
        let request = Request::ErrorText { code, description };
        let text = match c.ask(&request)? {
            Reply::Text(text) => CString::new(text).map_err(|_| Fault::from(INVALID_VALUE))?,
            other => return Err(unexpected(&request, &other)),
        };
        let mut texts = TEXTS.lock().unwrap_or_else(|p| p.into_inner());
        found = known(&texts).or_else(|| {
            (texts.len() < MAX_TEXTS).then(|| {
                let text: &'static CStr = Box::leak(text.into_boxed_c_str());
                texts.push((code, description, text));
                text
            })
        });
        Ok(())
    });
    let text = match (found, rc) {
        (Some(text), _) => text,
        (None, NO_DEVICE) => match local_text(code, description) {
            Some(text) => text,
            None => return INVALID_VALUE,
        },
        (None, 0) => return INVALID_VALUE,
        (None, rc) => return rc,
    };
    if out.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: the caller's out-pointer, per the contract; non-null.
    unsafe { out.write(text.as_ptr()) };
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(code: CuResult, text: *mut *const c_char) -> CuResult {
    error_text(code, false, text)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(code: CuResult, text: *mut *const c_char) -> CuResult {
    error_text(code, true, text)
}
