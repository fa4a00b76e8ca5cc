//! The CUDA driver API as the corpus uses it, loaded with `dlopen` from a
//! path: the GPU's `libcuda.so.1` or the emulator's `libemulator.so`, so one
//! program runs a case on either.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};

pub type CuResult = c_uint;
pub type Handle = *mut c_void;

/// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
pub const ATTRIBUTE_SHARED_OPTIN: c_int = 97;
/// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`: the kernel's static shared memory.
pub const FUNC_STATIC_SHARED: c_int = 1;
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
pub const FUNC_MAX_DYNAMIC_SHARED: c_int = 8;
/// `CU_JIT_ERROR_LOG_BUFFER` and its size.
const JIT_ERROR_LOG_BUFFER: c_int = 5;
const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// Declares the table of entry points and the loader that fills it.
macro_rules! entry_points {
    ($($name:ident: fn($($arg:ty),*);)*) => {
        #[expect(non_snake_case, reason = "the driver's own names")]
        pub struct Driver {
            $(pub $name: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }

        impl Driver {
            /// Loads the library at `path` and looks up every entry point.
            pub fn open(path: &str) -> Result<Driver, String> {
                let name = CString::new(path).map_err(|_| "a path with a NUL".to_string())?;
                // SAFETY: a NUL-terminated path; the library stays loaded for
                // the life of the process (never dlclosed).
                let library = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                if library.is_null() {
                    return Err(format!("cannot load {path}: {}", dl_error()));
                }
                Ok(Driver {
                    $($name: {
                        let symbol = concat!(stringify!($name), "\0");
                        // SAFETY: a live library handle and a NUL-terminated name.
                        let found = unsafe { libc::dlsym(library, symbol.as_ptr().cast()) };
                        if found.is_null() {
                            return Err(format!("{path} has no {}", stringify!($name)));
                        }
                        // SAFETY: the driver exports this name with this C
                        // signature (cuda.h).
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CuResult>(found) }
                    },)*
                })
            }
        }
    };
}

entry_points! {
    cuInit: fn(c_uint);
    cuDeviceGet: fn(*mut c_int, c_int);
    cuDeviceGetAttribute: fn(*mut c_int, c_int, c_int);
    cuDeviceGetName: fn(*mut c_char, c_int, c_int);
    cuDevicePrimaryCtxRetain: fn(*mut Handle, c_int);
    cuCtxSetCurrent: fn(Handle);
    cuCtxSynchronize: fn();
    cuModuleLoadDataEx: fn(*mut Handle, *const c_void, c_uint, *mut c_int, *mut *mut c_void);
    cuModuleGetFunction: fn(*mut Handle, Handle, *const c_char);
    cuModuleGetGlobal_v2: fn(*mut u64, *mut usize, Handle, *const c_char);
    cuFuncGetAttribute: fn(*mut c_int, c_int, Handle);
    cuFuncSetAttribute: fn(Handle, c_int, c_int);
    cuMemAlloc_v2: fn(*mut u64, usize);
    cuMemcpyHtoD_v2: fn(u64, *const c_void, usize);
    cuMemcpyDtoH_v2: fn(*mut c_void, u64, usize);
    cuLaunchKernel: fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void);
    cuGetErrorName: fn(CuResult, *mut *const c_char);
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message.
    let text = unsafe { libc::dlerror() };
    if text.is_null() {
        "unknown reason".to_string()
    } else {
        // SAFETY: non-null, NUL-terminated.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }
}

impl Driver {
    /// `CUDA_SUCCESS`, `CUDA_ERROR_INVALID_VALUE` ...: the name the driver
    /// gives a code, or the number when it has none.
    pub fn name(&self, code: CuResult) -> String {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: an out-pointer to fill with a static string.
        let status = unsafe { (self.cuGetErrorName)(code, &mut text) };
        if status != 0 || text.is_null() {
            return format!("CUresult {code}");
        }
        // SAFETY: non-null, NUL-terminated and static.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }

    /// Device 0's name.
    pub fn device_name(&self) -> String {
        let mut buffer = [0 as c_char; 256];
        // SAFETY: the buffer holds 256 bytes.
        let status = unsafe { (self.cuDeviceGetName)(buffer.as_mut_ptr(), 256, 0) };
        if status != 0 {
            return "unknown device".to_string();
        }
        // SAFETY: the driver NUL-terminated the name inside the buffer.
        unsafe { CStr::from_ptr(buffer.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    /// Loads `ptx`, with the JIT's error log (printed on stderr when the
    /// load fails: a GPU says why there).
    pub fn load(&self, ptx: &str) -> Result<Handle, CuResult> {
        let image = CString::new(ptx).map_err(|_| 1u32)?;
        let mut log = vec![0u8; 8192];
        let mut options = [JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
        let mut module: Handle = std::ptr::null_mut();
        // SAFETY: a NUL-terminated image and two options with their values.
        let status = unsafe {
            (self.cuModuleLoadDataEx)(
                &mut module,
                image.as_ptr().cast(),
                2,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if status != 0 {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            eprintln!("JIT log: {}", String::from_utf8_lossy(&log[..end]));
            return Err(status);
        }
        Ok(module)
    }
}
