//! The driver's state behind one lock, and the guard every exported function
//! runs its body in: initialised or not, sticky errors, and panics caught so
//! none crosses the C boundary.

use kernels::emulator_output::FINDING_PREFIX;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::codes::{self, CuResult};
use crate::heap::Heap;
use crate::ir::Kernel;
use crate::module::Module;

/// Everything the emulated driver holds.
#[derive(Default)]
pub struct Driver {
    pub initialized: bool,
    /// The first fault of a launch: every later call returns it, as a GPU
    /// context is unusable after one.
    pub sticky: Option<CuResult>,
    pub heap: Heap,
    pub modules: HashMap<usize, Arc<Module>>,
    /// Function handle -> its kernel and attributes.
    pub functions: HashMap<usize, Function>,
    /// Event handle -> when it was last recorded.
    pub events: HashMap<usize, Option<Instant>>,
    pub streams: Vec<usize>,
    /// Pinned host buffers: address -> length.
    pub host_buffers: HashMap<usize, usize>,
    /// What kernels printed and the host has not synchronised with yet.
    pub printed: Vec<u8>,
    next_handle: usize,
}

/// A kernel as `cuModuleGetFunction` hands it out, with the attribute a
/// program may set on it.
pub struct Function {
    pub kernel: Arc<Kernel>,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: dynamic shared
    /// memory a launch may ask for.
    pub max_dynamic_shared: u32,
}

impl Function {
    pub fn new(kernel: Arc<Kernel>) -> Function {
        let max_dynamic_shared =
            crate::device::SHARED_PER_BLOCK.saturating_sub(kernel.static_shared as u32);
        Function {
            kernel,
            max_dynamic_shared,
        }
    }
}

impl Driver {
    /// Writes what kernels printed to standard output, as a GPU's driver
    /// does when the host synchronises (cuCtxSynchronize and the like, a
    /// blocking copy, loading or unloading a module, a launch, releasing
    /// the context).
    pub fn flush_printf(&mut self) {
        let mut rest = &self.printed[..];
        while !rest.is_empty() {
            // SAFETY: `rest` is a live byte slice of its length.
            let written = unsafe { libc::write(1, rest.as_ptr().cast(), rest.len()) };
            if written <= 0 {
                break;
            }
            rest = &rest[written as usize..];
        }
        self.printed.clear();
    }

    /// The function a `CUfunction` handle names.
    pub fn function(&mut self, handle: *mut std::ffi::c_void) -> Result<&mut Function, CuResult> {
        self.functions
            .get_mut(&(handle as usize))
            .ok_or(codes::INVALID_HANDLE)
    }

    /// A fresh non-null handle value.
    pub fn handle(&mut self) -> usize {
        self.next_handle += 1;
        self.next_handle << 4
    }
}

static DRIVER: Mutex<Option<Driver>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<Driver>> {
    // A panic inside a guarded call leaves the state as consistent as the
    // call left it; carry on rather than fail every later call.
    DRIVER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `body` with no lock and no state: the calls that work before
/// `cuInit` (versions, error names). A panic becomes `CUDA_ERROR_UNKNOWN`.
pub fn stateless(name: &str, body: impl FnOnce() -> Result<(), CuResult>) -> CuResult {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => codes::SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => internal_error(name),
    }
}

/// Runs `body` on the initialised driver: `CUDA_ERROR_NOT_INITIALIZED`
/// before `cuInit`, the sticky error after a fault, `CUDA_ERROR_UNKNOWN`
/// after a panic. A sticky code `body` returns stays for later calls.
pub fn with_driver(name: &str, body: impl FnOnce(&mut Driver) -> Result<(), CuResult>) -> CuResult {
    guarded(name, true, body)
}

/// Runs `body` as `with_driver` does, but after a fault too: the device's
/// name and attributes stay readable when its context is not, as on a GPU.
pub fn with_device(name: &str, body: impl FnOnce(&mut Driver) -> Result<(), CuResult>) -> CuResult {
    guarded(name, false, body)
}

fn guarded(
    name: &str,
    sticky: bool,
    body: impl FnOnce(&mut Driver) -> Result<(), CuResult>,
) -> CuResult {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut guard = lock();
        let driver = guard.get_or_insert_with(Driver::default);
        if !driver.initialized {
            return codes::NOT_INITIALIZED;
        }
        if sticky && let Some(code) = driver.sticky {
            return code;
        }
        match body(driver) {
            Ok(()) => codes::SUCCESS,
            Err(code) => {
                if codes::is_sticky(code) {
                    driver.sticky = Some(code);
                }
                code
            }
        }
    }));
    outcome.unwrap_or_else(|_| internal_error(name))
}

/// `cuInit`: marks the driver initialised.
pub fn initialize() -> CuResult {
    let outcome = catch_unwind(|| {
        let mut guard = lock();
        guard.get_or_insert_with(Driver::default).initialized = true;
    });
    match outcome {
        Ok(()) => codes::SUCCESS,
        Err(_) => internal_error("cuInit"),
    }
}

fn internal_error(name: &str) -> CuResult {
    eprintln!("{FINDING_PREFIX}{}", super::fault::internal(name));
    codes::UNKNOWN
}

/// Writes `value` through `out`, or `CUDA_ERROR_INVALID_VALUE` when the
/// caller passed null.
///
/// # Safety
/// `out` is null or points to a writable `T`, as the driver API requires of
/// its callers' out-pointers.
pub unsafe fn write_out<T>(out: *mut T, value: T) -> Result<(), CuResult> {
    if out.is_null() {
        return Err(codes::INVALID_VALUE);
    }
    // SAFETY: non-null, and writable per this function's contract.
    unsafe { out.write(value) };
    Ok(())
}
