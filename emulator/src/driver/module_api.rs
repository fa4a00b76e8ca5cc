//! Loading PTX, looking up kernels and variables, and launching kernels.
//!
//! # Safety
//! Every function here is called from C with the driver API's contract:
//! out-pointers are null or writable, strings are NUL-terminated, and
//! `kernelParams` holds one pointer per kernel parameter, each to a value of
//! that parameter's size.

use kernels::emulator_output::{CARRY_ON_VARIABLE, FINDING_PREFIX, STATS_VARIABLE};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::Arc;
use std::time::Instant;

use super::codes::{self, CuResult};
use super::state::{self, Driver, Function, write_out};
use super::{accesses, counters, fault, launch};
use crate::exec::launch::Shape;
use crate::module::Module;

/// Reads the NUL-terminated text at `ptr`.
///
/// # Safety
/// `ptr` is null or a NUL-terminated string.
unsafe fn text<'a>(ptr: *const c_void) -> Result<&'a str, CuResult> {
    if ptr.is_null() {
        return Err(codes::INVALID_VALUE);
    }
    // SAFETY: per this function's contract.
    let text = unsafe { CStr::from_ptr(ptr.cast()) };
    text.to_str().map_err(|_| codes::INVALID_IMAGE)
}

fn load(driver: &mut Driver, image: &str) -> Result<usize, CuResult> {
    driver.flush_printf();
    let module = Module::load(image, &mut driver.heap).map_err(|message| {
        eprintln!("{FINDING_PREFIX}{}", fault::unloadable(&message));
        codes::INVALID_PTX
    })?;
    let handle = driver.handle();
    driver.modules.insert(handle, Arc::new(module));
    Ok(handle)
}

/// # Safety
/// See the module's contract; `image` is PTX text.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(
    module: *mut *mut c_void,
    image: *const c_void,
) -> CuResult {
    state::with_driver("cuModuleLoadData", |driver| {
        // SAFETY: the image is a NUL-terminated PTX text, per the contract.
        let image = unsafe { text(image) }?;
        let handle = load(driver, image)?;
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(module, handle as *mut c_void) }
    })
}

/// JIT options are accepted and ignored: there is no JIT.
///
/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut *mut c_void,
    image: *const c_void,
    _options: c_uint,
    _option_kinds: *mut c_int,
    _option_values: *mut *mut c_void,
) -> CuResult {
    // SAFETY: same contract as cuModuleLoadData.
    unsafe { cuModuleLoadData(module, image) }
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleUnload(module: *mut c_void) -> CuResult {
    state::with_driver("cuModuleUnload", |driver| {
        driver.flush_printf();
        let module = driver
            .modules
            .remove(&(module as usize))
            .ok_or(codes::INVALID_HANDLE)?;
        for &(address, _) in module.globals.values() {
            driver.heap.free(address);
        }
        Ok(())
    })
}

/// # Safety
/// See the module's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunction(
    function: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> CuResult {
    state::with_driver("cuModuleGetFunction", |driver| {
        // SAFETY: a NUL-terminated name, per the contract.
        let name = unsafe { text(name.cast()) }?;
        let module = driver
            .modules
            .get(&(module as usize))
            .ok_or(codes::INVALID_HANDLE)?;
        let index = module.kernel(name).ok_or(codes::NOT_FOUND)?;
        let kernel = Arc::clone(&module.kernels[index]);
        // A kernel the emulator cannot run all of is refused here, before it
        // runs, naming what it cannot run.
        if let Some(first) = kernel.unsupported.first() {
            let at = kernel.unsupported_at.first().map(String::as_str);
            eprintln!("{FINDING_PREFIX}{}", fault::cannot_run(name, first, at));
            return Err(codes::NOT_SUPPORTED);
        }
        let handle = driver.handle();
        driver.functions.insert(handle, Function::new(kernel));
        // SAFETY: the caller's out-pointer, per the module's contract.
        unsafe { write_out(function, handle as *mut c_void) }
    })
}

/// # Safety
/// See the module's contract; either out-pointer may be null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(
    address: *mut u64,
    bytes: *mut usize,
    module: *mut c_void,
    name: *const c_char,
) -> CuResult {
    state::with_driver("cuModuleGetGlobal_v2", |driver| {
        // SAFETY: a NUL-terminated name, per the contract.
        let name = unsafe { text(name.cast()) }?;
        let module = driver
            .modules
            .get(&(module as usize))
            .ok_or(codes::INVALID_HANDLE)?;
        let &(at, size) = module.globals.get(name).ok_or(codes::NOT_FOUND)?;
        // SAFETY: the caller's out-pointers, per the module's contract;
        // null ones are skipped as the driver does.
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

/// Runs the kernel to its end before returning: streams are in order and
/// work runs when issued. A fault is reported on stderr and returned (and
/// stays, as on a GPU).
///
/// # Safety
/// See the module's contract.
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
    _stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    state::with_driver("cuLaunchKernel", |driver| {
        let function = driver.function(function)?;
        let kernel = Arc::clone(&function.kernel);
        let dynamic_limit = Some(function.max_dynamic_shared);
        if !extra.is_null() || (params.is_null() && !kernel.params.is_empty()) {
            return Err(codes::INVALID_VALUE);
        }
        let mut buffer = vec![0u8; kernel.param_bytes];
        for (i, &(offset, size)) in kernel.params.iter().enumerate() {
            // SAFETY: `params` has one pointer per parameter, each to `size`
            // readable bytes, per the contract.
            unsafe {
                let value = params.add(i).read();
                if value.is_null() {
                    return Err(codes::INVALID_VALUE);
                }
                std::ptr::copy_nonoverlapping(
                    value.cast::<u8>(),
                    buffer[offset..].as_mut_ptr(),
                    size,
                );
            }
        }
        let shape = Shape {
            grid: [grid_x, grid_y, grid_z],
            block: [block_x, block_y, block_z],
            dynamic_shared: shared_bytes,
            dynamic_limit,
        };
        driver.flush_printf();
        let started = Instant::now();
        let carry_on = std::env::var(CARRY_ON_VARIABLE).is_ok_and(|v| v == "1");
        let count = counters::wanted();
        let record = accesses::wanted();
        let result = launch::run(
            &kernel,
            shape,
            buffer,
            driver.heap.snapshot(),
            carry_on,
            count,
            record,
        );
        let (printed, findings) = match &result {
            Ok(report) => (&report.printed, &report.findings),
            Err(fault) => (&fault.printed, &fault.findings),
        };
        driver.printed.extend_from_slice(printed);
        for finding in findings {
            eprintln!("{FINDING_PREFIX}{finding}");
        }
        match result {
            Ok(report) => {
                // Recording counts too (its hook is counting's): the counts
                // go on only where counting was asked.
                if let Some(by_pc) = report.counts.as_ref().filter(|_| count) {
                    counters::hand_on(&counters::launch_counters(&kernel, shape, by_pc));
                }
                if let Some(recorded) = &report.recorded {
                    accesses::hand_on(&accesses::launch_accesses(&kernel, shape, recorded));
                }
                if std::env::var_os(STATS_VARIABLE).is_some() {
                    let seconds = started.elapsed().as_secs_f64();
                    eprintln!(
                        "{FINDING_PREFIX}kernel `{}`: {} thread-instructions in {:.3} s, {:.3} CPU s \
                         ({:.0} million per CPU second)",
                        kernel.name,
                        report.executed,
                        seconds,
                        report.cpu_seconds,
                        report.executed as f64 / report.cpu_seconds.max(1e-9) / 1e6
                    );
                }
                Ok(())
            }
            Err(fault) => {
                eprintln!("{FINDING_PREFIX}{}", fault.finding);
                Err(fault.code)
            }
        }
    })
}
