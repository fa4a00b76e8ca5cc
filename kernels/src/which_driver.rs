//! Which CUDA driver this process loaded: a GPU's, or the course's CPU
//! emulator standing in for it. A driver query below both the GPU's
//! start-up (`gpu`) and the errors' hints (`error`), which each ask it.

use std::ffi::CStr;
use std::sync::OnceLock;

use cust::sys::{self, cudaError_enum as Code};

/// Whether the CUDA driver here is the course's CPU emulator (its device name
/// says so). Asked before the arguments are parsed, so an exercise's default
/// sizes can shrink to what a CPU runs in seconds.
pub fn is_emulator() -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    *ANSWER.get_or_init(|| {
        let mut device = 0;
        let mut name = [0 as std::ffi::c_char; 256];
        // SAFETY: cuInit takes flags 0; `device` and `name` are valid places
        // for the driver to write a device and a NUL-terminated name of at
        // most `name.len()` bytes.
        unsafe {
            sys::cuInit(0) == Code::CUDA_SUCCESS
                && sys::cuDeviceGet(&mut device, 0) == Code::CUDA_SUCCESS
                && sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, device)
                    == Code::CUDA_SUCCESS
                && CStr::from_ptr(name.as_ptr())
                    .to_string_lossy()
                    .contains("emulator")
        }
    })
}
