//! The backend: a `libcuda.so.1` opened by path (the real driver, or the
//! CPU emulator's library, which has the same C ABI), its entry points
//! looked up once, and a safe method for each call the broker makes.

use std::ffi::{CStr, CString, c_char, c_void};
use std::path::Path;
use std::ptr::null_mut;

pub use kernels::broker_wire::code::*;
/// A driver handle (context, module, function, stream, event), as the
/// driver handed it out: the broker only ever gives one back to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw(*mut c_void);

impl Raw {
    /// The null stream.
    pub const NULL: Raw = Raw(null_mut());
}

/// The handle type in the entry points' signatures.
type Ptr = *mut c_void;

/// `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`.
pub const STREAM_LEGACY: Raw = Raw(1 as Ptr);
pub const STREAM_PER_THREAD: Raw = Raw(2 as Ptr);

/// Declares the entry points: a struct `Api` of function pointers and its
/// loader (the bench declares its own few).
macro_rules! entry_points {
    ($($name:ident($($arg:ty),*);)*) => {
        #[expect(non_snake_case, reason = "the fields are the driver's own names")]
        struct Api {
            $($name: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }

        impl Api {
            /// # Safety
            /// `library` is a live handle from `dlopen` of a library whose
            /// symbols of these names have these signatures (cuda.h's).
            unsafe fn load(library: *mut c_void) -> Result<Api, String> {
                Ok(Api {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: a live handle and a NUL-terminated name.
                        let address = unsafe { libc::dlsym(library, name.as_ptr().cast()) };
                        if address.is_null() {
                            return Err(format!("it has no {}", stringify!($name)));
                        }
                        // SAFETY: the symbol has this signature, per the
                        // function's contract.
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CuResult>(address)
                        }
                    },)*
                })
            }
        }
    };
}

pub(crate) use entry_points;

entry_points! {
    cuInit(u32);
    cuDriverGetVersion(*mut i32);
    cuDeviceGet(*mut i32, i32);
    cuDeviceGetCount(*mut i32);
    cuDeviceGetAttribute(*mut i32, i32, i32);
    cuDeviceGetName(*mut c_char, i32, i32);
    cuDeviceTotalMem_v2(*mut usize, i32);
    cuDevicePrimaryCtxRetain(*mut Ptr, i32);
    cuDevicePrimaryCtxRelease_v2(i32);
    cuCtxSetCurrent(Ptr);
    cuCtxSynchronize();
    cuGetErrorName(CuResult, *mut *const c_char);
    cuGetErrorString(CuResult, *mut *const c_char);
    cuMemAlloc_v2(*mut u64, usize);
    cuMemFree_v2(u64);
    cuMemGetInfo_v2(*mut usize, *mut usize);
    cuMemHostRegister_v2(*mut c_void, usize, u32);
    cuMemHostUnregister(*mut c_void);
    cuMemcpyHtoD_v2(u64, *const c_void, usize);
    cuMemcpyDtoH_v2(*mut c_void, u64, usize);
    cuMemcpyDtoD_v2(u64, u64, usize);
    cuMemcpyHtoDAsync_v2(u64, *const c_void, usize, Ptr);
    cuMemcpyDtoHAsync_v2(*mut c_void, u64, usize, Ptr);
    cuMemcpyDtoDAsync_v2(u64, u64, usize, Ptr);
    cuMemsetD8_v2(u64, u8, usize);
    cuMemsetD32_v2(u64, u32, usize);
    cuMemsetD8Async(u64, u8, usize, Ptr);
    cuMemsetD32Async(u64, u32, usize, Ptr);
    cuModuleLoadData(*mut Ptr, *const c_void);
    cuModuleUnload(Ptr);
    cuModuleGetFunction(*mut Ptr, Ptr, *const c_char);
    cuModuleGetGlobal_v2(*mut u64, *mut usize, Ptr, *const c_char);
    cuFuncGetAttribute(*mut i32, i32, Ptr);
    cuFuncSetAttribute(Ptr, i32, i32);
    cuLaunchKernel(Ptr, u32, u32, u32, u32, u32, u32, u32, Ptr, *mut *mut c_void, *mut *mut c_void);
    cuStreamCreate(*mut Ptr, u32);
    cuStreamCreateWithPriority(*mut Ptr, u32, i32);
    cuStreamDestroy_v2(Ptr);
    cuStreamSynchronize(Ptr);
    cuStreamQuery(Ptr);
    cuStreamWaitEvent(Ptr, Ptr, u32);
    cuEventCreate(*mut Ptr, u32);
    cuEventDestroy_v2(Ptr);
    cuEventRecord(Ptr, Ptr);
    cuEventSynchronize(Ptr);
    cuEventQuery(Ptr);
    cuEventElapsedTime(*mut f32, Ptr, Ptr);
}

/// `dlopen`s the library at `path` (a bare name is searched for as
/// `dlopen` does), for the process's life.
pub(crate) fn open_library(path: &Path) -> Result<*mut c_void, String> {
    let name = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{} holds a NUL byte", path.display()))?;
    // SAFETY: a NUL-terminated path.
    let library = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if !library.is_null() {
        return Ok(library);
    }
    // SAFETY: dlerror returns null or a NUL-terminated message.
    let why = unsafe { libc::dlerror() };
    let why = if why.is_null() {
        "no reason given".to_owned()
    } else {
        // SAFETY: non-null, NUL-terminated, per dlerror.
        unsafe { CStr::from_ptr(why) }
            .to_string_lossy()
            .into_owned()
    };
    Err(format!("cannot load the driver {}: {why}", path.display()))
}

/// The opened backend. Its library stays loaded for the process's life.
pub struct Driver {
    api: Api,
}

fn check(rc: CuResult) -> Result<(), CuResult> {
    if rc == SUCCESS { Ok(()) } else { Err(rc) }
}

/// Where a copy goes: the synchronous call, or the `Async` one on a stream.
#[derive(Clone, Copy, Debug)]
pub enum On {
    Sync,
    Stream(Raw),
}

impl Driver {
    /// Opens the library at `path` (a bare name is searched for as
    /// `dlopen` does) and looks up every entry point.
    pub fn open(path: &Path) -> Result<Driver, String> {
        let library = open_library(path)?;
        // SAFETY: a live handle and a NUL-terminated name.
        let client = unsafe { libc::dlsym(library, c"cuda_course_broker_mark".as_ptr()) };
        if !client.is_null() {
            return Err(format!(
                "{} is the broker's client library, not a driver: name the driver (or the emulator's library) with --driver, and put the client on the program's library path only",
                path.display()
            ));
        }
        // SAFETY: a live handle of a library with cuda.h's entry points.
        let api = unsafe { Api::load(library) }
            .map_err(|why| format!("{} is not a CUDA driver: {why}", path.display()))?;
        Ok(Driver { api })
    }

    /// Calls `f` with a pointer to a fresh `T` and returns what it wrote.
    fn out<T: Copy>(&self, start: T, f: impl FnOnce(*mut T) -> CuResult) -> Result<T, CuResult> {
        let mut value = start;
        check(f(&mut value))?;
        Ok(value)
    }
}

/// One safe method per call: each passes its arguments to the backend's
/// entry point of the same name, whose signature is cuda.h's; out-pointers
/// point to locals, host pointers are the caller's promise (documented on
/// the few methods that take them).
impl Driver {
    pub fn init(&self) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuInit)(0) })
    }

    pub fn driver_version(&self) -> Result<i32, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0, |v| unsafe { (self.api.cuDriverGetVersion)(v) })
    }

    pub fn device(&self, ordinal: i32) -> Result<i32, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0, |v| unsafe { (self.api.cuDeviceGet)(v, ordinal) })
    }

    pub fn device_count(&self) -> Result<i32, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0, |v| unsafe { (self.api.cuDeviceGetCount)(v) })
    }

    pub fn device_attribute(&self, attribute: i32, device: i32) -> Result<i32, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0, |v| unsafe {
            (self.api.cuDeviceGetAttribute)(v, attribute, device)
        })
    }

    pub fn device_name(&self, device: i32) -> Result<String, CuResult> {
        let mut name = [0u8; 256];
        // SAFETY: see the impl's comment; the buffer has 256 bytes.
        check(unsafe { (self.api.cuDeviceGetName)(name.as_mut_ptr().cast(), 256, device) })?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Ok(String::from_utf8_lossy(&name[..end]).into_owned())
    }

    pub fn device_total_memory(&self, device: i32) -> Result<u64, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0, |v| unsafe { (self.api.cuDeviceTotalMem_v2)(v, device) })
            .map(|v| v as u64)
    }

    pub fn primary_context(&self, device: i32) -> Result<Raw, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(null_mut(), |v| unsafe {
            (self.api.cuDevicePrimaryCtxRetain)(v, device)
        })
        .map(Raw)
    }

    pub fn release_primary_context(&self, device: i32) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuDevicePrimaryCtxRelease_v2)(device) })
    }

    pub fn set_current(&self, context: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuCtxSetCurrent)(context.0) })
    }

    pub fn synchronize(&self) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuCtxSynchronize)() })
    }

    /// `cuGetErrorString` when `description`, else `cuGetErrorName`.
    pub fn error_text(&self, code: CuResult, description: bool) -> Result<String, CuResult> {
        let call = if description {
            self.api.cuGetErrorString
        } else {
            self.api.cuGetErrorName
        };
        // SAFETY: see the impl's comment.
        let text = self.out(std::ptr::null(), |v| unsafe { call(code, v) })?;
        if text.is_null() {
            return Err(INVALID_VALUE);
        }
        // SAFETY: the driver hands out a static NUL-terminated string.
        Ok(unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned())
    }

    pub fn alloc(&self, bytes: u64) -> Result<u64, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0, |v| unsafe {
            (self.api.cuMemAlloc_v2)(v, bytes as usize)
        })
    }

    pub fn free(&self, address: u64) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuMemFree_v2)(address) })
    }

    /// Free and total device memory.
    pub fn memory_info(&self) -> Result<(u64, u64), CuResult> {
        let mut total = 0usize;
        // SAFETY: see the impl's comment.
        let free = self.out(0usize, |v| unsafe {
            (self.api.cuMemGetInfo_v2)(v, &mut total)
        })?;
        Ok((free as u64, total as u64))
    }

    /// Page-locks `bytes` at `address`.
    ///
    /// # Safety
    /// The range is memory the broker mapped and keeps mapped until
    /// [`Driver::unregister`].
    pub unsafe fn register(&self, address: *mut c_void, bytes: usize) -> Result<(), CuResult> {
        // SAFETY: per this function's contract.
        check(unsafe { (self.api.cuMemHostRegister_v2)(address, bytes, 0) })
    }

    /// # Safety
    /// `address` was registered with [`Driver::register`].
    pub unsafe fn unregister(&self, address: *mut c_void) -> Result<(), CuResult> {
        // SAFETY: per this function's contract.
        check(unsafe { (self.api.cuMemHostUnregister)(address) })
    }

    /// Copies `bytes` from host memory to the device.
    ///
    /// # Safety
    /// `src` is readable for `bytes` until the copy is done.
    pub unsafe fn copy_htod(
        &self,
        dst: u64,
        src: *const c_void,
        bytes: usize,
        on: On,
    ) -> Result<(), CuResult> {
        // SAFETY: per this function's contract.
        check(unsafe {
            match on {
                On::Sync => (self.api.cuMemcpyHtoD_v2)(dst, src, bytes),
                On::Stream(s) => (self.api.cuMemcpyHtoDAsync_v2)(dst, src, bytes, s.0),
            }
        })
    }

    /// Copies `bytes` from the device to host memory.
    ///
    /// # Safety
    /// `dst` is writable for `bytes` until the copy is done.
    pub unsafe fn copy_dtoh(
        &self,
        dst: *mut c_void,
        src: u64,
        bytes: usize,
        on: On,
    ) -> Result<(), CuResult> {
        // SAFETY: per this function's contract.
        check(unsafe {
            match on {
                On::Sync => (self.api.cuMemcpyDtoH_v2)(dst, src, bytes),
                On::Stream(s) => (self.api.cuMemcpyDtoHAsync_v2)(dst, src, bytes, s.0),
            }
        })
    }

    pub fn copy_dtod(&self, dst: u64, src: u64, bytes: usize, on: On) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe {
            match on {
                On::Sync => (self.api.cuMemcpyDtoD_v2)(dst, src, bytes),
                On::Stream(s) => (self.api.cuMemcpyDtoDAsync_v2)(dst, src, bytes, s.0),
            }
        })
    }

    /// `count` elements of `width` bytes (1 or 4) set to `value`.
    pub fn memset(
        &self,
        address: u64,
        width: u8,
        value: u32,
        count: usize,
        on: On,
    ) -> Result<(), CuResult> {
        let api = &self.api;
        // SAFETY: see the impl's comment.
        check(unsafe {
            match (width, on) {
                (1, On::Sync) => (api.cuMemsetD8_v2)(address, value as u8, count),
                (1, On::Stream(s)) => (api.cuMemsetD8Async)(address, value as u8, count, s.0),
                (_, On::Sync) => (api.cuMemsetD32_v2)(address, value, count),
                (_, On::Stream(s)) => (api.cuMemsetD32Async)(address, value, count, s.0),
            }
        })
    }

    pub fn load_module(&self, ptx: &CStr) -> Result<Raw, CuResult> {
        // SAFETY: see the impl's comment; the image is NUL-terminated.
        self.out(null_mut(), |v| unsafe {
            (self.api.cuModuleLoadData)(v, ptx.as_ptr().cast())
        })
        .map(Raw)
    }

    pub fn unload_module(&self, module: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuModuleUnload)(module.0) })
    }

    pub fn function(&self, module: Raw, name: &CStr) -> Result<Raw, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(null_mut(), |v| unsafe {
            (self.api.cuModuleGetFunction)(v, module.0, name.as_ptr())
        })
        .map(Raw)
    }

    /// A module global's address and size.
    pub fn global(&self, module: Raw, name: &CStr) -> Result<(u64, u64), CuResult> {
        let mut bytes = 0usize;
        // SAFETY: see the impl's comment.
        let address = self.out(0u64, |v| unsafe {
            (self.api.cuModuleGetGlobal_v2)(v, &mut bytes, module.0, name.as_ptr())
        })?;
        Ok((address, bytes as u64))
    }

    pub fn function_attribute(&self, attribute: i32, function: Raw) -> Result<i32, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0, |v| unsafe {
            (self.api.cuFuncGetAttribute)(v, attribute, function.0)
        })
    }

    pub fn set_function_attribute(
        &self,
        function: Raw,
        attribute: i32,
        value: i32,
    ) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuFuncSetAttribute)(function.0, attribute, value) })
    }

    /// Launches `function`; `params` holds one pointer per parameter.
    ///
    /// # Safety
    /// Each pointer in `params` points to as many readable bytes as the
    /// kernel's parameter of that place has.
    pub unsafe fn launch(
        &self,
        function: Raw,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        stream: Raw,
        params: &mut [*mut c_void],
    ) -> Result<(), CuResult> {
        let [gx, gy, gz] = grid;
        let [bx, by, bz] = block;
        let params = if params.is_empty() {
            null_mut()
        } else {
            params.as_mut_ptr()
        };
        let (function, stream) = (function.0, stream.0);
        // SAFETY: per this function's contract; no `extra`.
        check(unsafe {
            (self.api.cuLaunchKernel)(
                function,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                shared,
                stream,
                params,
                null_mut(),
            )
        })
    }

    pub fn create_stream(&self, flags: u32, priority: Option<i32>) -> Result<Raw, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(null_mut(), |v| unsafe {
            match priority {
                None => (self.api.cuStreamCreate)(v, flags),
                Some(p) => (self.api.cuStreamCreateWithPriority)(v, flags, p),
            }
        })
        .map(Raw)
    }

    pub fn destroy_stream(&self, stream: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuStreamDestroy_v2)(stream.0) })
    }

    pub fn synchronize_stream(&self, stream: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuStreamSynchronize)(stream.0) })
    }

    pub fn query_stream(&self, stream: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuStreamQuery)(stream.0) })
    }

    pub fn wait_event(&self, stream: Raw, event: Raw, flags: u32) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuStreamWaitEvent)(stream.0, event.0, flags) })
    }

    pub fn create_event(&self, flags: u32) -> Result<Raw, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(null_mut(), |v| unsafe {
            (self.api.cuEventCreate)(v, flags)
        })
        .map(Raw)
    }

    pub fn destroy_event(&self, event: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuEventDestroy_v2)(event.0) })
    }

    pub fn record_event(&self, event: Raw, stream: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuEventRecord)(event.0, stream.0) })
    }

    pub fn synchronize_event(&self, event: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuEventSynchronize)(event.0) })
    }

    pub fn query_event(&self, event: Raw) -> Result<(), CuResult> {
        // SAFETY: see the impl's comment.
        check(unsafe { (self.api.cuEventQuery)(event.0) })
    }

    /// Milliseconds from `start` to `end`.
    pub fn elapsed(&self, start: Raw, end: Raw) -> Result<f32, CuResult> {
        // SAFETY: see the impl's comment.
        self.out(0.0, |v| unsafe {
            (self.api.cuEventElapsedTime)(v, start.0, end.0)
        })
    }
}
