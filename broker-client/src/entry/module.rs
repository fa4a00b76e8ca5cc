//! Modules, kernels and launches. The broker answers each function with
//! its parameters' sizes (read from the PTX); a launch reads exactly those
//! bytes behind each `kernelParams` pointer and sends them packed.

#![expect(
    clippy::missing_safety_doc,
    reason = "each entry point has the driver's contract (cuda.h), stated in `entry`"
)]

use std::ffi::{c_char, c_int, c_uint, c_void};

use kernels::broker_wire::{MAX_IMAGE_BYTES, MAX_NAME_BYTES, Reply, Request};

use crate::codes::{CuResult, INVALID_HANDLE, INVALID_VALUE, NOT_SUPPORTED};
use crate::connection::{Connection, Fault, Function, refuse, unexpected, with};
use crate::ffi::{c_bytes, c_name, handle, needs, token, write_out};

/// The first bytes of the images the broker does not load: an ELF cubin,
/// a fat binary.
const BINARY_IMAGES: [&[u8]; 2] = [b"\x7fELF", &[0x50, 0xed, 0x55, 0xba]];

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(
    module: *mut *mut c_void,
    image: *const c_void,
) -> CuResult {
    with(|c| {
        needs(module)?;
        // SAFETY: a PTX image is NUL-terminated text, per the contract; a
        // cubin or fat binary has a NUL within its first bytes.
        let text = unsafe { c_bytes(image.cast(), MAX_IMAGE_BYTES, "PTX") }?;
        if BINARY_IMAGES.iter().any(|magic| text.starts_with(magic)) {
            let why = "the GPU broker loads PTX text only, not a cubin or fat binary";
            return Err(refuse(NOT_SUPPORTED, why));
        }
        let t = c.value(&Request::ModuleLoad {
            image: text.to_vec(),
        })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(module, handle(t)) }
    })
}

/// JIT options are not passed on: the broker loads the PTX as it is.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut *mut c_void,
    image: *const c_void,
    _options: c_uint,
    _option_kinds: *mut c_int,
    _option_values: *mut *mut c_void,
) -> CuResult {
    // SAFETY: the same contract.
    unsafe { cuModuleLoadData(module, image) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleUnload(module: *mut c_void) -> CuResult {
    with(|c| {
        let module = token(module);
        c.done(&Request::ModuleUnload { module })?;
        c.functions.retain(|_, f| f.module != module);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunction(
    function: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> CuResult {
    with(|c| {
        needs(function)?;
        // SAFETY: a NUL-terminated name, per the contract.
        let name = unsafe { c_name(name, MAX_NAME_BYTES) }?;
        let module = token(module);
        let request = Request::ModuleGetFunction { module, name };
        let (t, params) = match c.ask(&request)? {
            Reply::Function { function, params } => (function, params),
            other => return Err(unexpected(&request, &other)),
        };
        let sizes = params.iter().map(|p| p.size).collect();
        c.functions.insert(t, Function { module, sizes });
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(function, handle(t)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(
    address: *mut u64,
    bytes: *mut usize,
    module: *mut c_void,
    name: *const c_char,
) -> CuResult {
    with(|c| {
        // SAFETY: a NUL-terminated name, per the contract.
        let name = unsafe { c_name(name, MAX_NAME_BYTES) }?;
        let module = token(module);
        let (at, size) = c.pair(&Request::ModuleGetGlobal { module, name })?;
        // SAFETY: the caller's out-pointers, per the contract; null ones
        // are skipped, as the driver does.
        unsafe {
            if !address.is_null() {
                write_out(address, at)?;
            }
            if !bytes.is_null() {
                write_out(bytes, size as usize)?;
            }
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncGetAttribute(
    value: *mut c_int,
    attribute: c_int,
    function: *mut c_void,
) -> CuResult {
    with(|c| {
        let function = token(function);
        let v = c.int(&Request::FuncGetAttribute {
            function,
            attribute,
        })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(value, v as c_int) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncSetAttribute(
    function: *mut c_void,
    attribute: c_int,
    value: c_int,
) -> CuResult {
    with(|c| {
        let function = token(function);
        c.done(&Request::FuncSetAttribute {
            function,
            attribute,
            value,
        })
    })
}

/// Each parameter's bytes, as many as the PTX declares, packed.
///
/// # Safety
/// `params` is null or holds one pointer per size in `sizes`, each to
/// that many readable bytes.
unsafe fn packed(params: *mut *mut c_void, sizes: &[u32]) -> Result<Vec<u8>, Fault> {
    if params.is_null() && !sizes.is_empty() {
        return Err(INVALID_VALUE.into());
    }
    let mut packed = Vec::with_capacity(sizes.iter().map(|&s| s as usize).sum());
    for (i, &size) in sizes.iter().enumerate() {
        // SAFETY: one pointer per parameter, per the contract.
        let value = unsafe { params.add(i).read() };
        if value.is_null() {
            return Err(INVALID_VALUE.into());
        }
        // SAFETY: `size` readable bytes behind it, per the contract.
        packed.extend_from_slice(unsafe {
            std::slice::from_raw_parts(value.cast::<u8>(), size as usize)
        });
    }
    Ok(packed)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchKernel(
    function: *mut c_void,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_bytes: c_uint,
    stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    with(|c: &mut Connection| {
        if !extra.is_null() {
            let why = "cuLaunchKernel's `extra` parameters are not supported through the GPU broker; pass kernelParams";
            return Err(refuse(INVALID_VALUE, why));
        }
        let function = token(function);
        let sizes = &c.functions.get(&function).ok_or(INVALID_HANDLE)?.sizes;
        // SAFETY: the launch's parameters, per the contract.
        let params = unsafe { packed(params, sizes) }?;
        c.done(&Request::Launch {
            function,
            grid: [grid_x, grid_y, grid_z],
            block: [block_x, block_y, block_z],
            shared: shared_bytes,
            stream: token(stream),
            params,
        })
    })
}
