//! The GPU an exercise runs on: driver start-up, the context, what the device
//! is, loading PTX, and the stream the exercise works in.

use std::ffi::CString;
use std::sync::OnceLock;

use cust::CudaApiVersion;
use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use cust::sys::{self, cudaError_enum as Code};

use crate::error::{self, CourseError};
use crate::grader_names::{INPUTS_ON_GPU, KERNEL_PTX_ENV};
use crate::launch::Residency;
use crate::protocol::DeviceInfo;
use crate::units;
use crate::which_driver;

/// GPU 0 with its context and one stream. Fields drop in order: the stream
/// before the context it belongs to (none in a batch, whose runs share the
/// process's).
pub struct Gpu {
    stream: Stream,
    _context: Option<Context>,
    info: DeviceInfo,
    residency: Residency,
    max_threads_per_block: u32,
    compute: (i32, i32),
    driver: (i32, i32),
}

impl Gpu {
    /// Starts the driver and makes GPU 0 current. Without a GPU or driver, the
    /// error says so and what to do instead.
    pub fn init() -> Result<Gpu, CourseError> {
        // SAFETY: cuInit's only argument is its flags, which must be 0.
        let code = unsafe { sys::cuInit(0) };
        if code != Code::CUDA_SUCCESS {
            return Err(error::no_gpu(code));
        }
        let during = |what: &'static str| move |err: CudaError| CourseError::from(err).during(what);
        let device = Device::get_device(0).map_err(during("opening GPU 0"))?;
        let context = if crate::batch::active() {
            // The batch's runs share one context (`crate::batch`): made once,
            // current for the rest of the process.
            static SHARED: OnceLock<Context> = OnceLock::new();
            match SHARED.get() {
                Some(shared) => CurrentContext::set_current(shared)
                    .map_err(during("making the batch's context current"))?,
                None => {
                    let made =
                        Context::new(device).map_err(during("creating a context on GPU 0"))?;
                    let _ = SHARED.set(made);
                }
            }
            None
        } else {
            Some(Context::new(device).map_err(during("creating a context on GPU 0"))?)
        };
        // A blocking stream: it waits for the synchronous copies that cust
        // issues on the default stream, so events on it bracket those too.
        let stream =
            Stream::new(StreamFlags::DEFAULT, None).map_err(during("creating a stream"))?;
        let attribute = |attr| {
            device
                .get_attribute(attr)
                .map_err(during("reading device attributes"))
        };
        let compute = (
            attribute(DeviceAttribute::ComputeCapabilityMajor)?,
            attribute(DeviceAttribute::ComputeCapabilityMinor)?,
        );
        let residency = Residency {
            multiprocessors: attribute(DeviceAttribute::MultiprocessorCount)? as u32,
            max_threads_per_multiprocessor: attribute(DeviceAttribute::MaxThreadsPerMultiprocessor)?
                as u32,
            max_blocks_per_multiprocessor: max_blocks_per_multiprocessor(device)
                .map_err(during("reading device attributes"))?,
        };
        let max_threads_per_block = attribute(DeviceAttribute::MaxThreadsPerBlock)? as u32;
        let version = CudaApiVersion::get().map_err(during("reading the driver version"))?;
        let driver = (version.major(), version.minor());
        let info = DeviceInfo {
            name: device.name().map_err(during("reading the device name"))?,
            compute_capability: format!("{}.{}", compute.0, compute.1),
            multiprocessors: residency.multiprocessors,
            memory_bytes: device
                .total_memory()
                .map_err(during("reading the memory size"))? as u64,
            driver_cuda_version: format!("{}.{}", driver.0, driver.1),
        };
        Ok(Gpu {
            stream,
            _context: context,
            info,
            residency,
            max_threads_per_block,
            compute,
            driver,
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// What the default launch grids are sized from.
    pub fn residency(&self) -> Residency {
        self.residency
    }

    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads_per_block
    }

    /// `--threads` must fit in one block of this GPU.
    pub fn check_block(&self, threads: u32) -> Result<(), CourseError> {
        if threads <= self.max_threads_per_block {
            return Ok(());
        }
        Err(CourseError::BadArguments(format!(
            "--threads {threads} is more than this GPU allows in a block ({})",
            self.max_threads_per_block
        )))
    }

    /// The stream every step of the exercise runs in.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Bytes of device memory free right now.
    pub fn free_memory(&self) -> Result<u64, CourseError> {
        let (free, _total) = cust::memory::mem_get_info()
            .map_err(|err| CourseError::from(err).during("reading free memory"))?;
        Ok(free as u64)
    }

    /// `needed` bytes must fit in free memory: a size that does not is a bad
    /// argument, said before anything is allocated. `what` names the flag
    /// and the buffers, e.g. "--n 1000 (a, b and c)".
    pub fn check_fits(&self, needed: u64, what: &str) -> Result<(), CourseError> {
        let free = self.free_memory()?;
        if needed <= free {
            return Ok(());
        }
        Err(CourseError::BadArguments(format!(
            "{what} needs {} of GPU memory, but {} has {} free; choose a smaller size",
            units::bytes(needed),
            self.info.name,
            units::bytes(free),
        )))
    }

    /// Loads PTX (JIT-compiling it for this GPU): the binary's own, or the
    /// file [`KERNEL_PTX_ENV`] names. A PTX the driver refuses gets a
    /// message saying why and what to change.
    pub fn load_module(&self, ptx: &str) -> Result<Module, CourseError> {
        let replacement = kernel_ptx_override()?;
        self.load_ptx(replacement.as_deref().unwrap_or(ptx))
    }

    /// Loads `ptx` itself, whatever [`KERNEL_PTX_ENV`]
    /// says: the text [`named_ptx`] read.
    pub(crate) fn load_ptx(&self, ptx: &str) -> Result<Module, CourseError> {
        Module::from_ptx(ptx, &[]).map_err(|err| self.diagnose_load(ptx, err))
    }

    fn diagnose_load(&self, ptx: &str, err: CudaError) -> CourseError {
        // cust reports "PTX too new" and a few others as UnknownError; loading
        // once more without cust recovers the driver's own code.
        let code = match err {
            CudaError::UnknownError => raw_load(ptx),
            _ => None,
        };
        let ptx_codes = [
            Code::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            Code::CUDA_ERROR_NO_BINARY_FOR_GPU,
            Code::CUDA_ERROR_INVALID_PTX,
            Code::CUDA_ERROR_INVALID_IMAGE,
            Code::CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
            Code::CUDA_ERROR_JIT_COMPILATION_DISABLED,
        ];
        let code = code.or_else(|| error::raw_code(err));
        match code {
            Some(code) if ptx_codes.contains(&code) => {
                error::ptx_rejected(code, ptx, self.compute, self.driver)
            }
            _ => CourseError::from(err).during("loading the kernel's PTX"),
        }
    }
}

/// The PTX [`KERNEL_PTX_ENV`] names, read, or None when it is not set.
fn kernel_ptx_override() -> Result<Option<String>, CourseError> {
    let Some(path) = std::env::var_os(KERNEL_PTX_ENV) else {
        return Ok(None);
    };
    std::fs::read_to_string(&path).map(Some).map_err(|err| {
        CourseError::BadArguments(format!(
            "{KERNEL_PTX_ENV} names {}, which could not be read ({err}); \
             unset it to run the kernel this binary was built with",
            std::path::Path::new(&path).display()
        ))
    })
}

/// The PTX [`KERNEL_PTX_ENV`] names, read before
/// the GPU is started, for `--inputs-on-gpu`: it runs the student's kernel
/// in the course's host code and nothing else, so without the variable it
/// is a bad argument.
pub(crate) fn named_ptx() -> Result<String, CourseError> {
    let flag = INPUTS_ON_GPU;
    kernel_ptx_override()?.ok_or_else(|| {
        CourseError::BadArguments(format!(
            "--{flag} runs the kernel {KERNEL_PTX_ENV} names (the grader's runs above 2^31 \
             elements), and it is not set; set it to a PTX file, or leave --{flag} out"
        ))
    })
}

/// Resident blocks an SM holds at most (16 to 32 by architecture). cust 0.3's
/// attribute list predates it, so it is read from libcuda directly.
fn max_blocks_per_multiprocessor(device: Device) -> Result<u32, CudaError> {
    let mut value = 0;
    // SAFETY: `value` is a valid place for the driver to write one int, and
    // `device` is a handle the driver gave out.
    let code = unsafe {
        sys::cuDeviceGetAttribute(
            &mut value,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
            device.as_raw(),
        )
    };
    match code {
        Code::CUDA_SUCCESS => Ok(value.max(1) as u32),
        other => Err(error::raw_code_error(other)),
    }
}

/// The driver's code for loading `ptx`, straight from libcuda.
fn raw_load(ptx: &str) -> Option<Code> {
    let image = CString::new(ptx).ok()?;
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is a NUL-terminated PTX string that outlives the call,
    // and `module` is a valid place for the driver to write the handle.
    let code = unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr().cast()) };
    if code == Code::CUDA_SUCCESS {
        // SAFETY: the driver just created this module and nothing else holds it.
        unsafe { sys::cuModuleUnload(module) };
    }
    Some(code)
}

/// An exercise's default size: `gpu` on a GPU, the smaller `emulator` on the
/// CPU emulator (the report's header then says the sizes are the emulator's).
pub fn default_size<T>(gpu: T, emulator: T) -> T {
    if which_driver::is_emulator() {
        emulator
    } else {
        gpu
    }
}
