//! The broker's cost, measured: N round trips of a cheap call, small and
//! large copies (pageable and page-locked) and empty launches, through
//! whichever `libcuda.so.1` the loader finds first (the real driver, the
//! emulator, or the client in front of a broker), after a warm-up, the
//! median of several runs. Run it both ways and subtract.

use std::ffi::{c_char, c_void};
use std::path::Path;
use std::ptr::null_mut;
use std::time::Instant;

use crate::driver::{CuResult, entry_points, open_library};

type Ptr = *mut c_void;

entry_points! {
    cuInit(u32);
    cuDeviceGet(*mut i32, i32);
    cuDevicePrimaryCtxRetain(*mut Ptr, i32);
    cuCtxSetCurrent(Ptr);
    cuDeviceGetAttribute(*mut i32, i32, i32);
    cuMemAlloc_v2(*mut u64, usize);
    cuMemAllocHost_v2(*mut Ptr, usize);
    cuMemcpyHtoD_v2(u64, *const c_void, usize);
    cuMemcpyDtoH_v2(*mut c_void, u64, usize);
    cuMemcpyHtoDAsync_v2(u64, *const c_void, usize, Ptr);
    cuStreamCreate(*mut Ptr, u32);
    cuStreamSynchronize(Ptr);
    cuModuleLoadData(*mut Ptr, *const c_void);
    cuModuleGetFunction(*mut Ptr, Ptr, *const c_char);
    cuLaunchKernel(Ptr, u32, u32, u32, u32, u32, u32, u32, Ptr, *mut *mut c_void, *mut *mut c_void);
}

/// A kernel that does nothing: a launch's cost and nothing else.
const EMPTY: &std::ffi::CStr =
    c".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry empty()\n{\n\tret;\n}\n";

/// Bytes of the large copies: the broker's staging area's size.
const LARGE: usize = kernels::broker_wire::STAGING_BYTES;

/// One measurement: its name and its median per unit of work.
pub struct Measured {
    pub name: &'static str,
    pub median_us: f64,
    pub min_us: f64,
}

fn check(rc: CuResult, what: &str) -> Result<(), String> {
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{what} failed with CUresult {rc}"))
    }
}

/// What the measurements use, made once.
struct Setup {
    api: Api,
    device: i32,
    device_memory: u64,
    pinned: Ptr,
    pageable: Vec<u8>,
    stream: Ptr,
    empty: Ptr,
}

impl Setup {
    /// # Safety
    /// `library` is a live `dlopen` handle of a CUDA driver.
    unsafe fn new(library: *mut c_void) -> Result<Setup, String> {
        // SAFETY: per this function's contract.
        let api = unsafe { Api::load(library) }?;
        let (mut device, mut context, mut stream, mut module, mut empty) =
            (0, null_mut(), null_mut(), null_mut(), null_mut());
        let (mut device_memory, mut pinned) = (0u64, null_mut());
        // SAFETY: the driver's entry points with out-pointers to locals.
        unsafe {
            check((api.cuInit)(0), "cuInit")?;
            check((api.cuDeviceGet)(&mut device, 0), "cuDeviceGet")?;
            check(
                (api.cuDevicePrimaryCtxRetain)(&mut context, device),
                "cuDevicePrimaryCtxRetain",
            )?;
            check((api.cuCtxSetCurrent)(context), "cuCtxSetCurrent")?;
            check(
                (api.cuMemAlloc_v2)(&mut device_memory, LARGE),
                "cuMemAlloc_v2",
            )?;
            check(
                (api.cuMemAllocHost_v2)(&mut pinned, LARGE),
                "cuMemAllocHost_v2",
            )?;
            check((api.cuStreamCreate)(&mut stream, 1), "cuStreamCreate")?;
            check(
                (api.cuModuleLoadData)(&mut module, EMPTY.as_ptr().cast()),
                "cuModuleLoadData",
            )?;
            check(
                (api.cuModuleGetFunction)(&mut empty, module, c"empty".as_ptr()),
                "cuModuleGetFunction",
            )?;
        }
        Ok(Setup {
            api,
            device,
            device_memory,
            pinned,
            pageable: vec![1; LARGE],
            stream,
            empty,
        })
    }

    /// One unit of the measurement `name`.
    fn unit(&mut self, name: &str) -> CuResult {
        let api = &self.api;
        let (d, s) = (self.device_memory, self.stream);
        let host = self.pageable.as_mut_ptr().cast::<c_void>();
        let launch = || {
            // SAFETY: an empty kernel with no parameters, on our stream.
            unsafe {
                (api.cuLaunchKernel)(self.empty, 1, 1, 1, 1, 1, 1, 0, s, null_mut(), null_mut())
            }
        };
        let mut value = 0;
        // SAFETY: the driver's entry points on buffers of LARGE bytes that
        // live as long as `self`.
        unsafe {
            match name {
                "attribute" => (api.cuDeviceGetAttribute)(&mut value, 16, self.device),
                "htod-4B-pageable" => (api.cuMemcpyHtoD_v2)(d, host, 4),
                "dtoh-4B-pageable" => (api.cuMemcpyDtoH_v2)(host, d, 4),
                "htod-4B-pinned-async+sync" => {
                    let rc = (api.cuMemcpyHtoDAsync_v2)(d, self.pinned, 4, s);
                    if rc == 0 {
                        (api.cuStreamSynchronize)(s)
                    } else {
                        rc
                    }
                }
                "launch-empty" => launch(),
                "launch-empty+sync" => match launch() {
                    0 => (api.cuStreamSynchronize)(s),
                    rc => rc,
                },
                "htod-16MiB-pageable" => (api.cuMemcpyHtoD_v2)(d, host, LARGE),
                "dtoh-16MiB-pageable" => (api.cuMemcpyDtoH_v2)(host, d, LARGE),
                "htod-16MiB-pinned" => (api.cuMemcpyHtoD_v2)(d, self.pinned, LARGE),
                _ => 1,
            }
        }
    }

    fn synchronize(&self) -> CuResult {
        // SAFETY: our own stream.
        unsafe { (self.api.cuStreamSynchronize)(self.stream) }
    }
}

/// Every measurement, with how many units a run of `calls` makes of it
/// (the large copies far fewer).
const MEASURES: [(&str, usize); 9] = [
    ("attribute", 1),
    ("htod-4B-pageable", 1),
    ("dtoh-4B-pageable", 1),
    ("htod-4B-pinned-async+sync", 1),
    ("launch-empty", 1),
    ("launch-empty+sync", 1),
    ("htod-16MiB-pageable", 200),
    ("dtoh-16MiB-pageable", 200),
    ("htod-16MiB-pinned", 200),
];

/// Measures through the `libcuda.so.1` at `library`: `runs` runs of
/// `calls` units each (after a warm-up of a tenth), per unit.
pub fn measure(library: &Path, calls: usize, runs: usize) -> Result<Vec<Measured>, String> {
    let handle = open_library(library)?;
    // SAFETY: a live handle of what the loader found as the driver.
    let mut setup = unsafe { Setup::new(handle) }?;
    let mut out = Vec::new();
    for (name, divisor) in MEASURES {
        let units = (calls / divisor).max(2);
        let mut times = Vec::with_capacity(runs);
        for run in 0..=runs {
            let n = if run == 0 { (units / 10).max(1) } else { units };
            let started = Instant::now();
            for _ in 0..n {
                check(setup.unit(name), name)?;
            }
            check(setup.synchronize(), "cuStreamSynchronize")?;
            let per_unit = started.elapsed().as_secs_f64() * 1e6 / n as f64;
            if run > 0 {
                times.push(per_unit);
            }
        }
        times.sort_by(f64::total_cmp);
        out.push(Measured {
            name,
            median_us: times[times.len() / 2],
            min_us: times[0],
        });
    }
    Ok(out)
}

/// The measurements as one JSON object: name -> median microseconds.
pub fn json(measured: &[Measured]) -> String {
    let fields: Vec<String> = measured
        .iter()
        .map(|m| format!("\"{}\": {:.3}", m.name, m.median_us))
        .collect();
    format!("{{{}}}", fields.join(", "))
}
