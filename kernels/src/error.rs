//! The one error type of the runtime, with messages that say what to do.
//!
//! cust 0.3 folds some driver codes the course must tell apart (a stub
//! libcuda, PTX newer than the driver) into `UnknownError`, so the two places
//! where those arise (initialising and loading PTX) also read the raw code
//! through `cust::sys`: the same libcuda, the same seam (docs/src/design.md,
//! "kernels").

use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_char;

use cust::error::CudaError;
use cust::sys::{self, cudaError_enum as Code};

use crate::protocol::{ErrorInfo, ErrorKind};

/// Everything that can stop an exercise before its answer is checked.
#[derive(Debug, Clone, PartialEq)]
pub enum CourseError {
    /// An argument out of range for this run (one line, naming the flag).
    BadArguments(String),
    /// No GPU or no working driver: nothing can run here.
    NoGpu { code: Code, message: String },
    /// The driver would not load the kernel's PTX.
    PtxRejected { code: Code, message: String },
    /// Any other CUDA error, with what the course was doing at the time.
    Cuda {
        error: CudaError,
        during: Option<String>,
    },
    /// `TODO(step N)` is still in the student's code.
    Unfinished { step: u32 },
    /// A launch of a timed kernel did not compute the answer the checked
    /// (last) launch did: what it left, in a sentence (`fresh_launch`).
    StaleLaunch(String),
}

/// What a `TODO(step N)` placeholder returns until the student writes the step.
pub fn unfinished<T>(step: u32) -> Result<T, CourseError> {
    Err(CourseError::Unfinished { step })
}

impl From<CudaError> for CourseError {
    fn from(error: CudaError) -> Self {
        CourseError::Cuda {
            error,
            during: None,
        }
    }
}

/// What cust's explicit frees return on failure: the error and the value
/// not freed (`DeviceBuffer::drop`, `LockedBuffer::drop`, `Module::drop`).
/// The value goes with the error: the error reports a fault left over from
/// earlier work, and nothing can use the buffer after it.
impl<T> From<(CudaError, T)> for CourseError {
    fn from((error, _unfreed): (CudaError, T)) -> Self {
        CourseError::from(error).during("freeing GPU or pinned memory")
    }
}

impl CourseError {
    /// Adds what was being done to a CUDA error that has no such note yet.
    pub fn during(self, what: &str) -> Self {
        match self {
            CourseError::Cuda {
                error,
                during: None,
            } => CourseError::Cuda {
                error,
                during: Some(what.to_owned()),
            },
            other => other,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            CourseError::BadArguments(_) => ErrorKind::BadArguments,
            CourseError::NoGpu { .. } => ErrorKind::NoGpu,
            CourseError::PtxRejected { .. } => ErrorKind::PtxRejected,
            CourseError::Cuda { .. } => ErrorKind::Cuda,
            CourseError::Unfinished { .. } => ErrorKind::Unfinished,
            CourseError::StaleLaunch(_) => ErrorKind::StaleLaunch,
        }
    }

    /// The CUDA name of the error, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub fn cuda_error(&self) -> Option<String> {
        match self {
            CourseError::NoGpu { code, .. } | CourseError::PtxRejected { code, .. } => {
                Some(code_name(*code))
            }
            CourseError::Cuda { error, .. } => Some(error_name(*error)),
            CourseError::BadArguments(_)
            | CourseError::Unfinished { .. }
            | CourseError::StaleLaunch(_) => None,
        }
    }

    /// The protocol's form of this error, for `--json`.
    pub fn info(&self) -> ErrorInfo {
        ErrorInfo {
            kind: self.kind(),
            message: self.to_string(),
            cuda_error: self.cuda_error(),
        }
    }
}

impl fmt::Display for CourseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CourseError::BadArguments(message) | CourseError::StaleLaunch(message) => {
                f.write_str(message)
            }
            CourseError::NoGpu { message, .. } | CourseError::PtxRejected { message, .. } => {
                f.write_str(message)
            }
            CourseError::Cuda { error, during } => {
                match during {
                    Some(what) => write!(f, "CUDA error while {what}: ")?,
                    None => f.write_str("CUDA error: ")?,
                }
                write!(f, "{} ({})", error_name(*error), error_description(*error))?;
                if let Some(hint) = hint_for(*error, crate::which_driver::is_emulator()) {
                    write!(f, "\nhint: {hint}")?;
                }
                Ok(())
            }
            CourseError::Unfinished { step } => write!(
                f,
                "step {step} is not written yet: find `TODO(step {step})` in src/main.rs \
                 and replace the placeholder under it (steps go in order; the first are \
                 the kernel's, in src/kernel.cu)"
            ),
        }
    }
}

impl std::error::Error for CourseError {}

/// What a failed `cuInit` means for someone who wanted to run a kernel.
pub(crate) fn no_gpu(code: Code) -> CourseError {
    let name = code_name(code);
    let elsewhere = "Building and `cargo test` work on this machine; run the exercise on a \
                     machine with an NVIDIA GPU and its driver.";
    let message = match code {
        Code::CUDA_ERROR_STUB_LIBRARY => format!(
            "no NVIDIA GPU driver was found: libcuda.so.1 here is the toolkit's stub \
             ({name}). {elsewhere}"
        ),
        Code::CUDA_ERROR_NO_DEVICE => format!(
            "no NVIDIA GPU was found ({name}): the CUDA driver library is installed but \
             sees no GPU. {elsewhere} If this machine has one, `nvidia-smi` should list it \
             and CUDA_VISIBLE_DEVICES must not hide it."
        ),
        Code::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        | Code::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE => {
            format!(
                "the CUDA driver library does not match the NVIDIA kernel driver ({name}): \
                 reinstall the driver or reboot into the one installed."
            )
        }
        other => format!(
            "CUDA could not start ({name}: {}). {elsewhere}",
            code_description(other)
        ),
    };
    CourseError::NoGpu { code, message }
}

/// What a failed PTX load means, given the PTX text and this GPU and driver.
pub(crate) fn ptx_rejected(
    code: Code,
    ptx: &str,
    compute: (i32, i32),
    driver: (i32, i32),
) -> CourseError {
    let name = code_name(code);
    let target = ptx_directive(ptx, ".target").unwrap_or("unknown");
    let isa = ptx_directive(ptx, ".version").unwrap_or("unknown");
    let message = match code {
        Code::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => format!(
            "the kernel's PTX (ISA {isa}) is newer than this driver accepts ({name}): the \
             CUDA toolkit that built it is newer than the driver, which supports CUDA {}.{}. \
             Update the NVIDIA driver, or build with a toolkit no newer than CUDA {}.{} \
             (put its nvcc first on PATH or set CUDA_PATH) and rebuild.",
            driver.0, driver.1, driver.0, driver.1
        ),
        Code::CUDA_ERROR_NO_BINARY_FOR_GPU => format!(
            "the kernel's PTX targets {target}, which this GPU (compute {}.{}) cannot run \
             ({name}): rebuild with CUDA_COURSE_ARCH=compute_{}{} or lower.",
            compute.0, compute.1, compute.0, compute.1
        ),
        other => format!(
            "the driver could not compile the kernel's PTX (target {target}, ISA {isa}): \
             {name} ({}). Rebuild with `cargo clean -p <exercise>`; if it persists, the \
             PTX and this driver do not fit together.",
            code_description(other)
        ),
    };
    CourseError::PtxRejected { code, message }
}

/// The value of a PTX header directive such as `.version 7.8`.
fn ptx_directive<'a>(ptx: &'a str, directive: &str) -> Option<&'a str> {
    ptx.lines()
        .filter_map(|line| line.trim().strip_prefix(directive))
        .filter_map(|rest| rest.split_whitespace().next())
        .next()
}

/// What to look at for the errors students meet most. On the CPU emulator
/// the finding it printed (block, thread, `kernel.cu` line) is where to
/// look, and no hint sends the student to a tool that needs a GPU.
fn hint_for(error: CudaError, on_emulator: bool) -> Option<&'static str> {
    if on_emulator && let Some(hint) = emulator_hint_for(error) {
        return Some(hint);
    }
    Some(match error {
        CudaError::IllegalAddress => {
            "a thread read or wrote outside an allocation: check the kernel's bounds tests \
             (i < n; row < width and col < width) and the sizes of the buffers; \
             `compute-sanitizer` names the line"
        }
        CudaError::MisalignedAddress => {
            "a thread accessed memory at an address not aligned to the access size: check \
             pointer arithmetic and casts in the kernel"
        }
        CudaError::LaunchOutOfResources => {
            "the block needs more registers or shared memory than a multiprocessor has: \
             launch fewer threads per block"
        }
        CudaError::InvalidValue => {
            "CUDA rejected an argument: at a launch, check that the block has at most 1024 \
             threads and that the shared-memory size fits"
        }
        CudaError::NotFound => {
            "no kernel or symbol of that name is in the PTX: declare kernels `extern \"C\"` \
             so their names are not mangled, and check the spelling"
        }
        CudaError::OutOfMemory => "the GPU ran out of memory: use a smaller --n",
        CudaError::LaunchFailed | CudaError::IllegalInstruction | CudaError::HardwareStackError => {
            "the kernel crashed: run the exercise under `compute-sanitizer` to find where"
        }
        CudaError::LaunchTimeout => {
            "the kernel ran longer than the display driver allows: use a GPU without a \
             display attached, or a smaller problem"
        }
        _ => return None,
    })
}

/// The hints that differ on the CPU emulator.
fn emulator_hint_for(error: CudaError) -> Option<&'static str> {
    Some(match error {
        CudaError::IllegalAddress => {
            "a thread read or wrote outside an allocation: the CPU emulator's finding above \
             names the thread, the address and the kernel.cu line; check the kernel's bounds \
             tests (i < n; row < width and col < width) and the sizes of the buffers"
        }
        CudaError::MisalignedAddress => {
            "a thread accessed memory at an address not aligned to the access size: the CPU \
             emulator's finding above names the thread and the kernel.cu line"
        }
        CudaError::LaunchFailed | CudaError::IllegalInstruction | CudaError::HardwareStackError => {
            "the CPU emulator stopped the kernel: its finding above names the threads and the \
             kernel.cu lines (a race, a barrier not every thread reaches, uninitialised memory)"
        }
        CudaError::AssertError => {
            "an assert() in the kernel failed: the line above names it, its block and its thread"
        }
        CudaError::NotSupported => {
            "the CPU emulator cannot run this kernel: the line above names what it cannot run \
             (the book's chapter on the emulator lists it); run it on an NVIDIA GPU"
        }
        _ => return None,
    })
}

/// CUDA's name for a cust error, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
pub fn error_name(error: CudaError) -> String {
    match raw_code(error) {
        Some(code) => code_name(code),
        None => format!("{error:?}"),
    }
}

fn error_description(error: CudaError) -> String {
    match raw_code(error) {
        Some(code) => code_description(code),
        None => error.to_string(),
    }
}

/// The driver's code behind a cust error. cust builds its errors only from
/// driver codes (plus two of its own, above 999), so every code up to 999 is
/// one the driver returned.
pub(crate) fn raw_code(error: CudaError) -> Option<Code> {
    let value = error as u32;
    if value > 999 {
        return None;
    }
    // SAFETY: `cudaError_enum` is `repr(i32)` and cust maps to `CudaError` only
    // from its variants, keeping their values, so `value` is one of them.
    Some(unsafe { std::mem::transmute::<i32, Code>(value as i32) })
}

/// A cust error for a code read from libcuda directly: the codes an
/// attribute query can return, the rest as cust's UnknownError.
pub(crate) fn raw_code_error(code: Code) -> CudaError {
    match code {
        Code::CUDA_ERROR_INVALID_VALUE => CudaError::InvalidValue,
        Code::CUDA_ERROR_INVALID_DEVICE => CudaError::InvalidDevice,
        Code::CUDA_ERROR_NOT_INITIALIZED => CudaError::NotInitialized,
        _ => CudaError::UnknownError,
    }
}

fn code_name(code: Code) -> String {
    driver_string(code, sys::cuGetErrorName).unwrap_or_else(|| format!("{code:?}"))
}

fn code_description(code: Code) -> String {
    driver_string(code, sys::cuGetErrorString).unwrap_or_else(|| "no description".to_owned())
}

/// Calls `cuGetErrorName` or `cuGetErrorString`, which work before `cuInit`.
fn driver_string(
    code: Code,
    getter: unsafe extern "C" fn(Code, *mut *const c_char) -> Code,
) -> Option<String> {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: the driver writes a pointer to a static string or leaves it null.
    let status = unsafe { getter(code, &mut text) };
    if status != Code::CUDA_SUCCESS || text.is_null() {
        return None;
    }
    // SAFETY: non-null, so it points to a NUL-terminated static string.
    Some(
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//\n.version 8.5\n.target sm_90\n.address_size 64\n";

    #[test]
    fn cuda_errors_carry_their_cuda_name_and_a_hint() {
        let err = CourseError::from(CudaError::IllegalAddress).during("running the kernel");
        let text = err.to_string();
        assert!(
            text.starts_with("CUDA error while running the kernel: CUDA_ERROR_ILLEGAL_ADDRESS"),
            "{text}"
        );
        assert!(text.contains("bounds test"), "{text}");
        assert_eq!(
            err.cuda_error().as_deref(),
            Some("CUDA_ERROR_ILLEGAL_ADDRESS")
        );
        assert_eq!(err.kind(), ErrorKind::Cuda);
    }

    #[test]
    fn on_the_emulator_no_hint_names_a_tool_that_needs_a_gpu() {
        for error in [
            CudaError::IllegalAddress,
            CudaError::MisalignedAddress,
            CudaError::LaunchFailed,
            CudaError::IllegalInstruction,
            CudaError::AssertError,
            CudaError::NotSupported,
        ] {
            let hint = hint_for(error, true).unwrap();
            assert!(!hint.contains("compute-sanitizer"), "{error:?}: {hint}");
            assert!(
                hint.contains("above") || hint.contains("line"),
                "{error:?}: {hint}"
            );
        }
        assert!(
            hint_for(CudaError::LaunchFailed, false)
                .unwrap()
                .contains("compute-sanitizer")
        );
        assert_eq!(
            hint_for(CudaError::OutOfMemory, true),
            hint_for(CudaError::OutOfMemory, false)
        );
    }

    #[test]
    fn a_failed_free_converts_with_question_mark() {
        // The shape of DeviceBuffer::drop's result: the error and the buffer.
        fn free(result: Result<(), (CudaError, Vec<f32>)>) -> Result<(), CourseError> {
            result?;
            Ok(())
        }
        let err = free(Err((CudaError::IllegalAddress, vec![0.0]))).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "CUDA error while freeing GPU or pinned memory: CUDA_ERROR_ILLEGAL_ADDRESS"
            ),
            "{err}"
        );
        assert_eq!(free(Ok(())), Ok(()));
    }

    #[test]
    fn a_note_is_added_once() {
        let err = CourseError::from(CudaError::InvalidValue)
            .during("launching")
            .during("something else");
        assert!(err.to_string().contains("while launching:"), "{err}");
    }

    #[test]
    fn stub_and_missing_device_both_say_there_is_no_gpu() {
        for code in [Code::CUDA_ERROR_STUB_LIBRARY, Code::CUDA_ERROR_NO_DEVICE] {
            let err = no_gpu(code);
            let text = err.to_string();
            assert!(text.contains("no NVIDIA GPU"), "{text}");
            assert!(text.contains("cargo test"), "{text}");
            assert_eq!(err.kind(), ErrorKind::NoGpu);
            assert_eq!(err.kind().exit().code(), 3);
        }
    }

    #[test]
    fn ptx_newer_than_the_driver_says_which_and_what_to_do() {
        let err = ptx_rejected(
            Code::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            PTX,
            (9, 0),
            (12, 2),
        );
        let text = err.to_string();
        assert!(text.contains("ISA 8.5"), "{text}");
        assert!(text.contains("supports CUDA 12.2"), "{text}");
        assert!(text.contains("Update the NVIDIA driver"), "{text}");
        assert_eq!(
            err.cuda_error().as_deref(),
            Some("CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
        );
    }

    #[test]
    fn ptx_for_a_newer_gpu_names_the_arch_to_build_for() {
        let err = ptx_rejected(Code::CUDA_ERROR_NO_BINARY_FOR_GPU, PTX, (7, 5), (13, 0));
        let text = err.to_string();
        assert!(text.contains("targets sm_90"), "{text}");
        assert!(text.contains("CUDA_COURSE_ARCH=compute_75"), "{text}");
    }

    #[test]
    fn unfinished_steps_point_at_the_todo() {
        let err = unfinished::<()>(3).unwrap_err();
        assert!(err.to_string().contains("TODO(step 3)"), "{err}");
        assert_eq!(err.kind().exit().code(), 1);
        assert_eq!(err.cuda_error(), None);
    }
}
