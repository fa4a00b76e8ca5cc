//! The driver's result codes (`CUresult`), with the names and descriptions
//! `cuGetErrorName` and `cuGetErrorString` hand out.

// The codes the broker and its client answer with too are defined once,
// beside the broker's wire format; the rest only the emulator gives.
pub use kernels::broker_wire::code::{
    CuResult, INVALID_CONTEXT, INVALID_DEVICE, INVALID_HANDLE, INVALID_IMAGE, INVALID_PTX,
    INVALID_VALUE, NO_DEVICE, NOT_FOUND, NOT_INITIALIZED, NOT_SUPPORTED, OUT_OF_MEMORY, SUCCESS,
};

pub const ILLEGAL_ADDRESS: CuResult = 700;
pub const LAUNCH_OUT_OF_RESOURCES: CuResult = 701;
pub const ASSERT: CuResult = 710;
pub const ILLEGAL_INSTRUCTION: CuResult = 715;
pub const MISALIGNED_ADDRESS: CuResult = 716;
pub const LAUNCH_FAILED: CuResult = 719;
pub const UNKNOWN: CuResult = 999;

/// Name and description of every code the emulator returns, NUL-terminated
/// for C callers.
const TABLE: &[(CuResult, &str, &str)] = &[
    (SUCCESS, "CUDA_SUCCESS\0", "no error\0"),
    (
        NO_DEVICE,
        "CUDA_ERROR_NO_DEVICE\0",
        "no CUDA-capable device is detected\0",
    ),
    (
        INVALID_VALUE,
        "CUDA_ERROR_INVALID_VALUE\0",
        "invalid argument\0",
    ),
    (
        OUT_OF_MEMORY,
        "CUDA_ERROR_OUT_OF_MEMORY\0",
        "out of memory\0",
    ),
    (
        NOT_INITIALIZED,
        "CUDA_ERROR_NOT_INITIALIZED\0",
        "initialization error\0",
    ),
    (
        INVALID_DEVICE,
        "CUDA_ERROR_INVALID_DEVICE\0",
        "invalid device ordinal\0",
    ),
    (
        INVALID_IMAGE,
        "CUDA_ERROR_INVALID_IMAGE\0",
        "device kernel image is invalid\0",
    ),
    (
        INVALID_CONTEXT,
        "CUDA_ERROR_INVALID_CONTEXT\0",
        "invalid device context\0",
    ),
    (
        INVALID_PTX,
        "CUDA_ERROR_INVALID_PTX\0",
        "a PTX JIT compilation failed\0",
    ),
    (
        INVALID_HANDLE,
        "CUDA_ERROR_INVALID_HANDLE\0",
        "invalid resource handle\0",
    ),
    (
        NOT_FOUND,
        "CUDA_ERROR_NOT_FOUND\0",
        "named symbol not found\0",
    ),
    (
        ILLEGAL_ADDRESS,
        "CUDA_ERROR_ILLEGAL_ADDRESS\0",
        "an illegal memory access was encountered\0",
    ),
    (
        LAUNCH_OUT_OF_RESOURCES,
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\0",
        "too many resources requested for launch\0",
    ),
    (
        ASSERT,
        "CUDA_ERROR_ASSERT\0",
        "device-side assert triggered\0",
    ),
    (
        ILLEGAL_INSTRUCTION,
        "CUDA_ERROR_ILLEGAL_INSTRUCTION\0",
        "an illegal instruction was encountered\0",
    ),
    (
        MISALIGNED_ADDRESS,
        "CUDA_ERROR_MISALIGNED_ADDRESS\0",
        "misaligned address\0",
    ),
    (
        LAUNCH_FAILED,
        "CUDA_ERROR_LAUNCH_FAILED\0",
        "unspecified launch failure\0",
    ),
    (
        NOT_SUPPORTED,
        "CUDA_ERROR_NOT_SUPPORTED\0",
        "operation not supported\0",
    ),
    (UNKNOWN, "CUDA_ERROR_UNKNOWN\0", "unknown error\0"),
];

/// The code's name and description, or None for a code the emulator never
/// returns (the driver answers those with `CUDA_ERROR_INVALID_VALUE`).
pub fn describe(code: CuResult) -> Option<(&'static str, &'static str)> {
    TABLE
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, name, text)| (*name, *text))
}

/// Codes after which the context is unusable, as after a fault on a GPU.
pub fn is_sticky(code: CuResult) -> bool {
    matches!(
        code,
        ILLEGAL_ADDRESS | ILLEGAL_INSTRUCTION | MISALIGNED_ADDRESS | LAUNCH_FAILED | ASSERT
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_text_is_nul_terminated() {
        for (code, name, text) in TABLE {
            assert!(name.ends_with('\0') && text.ends_with('\0'), "{code}");
            assert!(name.starts_with("CUDA_"), "{code}");
        }
        assert_eq!(describe(700).unwrap().0, "CUDA_ERROR_ILLEGAL_ADDRESS\0");
        assert!(describe(12345).is_none());
    }
}
