//! One case on one driver, in this process: load the PTX, fill the buffers,
//! set the attribute, launch, synchronise, read back. Each driver call's
//! result goes into the record, so a refused launch is an outcome like any
//! other.

use std::ffi::{CString, c_int, c_void};

use crate::driver::{
    ATTRIBUTE_SHARED_OPTIN, CuResult, Driver, FUNC_MAX_DYNAMIC_SHARED, FUNC_STATIC_SHARED, Handle,
};
use crate::record::{Output, Record};
use crate::spec::{Case, Param, Type};

/// Stops the case at a failed step: the record ends there.
struct Stopped;

fn step(driver: &Driver, record: &mut Record, name: &str, code: CuResult) -> Result<(), Stopped> {
    record.steps.push((name.to_string(), driver.name(code)));
    if code == 0 { Ok(()) } else { Err(Stopped) }
}

/// Runs `case` from `ptx`. Setup failures that are no part of the case
/// (no device, no memory) are errors.
pub fn run(driver: &Driver, ptx: &str, case: &Case) -> Result<Record, String> {
    let mut record = Record {
        name: case.name.clone(),
        ..Record::default()
    };
    // SAFETY: out-pointers to locals; the context stays current for the
    // process.
    unsafe {
        let setup = |what: &str, code: CuResult| {
            if code == 0 {
                Ok(())
            } else {
                Err(format!("{what}: {}", driver.name(code)))
            }
        };
        setup("cuInit", (driver.cuInit)(0))?;
        let mut device = 0;
        setup("cuDeviceGet", (driver.cuDeviceGet)(&mut device, 0))?;
        let mut context: Handle = std::ptr::null_mut();
        setup(
            "cuDevicePrimaryCtxRetain",
            (driver.cuDevicePrimaryCtxRetain)(&mut context, device),
        )?;
        setup("cuCtxSetCurrent", (driver.cuCtxSetCurrent)(context))?;
    }
    let _ = launch(driver, ptx, case, &mut record)?;
    Ok(record)
}

fn launch(
    driver: &Driver,
    ptx: &str,
    case: &Case,
    record: &mut Record,
) -> Result<Result<(), Stopped>, String> {
    let module = match driver.load(ptx) {
        Ok(module) => {
            record.steps.push(("load".into(), driver.name(0)));
            module
        }
        Err(code) => return Ok(step(driver, record, "load", code)),
    };
    let name = CString::new(case.kernel.as_str()).map_err(|_| "a kernel name with a NUL")?;
    let mut function: Handle = std::ptr::null_mut();
    // SAFETY: out-pointer to a local, a module handle the driver returned.
    let code = unsafe { (driver.cuModuleGetFunction)(&mut function, module, name.as_ptr()) };
    if code != 0 {
        return Ok(step(driver, record, "function", code));
    }

    // Shared-memory sizes as this device and kernel make them.
    let mut optin: c_int = 0;
    let mut fixed: c_int = 0;
    // SAFETY: out-pointers to locals.
    unsafe {
        (driver.cuDeviceGetAttribute)(&mut optin, ATTRIBUTE_SHARED_OPTIN, 0);
        (driver.cuFuncGetAttribute)(&mut fixed, FUNC_STATIC_SHARED, function);
    }
    let (optin, fixed) = (i64::from(optin), i64::from(fixed));

    for global in case.globals.iter().filter(|g| g.init.is_some()) {
        let bytes = global
            .init
            .as_ref()
            .map(|g| g.fill(global.ty, global.count))
            .unwrap_or_default();
        let address = global_address(driver, module, &global.name)?;
        // SAFETY: `bytes` is a live host buffer of its length.
        let code = unsafe { (driver.cuMemcpyHtoD_v2)(address, bytes.as_ptr().cast(), bytes.len()) };
        if code != 0 {
            return Err(format!("setting {}: {}", global.name, driver.name(code)));
        }
    }

    // Buffers and values, each parameter's bytes in `values`.
    let mut buffers: Vec<Option<(u64, Type, usize)>> = Vec::new();
    let mut values: Vec<Vec<u8>> = Vec::new();
    for param in &case.params {
        match param {
            Param::Buffer {
                ty, count, init, ..
            } => {
                let bytes = init.fill(*ty, *count);
                let mut address = 0u64;
                // SAFETY: out-pointer to a local; `bytes` is a live buffer.
                unsafe {
                    let code = (driver.cuMemAlloc_v2)(&mut address, bytes.len().max(1));
                    if code != 0 {
                        return Err(format!("cuMemAlloc: {}", driver.name(code)));
                    }
                    if !bytes.is_empty() {
                        let code =
                            (driver.cuMemcpyHtoD_v2)(address, bytes.as_ptr().cast(), bytes.len());
                        if code != 0 {
                            return Err(format!("cuMemcpyHtoD: {}", driver.name(code)));
                        }
                    }
                }
                buffers.push(Some((address, *ty, *count)));
                values.push(address.to_le_bytes().to_vec());
            }
            Param::Value(bytes) => {
                buffers.push(None);
                values.push(bytes.clone());
            }
        }
    }

    if let Some(size) = case.max_dynamic {
        let bytes = size.resolve(optin, fixed);
        // SAFETY: a function handle the driver returned.
        let code = unsafe {
            (driver.cuFuncSetAttribute)(function, FUNC_MAX_DYNAMIC_SHARED, bytes as c_int)
        };
        record.steps.push(("setattr".into(), driver.name(code)));
    }
    let dynamic = case.dynamic.resolve(optin, fixed);
    let mut pointers: Vec<*mut c_void> = values
        .iter_mut()
        .map(|v| v.as_mut_ptr().cast::<c_void>())
        .collect();
    let [gx, gy, gz] = case.grid;
    let [bx, by, bz] = case.block;
    // SAFETY: one pointer per parameter, each to a value of its size.
    let code = unsafe {
        (driver.cuLaunchKernel)(
            function,
            gx,
            gy,
            gz,
            bx,
            by,
            bz,
            dynamic,
            std::ptr::null_mut(),
            pointers.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    // A refused launch is the case's outcome; synchronise anyway, as a
    // program would, to see that the context is still usable.
    record.steps.push(("launch".into(), driver.name(code)));
    // SAFETY: no arguments.
    let code = unsafe { (driver.cuCtxSynchronize)() };
    if let Err(stopped) = step(driver, record, "sync", code) {
        return Ok(Err(stopped));
    }

    for (index, buffer) in buffers.iter().enumerate() {
        let Some((address, ty, count)) = *buffer else {
            continue;
        };
        let Param::Buffer {
            compare: Some(_), ..
        } = case.params[index]
        else {
            continue;
        };
        record.outputs.push(Output {
            label: index.to_string(),
            ty,
            bits: read_back(driver, address, ty, count)?,
        });
    }
    for global in case.globals.iter().filter(|g| g.compare.is_some()) {
        let address = global_address(driver, module, &global.name)?;
        record.outputs.push(Output {
            label: global.name.clone(),
            ty: global.ty,
            bits: read_back(driver, address, global.ty, global.count)?,
        });
    }
    Ok(Ok(()))
}

fn global_address(driver: &Driver, module: Handle, name: &str) -> Result<u64, String> {
    let symbol = CString::new(name).map_err(|_| "a variable name with a NUL")?;
    let mut address = 0u64;
    let mut bytes = 0usize;
    // SAFETY: out-pointers to locals, a module handle the driver returned.
    let code =
        unsafe { (driver.cuModuleGetGlobal_v2)(&mut address, &mut bytes, module, symbol.as_ptr()) };
    if code != 0 {
        return Err(format!("cuModuleGetGlobal {name}: {}", driver.name(code)));
    }
    Ok(address)
}

fn read_back(driver: &Driver, address: u64, ty: Type, count: usize) -> Result<Vec<u64>, String> {
    let mut bytes = vec![0u8; ty.size() * count];
    if !bytes.is_empty() {
        // SAFETY: `bytes` is a live host buffer of its length.
        let code =
            unsafe { (driver.cuMemcpyDtoH_v2)(bytes.as_mut_ptr().cast(), address, bytes.len()) };
        if code != 0 {
            return Err(format!("cuMemcpyDtoH: {}", driver.name(code)));
        }
    }
    Ok(bytes
        .chunks(ty.size())
        .map(|chunk| {
            let mut wide = [0u8; 8];
            wide[..chunk.len()].copy_from_slice(chunk);
            u64::from_le_bytes(wide)
        })
        .collect())
}
