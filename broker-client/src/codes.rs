//! The CUresult codes the client returns itself (the protocol's), and
//! their names and descriptions for when no broker can be asked (the
//! driver's own texts come from the broker otherwise).

use std::ffi::CStr;

pub use kernels::broker_wire::code::{
    CuResult, INVALID_HANDLE, INVALID_VALUE, NO_DEVICE, NOT_FOUND, NOT_SUPPORTED, OUT_OF_MEMORY,
    SUCCESS,
};

const TABLE: &[(CuResult, &CStr, &CStr)] = &[
    (SUCCESS, c"CUDA_SUCCESS", c"no error"),
    (
        INVALID_VALUE,
        c"CUDA_ERROR_INVALID_VALUE",
        c"invalid argument",
    ),
    (OUT_OF_MEMORY, c"CUDA_ERROR_OUT_OF_MEMORY", c"out of memory"),
    (
        NO_DEVICE,
        c"CUDA_ERROR_NO_DEVICE",
        c"no CUDA-capable device is detected",
    ),
    (
        INVALID_HANDLE,
        c"CUDA_ERROR_INVALID_HANDLE",
        c"invalid resource handle",
    ),
    (
        NOT_FOUND,
        c"CUDA_ERROR_NOT_FOUND",
        c"named symbol not found",
    ),
    (
        NOT_SUPPORTED,
        c"CUDA_ERROR_NOT_SUPPORTED",
        c"operation not supported",
    ),
];

/// The name (or, with `description`, the description) of a code the
/// client returns itself.
pub fn local_text(code: CuResult, description: bool) -> Option<&'static CStr> {
    TABLE
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|&(_, name, text)| if description { text } else { name })
}
