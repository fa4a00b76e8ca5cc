//! Decoding the client's requests: every read bounded and checked, so any
//! bytes give a request or a [`WireError`], never a panic, and never more
//! memory than the frame's own bytes.

use super::request::{CopyEnds, HostPlace, Request};
use super::{MAX_IMAGE_BYTES, MAX_NAME_BYTES, MAX_NONCE_BYTES, MAX_PARAM_BYTES, Reader, WireError};

impl Request {
    /// Decodes one frame's body: any bytes give a request or an error.
    pub fn decode(body: &[u8]) -> Result<Request, WireError> {
        let mut r = Reader(body);
        let request = self::request(&mut r)?;
        r.finish()?;
        Ok(request)
    }
}

/// One request, by its tag's family.
pub(super) fn request(r: &mut Reader) -> Result<Request, WireError> {
    let tag = r.u8("tag")?;
    match tag {
        0..20 => device(tag, r),
        20..30 => memory(tag, r),
        30..40 => module(tag, r),
        _ => stream(tag, r),
    }
}

/// Hello, start-up, the device, the context, error texts.
fn device(tag: u8, r: &mut Reader) -> Result<Request, WireError> {
    use Request::*;
    Ok(match tag {
        1 => Hello {
            version: r.u32("version")?,
            pid: r.u32("pid")?,
        },
        2 => Init {
            flags: r.u32("flags")?,
        },
        3 => DriverGetVersion,
        4 => DeviceGetCount,
        5 => DeviceGet {
            ordinal: r.i32("ordinal")?,
        },
        6 => DeviceGetAttribute {
            attribute: r.i32("attribute")?,
            device: r.i32("device")?,
        },
        7 => DeviceGetName {
            device: r.i32("device")?,
        },
        8 => DeviceTotalMem {
            device: r.i32("device")?,
        },
        9 => PrimaryCtxRetain {
            device: r.i32("device")?,
        },
        10 => PrimaryCtxRelease {
            device: r.i32("device")?,
        },
        11 => CtxSetCurrent {
            context: r.u64("context")?,
        },
        12 => CtxGetCurrent,
        13 => CtxSynchronize,
        14 => ErrorText {
            code: r.u32("code")?,
            description: r.flag("description")?,
        },
        tag => return Err(WireError::UnknownTag { tag }),
    })
}

/// Allocations, page-locked memory, copies, memsets.
fn memory(tag: u8, r: &mut Reader) -> Result<Request, WireError> {
    use Request::*;
    Ok(match tag {
        20 => MemAlloc {
            bytes: r.u64("bytes")?,
        },
        21 => MemFree {
            address: r.u64("address")?,
        },
        22 => MemGetInfo,
        23 => MemAllocHost {
            bytes: r.u64("bytes")?,
        },
        24 => MemFreeHost {
            region: r.u64("region")?,
        },
        25 => Copy {
            ends: read_copy(r)?,
            bytes: r.u64("bytes")?,
            stream: r.option("stream")?,
        },
        26 => read_memset(r)?,
        tag => return Err(WireError::UnknownTag { tag }),
    })
}

/// Modules, kernels, launches.
fn module(tag: u8, r: &mut Reader) -> Result<Request, WireError> {
    use Request::*;
    Ok(match tag {
        30 => ModuleLoad {
            image: r.bytes(MAX_IMAGE_BYTES, "image")?.to_vec(),
        },
        31 => ModuleUnload {
            module: r.u64("module")?,
        },
        32 => ModuleGetFunction {
            module: r.u64("module")?,
            name: r.text(MAX_NAME_BYTES, "name")?,
        },
        33 => ModuleGetGlobal {
            module: r.u64("module")?,
            name: r.text(MAX_NAME_BYTES, "name")?,
        },
        34 => FuncGetAttribute {
            function: r.u64("function")?,
            attribute: r.i32("attribute")?,
        },
        35 => FuncSetAttribute {
            function: r.u64("function")?,
            attribute: r.i32("attribute")?,
            value: r.i32("value")?,
        },
        36 => read_launch(r)?,
        tag => return Err(WireError::UnknownTag { tag }),
    })
}

/// Streams, events, marks.
fn stream(tag: u8, r: &mut Reader) -> Result<Request, WireError> {
    use Request::*;
    Ok(match tag {
        40 => StreamCreate {
            flags: r.u32("flags")?,
            priority: r.option("priority")?.map(|p| p as u32 as i32),
        },
        41 => StreamDestroy {
            stream: r.u64("stream")?,
        },
        42 => StreamSynchronize {
            stream: r.u64("stream")?,
        },
        43 => StreamQuery {
            stream: r.u64("stream")?,
        },
        44 => StreamWaitEvent {
            stream: r.u64("stream")?,
            event: r.u64("event")?,
            flags: r.u32("flags")?,
        },
        50 => EventCreate {
            flags: r.u32("flags")?,
        },
        51 => EventDestroy {
            event: r.u64("event")?,
        },
        52 => EventRecord {
            event: r.u64("event")?,
            stream: r.u64("stream")?,
        },
        53 => EventSynchronize {
            event: r.u64("event")?,
        },
        54 => EventQuery {
            event: r.u64("event")?,
        },
        55 => EventElapsed {
            start: r.u64("start event")?,
            end: r.u64("end event")?,
        },
        60 => Mark {
            nonce: r.text(MAX_NONCE_BYTES, "nonce")?,
            index: r.u64("index")?,
        },
        tag => return Err(WireError::UnknownTag { tag }),
    })
}

fn read_place(r: &mut Reader) -> Result<HostPlace, WireError> {
    match r.u8("host place")? {
        0 => Ok(HostPlace::Region {
            region: r.u64("region")?,
            offset: r.u64("offset")?,
        }),
        1 => Ok(HostPlace::Staging {
            half: match r.u8("staging half")? {
                half @ (0 | 1) => half,
                other => {
                    return Err(WireError::BadValue {
                        what: "staging half",
                        value: other.into(),
                    });
                }
            },
            at: r.u64("offset in the copy")?,
            total: r.u64("copy's bytes")?,
        }),
        other => Err(WireError::BadValue {
            what: "host place",
            value: other.into(),
        }),
    }
}

fn read_copy(r: &mut Reader) -> Result<CopyEnds, WireError> {
    match r.u8("direction")? {
        0 => Ok(CopyEnds::HtoD {
            dst: r.u64("destination")?,
            src: read_place(r)?,
        }),
        1 => Ok(CopyEnds::DtoH {
            dst: read_place(r)?,
            src: r.u64("source")?,
        }),
        2 => Ok(CopyEnds::DtoD {
            dst: r.u64("destination")?,
            src: r.u64("source")?,
        }),
        other => Err(WireError::BadValue {
            what: "direction",
            value: other.into(),
        }),
    }
}

fn read_memset(r: &mut Reader) -> Result<Request, WireError> {
    let address = r.u64("address")?;
    let width = r.u8("width")?;
    if width != 1 && width != 4 {
        return Err(WireError::BadValue {
            what: "memset width",
            value: width.into(),
        });
    }
    Ok(Request::Memset {
        address,
        width,
        value: r.u32("value")?,
        count: r.u64("count")?,
        stream: r.option("stream")?,
    })
}

fn read_launch(r: &mut Reader) -> Result<Request, WireError> {
    let function = r.u64("function")?;
    let mut shape = [0u32; 6];
    for v in &mut shape {
        *v = r.u32("launch shape")?;
    }
    Ok(Request::Launch {
        function,
        grid: [shape[0], shape[1], shape[2]],
        block: [shape[3], shape[4], shape[5]],
        shared: r.u32("shared bytes")?,
        stream: r.u64("stream")?,
        params: r.bytes(MAX_PARAM_BYTES, "parameters")?.to_vec(),
    })
}
