//! The broker's own entry point: a batch's run ended. `kernels::batch`
//! writes `trace_record::batch_mark` to the tracer's descriptor today; a
//! harness under the broker calls this (found with `dlsym`) instead, and
//! the broker keeps the mark in its record, where the grader cuts it.

use std::ffi::c_char;

use kernels::broker_wire::{MAX_NONCE_BYTES, Request};

use crate::codes::CuResult;
use crate::connection::with;
use crate::ffi::c_name;

/// Marks the end of run `index` of the batch `nonce` (letters, digits, `-`
/// and `_`).
///
/// # Safety
/// `nonce` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuda_course_broker_mark(nonce: *const c_char, index: u64) -> CuResult {
    with(|c| {
        // SAFETY: per this function's contract.
        let nonce = unsafe { c_name(nonce, MAX_NONCE_BYTES) }?;
        c.done(&Request::Mark { nonce, index })
    })
}
