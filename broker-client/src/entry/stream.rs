//! Streams and events, as the broker's tokens (streams 0, 1 and 2 are the
//! driver's own null, legacy and per-thread streams).

#![expect(
    clippy::missing_safety_doc,
    reason = "each entry point has the driver's contract (cuda.h), stated in `entry`"
)]

use std::ffi::{c_int, c_uint, c_void};

use kernels::broker_wire::{Reply, Request};

use crate::codes::CuResult;
use crate::connection::{unexpected, with};
use crate::ffi::{handle, needs, token, write_out};

fn create_stream(out: *mut *mut c_void, flags: c_uint, priority: Option<c_int>) -> CuResult {
    with(|c| {
        needs(out)?;
        let t = c.value(&Request::StreamCreate { flags, priority })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(out, handle(t)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut *mut c_void, flags: c_uint) -> CuResult {
    create_stream(stream, flags, None)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    stream: *mut *mut c_void,
    flags: c_uint,
    priority: c_int,
) -> CuResult {
    create_stream(stream, flags, Some(priority))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::StreamDestroy {
            stream: token(stream),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamSynchronize(stream: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::StreamSynchronize {
            stream: token(stream),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamQuery(stream: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::StreamQuery {
            stream: token(stream),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamWaitEvent(
    stream: *mut c_void,
    event: *mut c_void,
    flags: c_uint,
) -> CuResult {
    with(|c| {
        c.done(&Request::StreamWaitEvent {
            stream: token(stream),
            event: token(event),
            flags,
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(event: *mut *mut c_void, flags: c_uint) -> CuResult {
    with(|c| {
        needs(event)?;
        let t = c.value(&Request::EventCreate { flags })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(event, handle(t)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventDestroy_v2(event: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::EventDestroy {
            event: token(event),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventRecord(event: *mut c_void, stream: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::EventRecord {
            event: token(event),
            stream: token(stream),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventSynchronize(event: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::EventSynchronize {
            event: token(event),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventQuery(event: *mut c_void) -> CuResult {
    with(|c| {
        c.done(&Request::EventQuery {
            event: token(event),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> CuResult {
    with(|c| {
        let request = Request::EventElapsed {
            start: token(start),
            end: token(end),
        };
        let elapsed = match c.ask(&request)? {
            Reply::Float(ms) => ms,
            other => return Err(unexpected(&request, &other)),
        };
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(ms, elapsed) }
    })
}
