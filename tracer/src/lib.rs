//! `libcuda_course_trace.so`: an LD_PRELOAD library that records the CUDA
//! driver calls an exercise makes, for the grader (issue 11).
//!
//! Each entry point below has the driver's own name and signature, so the
//! dynamic linker binds the exercise's calls here first. Each forwards its
//! arguments unchanged to the real driver (found with
//! `dlsym(RTLD_NEXT, name)`), then appends one line to the file descriptor
//! named by `CUDA_COURSE_TRACE_FD` (see [`record`] for the format). Without
//! that variable it only forwards. Recording never allocates and never
//! lets a panic cross into C.
//!
//! Traced: kernel launches (`cuLaunchKernel`, named through
//! `cuModuleGetFunction`), the host-device copies with and without a stream
//! (`cuMemcpy{HtoD,DtoH,DtoD}[Async]_v2`), page-locked host memory
//! (`cuMemAllocHost_v2`, `cuMemHostAlloc`, `cuMemHostRegister_v2` and their
//! frees), stream creation, event records and synchronisation.
//!
//! In a batch of runs (`kernels::batch`, one process making several), the
//! frees of device and page-locked memory (`cuMemFree_v2`,
//! `cuMemFreeAsync`, `cuMemFreeHost`) are kept from the driver: memory a
//! run freed is never handed to a later run, so each run's allocations
//! hold what a process of its own would find, never the values an earlier
//! run left (its inputs may be the same vectors). A correct program never
//! reads what it freed; the memory goes back when the process ends.
//!
//! What the trace can prove, and what not: the library lives inside the
//! traced process, so a program written to deceive can write records
//! itself, or reach the driver without passing here (`cuGetProcAddress`, its
//! own `dlopen`). It catches the common shortcuts (never launching the
//! kernel, computing on the CPU, copying from pageable memory) because a
//! program that takes them leaves no record of the calls it did not make: a
//! call that does not come through here is missing evidence, never
//! invented evidence. That a kernel computed the right answer comes from
//! the grader running it from host code it trusts.

pub mod record;
pub mod tables;

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

use kernels::trace_record::{Direction, key};
use record::Record;

/// Runs as the dynamic linker loads the library (ELF `.init_array`): the
/// header tells the grader the library was preloaded, even into a program
/// that never calls the driver.
#[used]
#[unsafe(link_section = ".init_array")]
static ANNOUNCE: extern "C" fn() = announce_at_load;

extern "C" fn announce_at_load() {
    let _ = catch_unwind(record::announce);
}

type CUresult = c_uint;
type CUdeviceptr = u64;
type Handle = *mut c_void;

/// What an entry point returns when no driver stands behind this library
/// (CUDA_ERROR_NOT_INITIALIZED); the program then fails as without a GPU.
const NO_DRIVER: CUresult = 3;

/// The real driver's `name` (NUL-terminated), looked up once per entry
/// point; 0 when there is none.
fn resolve(slot: &AtomicUsize, name: &'static str) -> usize {
    let known = slot.load(Ordering::Relaxed);
    if known != 0 {
        return known;
    }
    // SAFETY: `name` ends in NUL (every caller passes a `concat!` with
    // "\0"); RTLD_NEXT asks for the next definition after this library.
    let found = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    slot.store(found, Ordering::Relaxed);
    found
}

/// The real driver's entry point `$name`, typed as the driver declares it.
macro_rules! real {
    ($name:ident : fn($($arg:ty),*)) => {{
        static SLOT: AtomicUsize = AtomicUsize::new(0);
        match resolve(&SLOT, concat!(stringify!($name), "\0")) {
            0 => None,
            // SAFETY: the address is the driver's own symbol of that name,
            // whose C signature is the one written here (cuda.h).
            address => Some(unsafe {
                std::mem::transmute::<usize, unsafe extern "C" fn($($arg),*) -> CUresult>(address)
            }),
        }
    }};
}

/// What the driver wrote to `out` when the call succeeded; 0 otherwise.
fn written(rc: CUresult, out: *mut Handle) -> usize {
    if rc != 0 || out.is_null() {
        return 0;
    }
    // SAFETY: `out` is the caller's pointer to a handle, which the driver
    // filled in because the call succeeded.
    unsafe { *out as usize }
}

/// Runs a recording step; a panic in it loses the record, not the program.
fn guarded(step: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(step));
}

/// A handle as the trace shows it.
fn hex(handle: usize) -> impl std::fmt::Display {
    struct Hex(usize);
    impl std::fmt::Display for Hex {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{:#x}", self.0)
        }
    }
    Hex(handle)
}

/// Records a copy; `host` is the host-side pointer when there is one.
fn copy(
    call: &str,
    rc: CUresult,
    stream: Handle,
    bytes: usize,
    dir: Direction,
    host: Option<usize>,
) {
    guarded(|| {
        let Some(mut record) = Record::start(call, rc) else {
            return;
        };
        record
            .field(key::STREAM, hex(stream as usize))
            .field(key::BYTES, bytes)
            .field(key::DIR, dir.word());
        if let Some(host) = host {
            record.field(key::PINNED, u8::from(tables::is_pinned(host, bytes)));
        }
        record.send();
    });
}

/// Records a call whose one detail is a handle (a stream, say).
fn simple(call: &str, rc: CUresult, key: &str, handle: usize) {
    guarded(|| {
        if let Some(mut record) = Record::start(call, rc) {
            record.field(key, hex(handle)).send();
        }
    });
}

/// Remembers page-locked memory the driver handed out or registered.
fn pinned(call: &str, rc: CUresult, start: usize, bytes: usize) {
    guarded(|| {
        if rc == 0 {
            tables::pin(start, bytes);
        }
        if let Some(mut record) = Record::start(call, rc) {
            record.field(key::BYTES, bytes).send();
        }
    });
}

/// Whether this process makes a batch of runs (`kernels::batch::VARIABLE`
/// set), read once.
fn in_batch() -> bool {
    static BATCH: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *BATCH.get_or_init(|| {
        // SAFETY: getenv with a NUL-terminated name, read before anything
        // of ours could change the environment.
        !unsafe { libc::getenv(kernels::batch::VARIABLE_C.as_ptr()) }.is_null()
    })
}

/// The driver's entry points, as the exercise's binary imports them.
pub mod entry {
    #![expect(
        clippy::missing_safety_doc,
        reason = "each entry point has the driver's contract (cuda.h)"
    )]

    use super::*;

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuModuleGetFunction(
        function: *mut Handle,
        module: Handle,
        name: *const c_char,
    ) -> CUresult {
        let Some(real) = real!(cuModuleGetFunction: fn(*mut Handle, Handle, *const c_char)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(function, module, name) };
        guarded(|| {
            if name.is_null() {
                return;
            }
            // SAFETY: the driver took `name` as a NUL-terminated string.
            let name = unsafe { CStr::from_ptr(name) }.to_bytes();
            if rc == 0 && !function.is_null() {
                // SAFETY: on success the driver wrote the handle there.
                tables::name(unsafe { *function } as usize, name);
            }
            if let Some(mut record) = Record::start("cuModuleGetFunction", rc) {
                record.word(key::KERNEL, name).send();
            }
        });
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuLaunchKernel(
        function: Handle,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: Handle,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> CUresult {
        let Some(real) = real!(cuLaunchKernel: fn(
            Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle,
            *mut *mut c_void, *mut *mut c_void
        )) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe {
            real(
                function,
                grid_x,
                grid_y,
                grid_z,
                block_x,
                block_y,
                block_z,
                shared_bytes,
                stream,
                params,
                extra,
            )
        };
        guarded(|| {
            let Some(mut record) = Record::start("cuLaunchKernel", rc) else {
                return;
            };
            let mut name = [0; tables::NAME_BYTES];
            let len = tables::name_of(function as usize, &mut name);
            let name: &[u8] = if len == 0 { b"?" } else { &name[..len] };
            record
                .field(key::STREAM, hex(stream as usize))
                .word(key::KERNEL, name)
                .field(key::GRID, format_args!("{grid_x},{grid_y},{grid_z}"))
                .field(key::BLOCK, format_args!("{block_x},{block_y},{block_z}"))
                .send();
        });
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemcpyHtoD_v2(
        dst: CUdeviceptr,
        src: *const c_void,
        bytes: usize,
    ) -> CUresult {
        let Some(real) = real!(cuMemcpyHtoD_v2: fn(CUdeviceptr, *const c_void, usize)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(dst, src, bytes) };
        let null = std::ptr::null_mut();
        copy(
            "cuMemcpyHtoD_v2",
            rc,
            null,
            bytes,
            Direction::HostToDevice,
            Some(src as usize),
        );
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemcpyDtoH_v2(
        dst: *mut c_void,
        src: CUdeviceptr,
        bytes: usize,
    ) -> CUresult {
        let Some(real) = real!(cuMemcpyDtoH_v2: fn(*mut c_void, CUdeviceptr, usize)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(dst, src, bytes) };
        let null = std::ptr::null_mut();
        copy(
            "cuMemcpyDtoH_v2",
            rc,
            null,
            bytes,
            Direction::DeviceToHost,
            Some(dst as usize),
        );
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemcpyDtoD_v2(
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
    ) -> CUresult {
        let Some(real) = real!(cuMemcpyDtoD_v2: fn(CUdeviceptr, CUdeviceptr, usize)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(dst, src, bytes) };
        copy(
            "cuMemcpyDtoD_v2",
            rc,
            std::ptr::null_mut(),
            bytes,
            Direction::DeviceToDevice,
            None,
        );
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
        dst: CUdeviceptr,
        src: *const c_void,
        bytes: usize,
        stream: Handle,
    ) -> CUresult {
        let Some(real) = real!(cuMemcpyHtoDAsync_v2: fn(CUdeviceptr, *const c_void, usize, Handle))
        else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(dst, src, bytes, stream) };
        let host = Some(src as usize);
        copy(
            "cuMemcpyHtoDAsync_v2",
            rc,
            stream,
            bytes,
            Direction::HostToDevice,
            host,
        );
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
        dst: *mut c_void,
        src: CUdeviceptr,
        bytes: usize,
        stream: Handle,
    ) -> CUresult {
        let Some(real) = real!(cuMemcpyDtoHAsync_v2: fn(*mut c_void, CUdeviceptr, usize, Handle))
        else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(dst, src, bytes, stream) };
        let host = Some(dst as usize);
        copy(
            "cuMemcpyDtoHAsync_v2",
            rc,
            stream,
            bytes,
            Direction::DeviceToHost,
            host,
        );
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
        stream: Handle,
    ) -> CUresult {
        let Some(real) = real!(cuMemcpyDtoDAsync_v2: fn(CUdeviceptr, CUdeviceptr, usize, Handle))
        else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(dst, src, bytes, stream) };
        copy(
            "cuMemcpyDtoDAsync_v2",
            rc,
            stream,
            bytes,
            Direction::DeviceToDevice,
            None,
        );
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemAllocHost_v2(host: *mut *mut c_void, bytes: usize) -> CUresult {
        let Some(real) = real!(cuMemAllocHost_v2: fn(*mut *mut c_void, usize)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(host, bytes) };
        let start = written(rc, host);
        pinned("cuMemAllocHost_v2", rc, start, bytes);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemHostAlloc(
        host: *mut *mut c_void,
        bytes: usize,
        flags: c_uint,
    ) -> CUresult {
        let Some(real) = real!(cuMemHostAlloc: fn(*mut *mut c_void, usize, c_uint)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(host, bytes, flags) };
        let start = written(rc, host);
        pinned("cuMemHostAlloc", rc, start, bytes);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemHostRegister_v2(
        host: *mut c_void,
        bytes: usize,
        flags: c_uint,
    ) -> CUresult {
        let Some(real) = real!(cuMemHostRegister_v2: fn(*mut c_void, usize, c_uint)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(host, bytes, flags) };
        pinned("cuMemHostRegister_v2", rc, host as usize, bytes);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemFreeHost(host: *mut c_void) -> CUresult {
        let Some(real) = real!(cuMemFreeHost: fn(*mut c_void)) else {
            return NO_DRIVER;
        };
        // Forgotten first: once freed, the address may come back pageable.
        guarded(|| tables::unpin(host as usize));
        let rc = if in_batch() && is_page_locked(host) {
            // Kept from a later run of the batch (the crate's docs).
            0
        } else {
            // SAFETY: the caller's argument, unchanged, to the driver.
            unsafe { real(host) }
        };
        simple("cuMemFreeHost", rc, "host", host as usize);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemFree_v2(pointer: CUdeviceptr) -> CUresult {
        let Some(real) = real!(cuMemFree_v2: fn(CUdeviceptr)) else {
            return NO_DRIVER;
        };
        if in_batch() && is_allocation(pointer) {
            // Kept from a later run of the batch (the crate's docs).
            return 0;
        }
        // SAFETY: the caller's argument, unchanged, to the driver.
        unsafe { real(pointer) }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemFreeAsync(pointer: CUdeviceptr, stream: Handle) -> CUresult {
        let Some(real) = real!(cuMemFreeAsync: fn(CUdeviceptr, Handle)) else {
            return NO_DRIVER;
        };
        if in_batch() && is_allocation(pointer) {
            return 0;
        }
        // SAFETY: the caller's arguments, unchanged, to the driver.
        unsafe { real(pointer, stream) }
    }

    /// Whether `pointer` starts an allocation the driver knows: a free the
    /// driver would refuse is passed on, to be refused as it would alone.
    fn is_allocation(pointer: CUdeviceptr) -> bool {
        let Some(range) =
            real!(cuMemGetAddressRange_v2: fn(*mut CUdeviceptr, *mut usize, CUdeviceptr))
        else {
            return false;
        };
        let (mut base, mut bytes) = (0, 0);
        // SAFETY: two out-pointers to locals, and the caller's pointer.
        let rc = unsafe { range(&mut base, &mut bytes, pointer) };
        rc == 0 && base == pointer
    }

    /// Whether `host` is page-locked memory the driver handed out.
    fn is_page_locked(host: *mut c_void) -> bool {
        let Some(flags) = real!(cuMemHostGetFlags: fn(*mut c_uint, *mut c_void)) else {
            return false;
        };
        let mut got = 0;
        // SAFETY: an out-pointer to a local, and the caller's pointer.
        unsafe { flags(&mut got, host) == 0 }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemHostUnregister(host: *mut c_void) -> CUresult {
        let Some(real) = real!(cuMemHostUnregister: fn(*mut c_void)) else {
            return NO_DRIVER;
        };
        guarded(|| tables::unpin(host as usize));
        // SAFETY: the caller's argument, unchanged, to the driver.
        let rc = unsafe { real(host) };
        simple("cuMemHostUnregister", rc, "host", host as usize);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuStreamCreate(stream: *mut Handle, flags: c_uint) -> CUresult {
        let Some(real) = real!(cuStreamCreate: fn(*mut Handle, c_uint)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(stream, flags) };
        let created = written(rc, stream);
        simple("cuStreamCreate", rc, key::STREAM, created);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuStreamCreateWithPriority(
        stream: *mut Handle,
        flags: c_uint,
        priority: c_int,
    ) -> CUresult {
        let Some(real) = real!(cuStreamCreateWithPriority: fn(*mut Handle, c_uint, c_int)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(stream, flags, priority) };
        let created = written(rc, stream);
        simple("cuStreamCreateWithPriority", rc, key::STREAM, created);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuEventRecord(event: Handle, stream: Handle) -> CUresult {
        let Some(real) = real!(cuEventRecord: fn(Handle, Handle)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's arguments, unchanged, to the driver.
        let rc = unsafe { real(event, stream) };
        simple("cuEventRecord", rc, key::STREAM, stream as usize);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuEventSynchronize(event: Handle) -> CUresult {
        let Some(real) = real!(cuEventSynchronize: fn(Handle)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's argument, unchanged, to the driver.
        let rc = unsafe { real(event) };
        simple("cuEventSynchronize", rc, "event", event as usize);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuStreamSynchronize(stream: Handle) -> CUresult {
        let Some(real) = real!(cuStreamSynchronize: fn(Handle)) else {
            return NO_DRIVER;
        };
        // SAFETY: the caller's argument, unchanged, to the driver.
        let rc = unsafe { real(stream) };
        simple("cuStreamSynchronize", rc, key::STREAM, stream as usize);
        rc
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuCtxSynchronize() -> CUresult {
        let Some(real) = real!(cuCtxSynchronize: fn()) else {
            return NO_DRIVER;
        };
        // SAFETY: no arguments; the driver's own entry point.
        let rc = unsafe { real() };
        guarded(|| {
            if let Some(mut record) = Record::start("cuCtxSynchronize", rc) {
                record.send();
            }
        });
        rc
    }
}
