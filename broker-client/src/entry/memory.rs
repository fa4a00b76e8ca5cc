//! Device memory, page-locked host memory, copies and memsets. A copy
//! whose host range lies inside a page-locked region travels as (region,
//! offset, bytes): the broker's copy is DMA from those very pages. Any
//! other host range is pageable and goes through the staging area a chunk
//! at a time, as the driver's own pageable copies do.

#![expect(
    clippy::missing_safety_doc,
    reason = "each entry point has the driver's contract (cuda.h), stated in `entry`"
)]

use std::ffi::{c_uchar, c_uint, c_void};

use kernels::broker_wire::{CopyEnds, HostPlace, Reply, Request};

use crate::codes::{CuResult, INVALID_VALUE, OUT_OF_MEMORY};
use crate::connection::{Connection, Fault, unexpected, with};
use crate::ffi::{needs, token, write_out};
use crate::host_memory::{Mapping, Region};

type DevicePtr = u64;
type Stream = *mut c_void;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(out: *mut DevicePtr, bytes: usize) -> CuResult {
    with(|c| {
        needs(out)?;
        let base = c.value(&Request::MemAlloc {
            bytes: bytes as u64,
        })?;
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(out, base) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFree_v2(address: DevicePtr) -> CuResult {
    with(|c| c.done(&Request::MemFree { address }))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CuResult {
    with(|c| {
        let (f, t) = c.pair(&Request::MemGetInfo)?;
        // SAFETY: the caller's out-pointers, per the contract.
        unsafe {
            write_out(free, f as usize)?;
            write_out(total, t as usize)
        }
    })
}

/// Page-locked memory: a memfd the broker made, registered with the
/// driver there and mapped here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocHost_v2(out: *mut *mut c_void, bytes: usize) -> CuResult {
    with(|c| {
        needs(out)?;
        let request = Request::MemAllocHost {
            bytes: bytes as u64,
        };
        let (reply, fds) = c.ask_with_fds(&request)?;
        let (Reply::Region { region, bytes }, Some(fd)) = (&reply, fds.into_iter().next()) else {
            return Err(unexpected(&request, &reply));
        };
        let Some(mapping) = Mapping::map(fd, *bytes) else {
            c.done(&Request::MemFreeHost { region: *region })?;
            return Err(OUT_OF_MEMORY.into());
        };
        let base = c.regions.add(Region {
            token: *region,
            mapping,
        });
        // SAFETY: the caller's out-pointer, per the contract.
        unsafe { write_out(out, base) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFreeHost(buffer: *mut c_void) -> CuResult {
    with(|c| {
        let region = c.regions.token_at(buffer as usize).ok_or(INVALID_VALUE)?;
        c.done(&Request::MemFreeHost { region })?;
        c.regions.remove(buffer as usize);
        Ok(())
    })
}

/// A pageable copy of `bytes` through the staging area's halves by turns:
/// for each chunk (at least one, for a copy of 0 bytes), `fill` before its
/// request and `drain` after, each given the chunk's start in its half,
/// where it lies in the copy and its length.
fn through_staging(
    c: &mut Connection,
    bytes: usize,
    request: impl Fn(HostPlace, u64) -> Request,
    mut fill: impl FnMut(*mut u8, usize, usize),
    mut drain: impl FnMut(*mut u8, usize, usize),
) -> Result<(), Fault> {
    let mut at = 0;
    loop {
        let chunk = (bytes - at).min(c.staging.chunk_bytes());
        let (half, start) = c.staging.next_half();
        fill(start, at, chunk);
        let place = HostPlace::Staging {
            half,
            at: at as u64,
            total: bytes as u64,
        };
        c.done(&request(place, chunk as u64))?;
        drain(start, at, chunk);
        at += chunk;
        if at >= bytes {
            return Ok(());
        }
    }
}

/// Host to device: from a page-locked region in one request, else through
/// the staging area.
fn to_device(
    c: &mut Connection,
    dst: DevicePtr,
    src: *const c_void,
    bytes: usize,
    stream: Option<Stream>,
) -> Result<(), Fault> {
    let stream = stream.map(token);
    let copy = |src, bytes| Request::Copy {
        ends: CopyEnds::HtoD { dst, src },
        bytes,
        stream,
    };
    if let Some((region, offset)) = c.regions.find(src as usize, bytes) {
        return c.done(&copy(HostPlace::Region { region, offset }, bytes as u64));
    }
    if src.is_null() && bytes > 0 {
        return Err(INVALID_VALUE.into());
    }
    let fill = |start: *mut u8, at: usize, chunk: usize| {
        if chunk > 0 {
            // SAFETY: the caller's source covers `bytes`, per the contract;
            // the staging half holds `chunk` <= its size.
            unsafe { std::ptr::copy_nonoverlapping(src.cast::<u8>().add(at), start, chunk) };
        }
    };
    through_staging(c, bytes, copy, fill, |_, _, _| {})
}

/// Device to host, as [`to_device`] the other way.
fn to_host(
    c: &mut Connection,
    dst: *mut c_void,
    src: DevicePtr,
    bytes: usize,
    stream: Option<Stream>,
) -> Result<(), Fault> {
    let stream = stream.map(token);
    let copy = |dst, bytes| Request::Copy {
        ends: CopyEnds::DtoH { dst, src },
        bytes,
        stream,
    };
    if let Some((region, offset)) = c.regions.find(dst as usize, bytes) {
        return c.done(&copy(HostPlace::Region { region, offset }, bytes as u64));
    }
    if dst.is_null() && bytes > 0 {
        return Err(INVALID_VALUE.into());
    }
    let drain = |start: *mut u8, at: usize, chunk: usize| {
        if chunk > 0 {
            // SAFETY: the caller's destination covers `bytes`, per the
            // contract; the staging half holds the chunk the broker wrote.
            unsafe { std::ptr::copy_nonoverlapping(start, dst.cast::<u8>().add(at), chunk) };
        }
    };
    through_staging(c, bytes, copy, |_, _, _| {}, drain)
}

fn device_to_device(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    stream: Option<Stream>,
) -> CuResult {
    with(|c| {
        let ends = CopyEnds::DtoD { dst, src };
        c.done(&Request::Copy {
            ends,
            bytes: bytes as u64,
            stream: stream.map(token),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dst: DevicePtr,
    src: *const c_void,
    bytes: usize,
) -> CuResult {
    with(|c| to_device(c, dst, src, bytes, None))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    dst: *mut c_void,
    src: DevicePtr,
    bytes: usize,
) -> CuResult {
    with(|c| to_host(c, dst, src, bytes, None))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(dst: DevicePtr, src: DevicePtr, bytes: usize) -> CuResult {
    device_to_device(dst, src, bytes, None)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: DevicePtr,
    src: *const c_void,
    bytes: usize,
    stream: Stream,
) -> CuResult {
    with(|c| to_device(c, dst, src, bytes, Some(stream)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: DevicePtr,
    bytes: usize,
    stream: Stream,
) -> CuResult {
    with(|c| to_host(c, dst, src, bytes, Some(stream)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    stream: Stream,
) -> CuResult {
    device_to_device(dst, src, bytes, Some(stream))
}

fn memset(
    address: DevicePtr,
    width: u8,
    value: u32,
    count: usize,
    stream: Option<Stream>,
) -> CuResult {
    with(|c| {
        c.done(&Request::Memset {
            address,
            width,
            value,
            count: count as u64,
            stream: stream.map(token),
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8_v2(
    address: DevicePtr,
    value: c_uchar,
    count: usize,
) -> CuResult {
    memset(address, 1, value.into(), count, None)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD32_v2(
    address: DevicePtr,
    value: c_uint,
    count: usize,
) -> CuResult {
    memset(address, 4, value, count, None)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8Async(
    address: DevicePtr,
    value: c_uchar,
    count: usize,
    stream: Stream,
) -> CuResult {
    memset(address, 1, value.into(), count, Some(stream))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD32Async(
    address: DevicePtr,
    value: c_uint,
    count: usize,
    stream: Stream,
) -> CuResult {
    memset(address, 4, value, count, Some(stream))
}
