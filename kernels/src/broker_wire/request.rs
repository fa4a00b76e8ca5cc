//! What the client asks: one [`Request`] per driver call (a pageable copy is
//! one per chunk), and its encoding (`decode` reads it back, bounded).

use super::{Reader, WireError, Writer};

/// Where a copy's host bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostPlace {
    /// In page-locked region `region` (a token), `offset` bytes in.
    Region { region: u64, offset: u64 },
    /// In half `half` (0 or 1) of the staging area, from its start: the
    /// chunk of a pageable copy of `total` bytes that starts `at` bytes
    /// into it.
    Staging { half: u8, at: u64, total: u64 },
}

/// A copy's two ends. For a staged chunk, the device address is the whole
/// copy's, and the chunk's lies `at` bytes past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyEnds {
    HtoD { dst: u64, src: HostPlace },
    DtoH { dst: HostPlace, src: u64 },
    DtoD { dst: u64, src: u64 },
}

/// One driver call, as the client forwards it. `stream: None` is the
/// synchronous form of a copy or memset; `Some(s)` its `Async` form on
/// stream token `s` (0, 1 and 2 being the driver's own).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Hello {
        version: u32,
        pid: u32,
    },
    Init {
        flags: u32,
    },
    DriverGetVersion,
    DeviceGetCount,
    DeviceGet {
        ordinal: i32,
    },
    DeviceGetAttribute {
        attribute: i32,
        device: i32,
    },
    DeviceGetName {
        device: i32,
    },
    DeviceTotalMem {
        device: i32,
    },
    PrimaryCtxRetain {
        device: i32,
    },
    PrimaryCtxRelease {
        device: i32,
    },
    CtxSetCurrent {
        context: u64,
    },
    CtxGetCurrent,
    CtxSynchronize,
    /// `cuGetErrorString` when `description`, else `cuGetErrorName`.
    ErrorText {
        code: u32,
        description: bool,
    },
    MemAlloc {
        bytes: u64,
    },
    MemFree {
        address: u64,
    },
    MemGetInfo,
    MemAllocHost {
        bytes: u64,
    },
    MemFreeHost {
        region: u64,
    },
    Copy {
        ends: CopyEnds,
        bytes: u64,
        stream: Option<u64>,
    },
    /// `count` elements of `width` bytes (1 or 4) set to `value`.
    Memset {
        address: u64,
        width: u8,
        value: u32,
        count: u64,
        stream: Option<u64>,
    },
    /// PTX text, without its NUL.
    ModuleLoad {
        image: Vec<u8>,
    },
    ModuleUnload {
        module: u64,
    },
    ModuleGetFunction {
        module: u64,
        name: String,
    },
    ModuleGetGlobal {
        module: u64,
        name: String,
    },
    FuncGetAttribute {
        function: u64,
        attribute: i32,
    },
    FuncSetAttribute {
        function: u64,
        attribute: i32,
        value: i32,
    },
    /// `params`: each parameter's bytes in order, packed, as many as the
    /// function's layout says.
    Launch {
        function: u64,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        stream: u64,
        params: Vec<u8>,
    },
    StreamCreate {
        flags: u32,
        priority: Option<i32>,
    },
    StreamDestroy {
        stream: u64,
    },
    StreamSynchronize {
        stream: u64,
    },
    StreamQuery {
        stream: u64,
    },
    StreamWaitEvent {
        stream: u64,
        event: u64,
        flags: u32,
    },
    EventCreate {
        flags: u32,
    },
    EventDestroy {
        event: u64,
    },
    EventRecord {
        event: u64,
        stream: u64,
    },
    EventSynchronize {
        event: u64,
    },
    EventQuery {
        event: u64,
    },
    EventElapsed {
        start: u64,
        end: u64,
    },
    /// A batch's run ended (`crate::trace_record::batch_mark`).
    Mark {
        nonce: String,
        index: u64,
    },
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.write(&mut w);
        w.0
    }

    fn write(&self, w: &mut Writer) {
        use Request::*;
        match self {
            Hello { version, pid } => w.u8(1).u32(*version).u32(*pid),
            Init { flags } => w.u8(2).u32(*flags),
            DriverGetVersion => w.u8(3),
            DeviceGetCount => w.u8(4),
            DeviceGet { ordinal } => w.u8(5).i32(*ordinal),
            DeviceGetAttribute { attribute, device } => w.u8(6).i32(*attribute).i32(*device),
            DeviceGetName { device } => w.u8(7).i32(*device),
            DeviceTotalMem { device } => w.u8(8).i32(*device),
            PrimaryCtxRetain { device } => w.u8(9).i32(*device),
            PrimaryCtxRelease { device } => w.u8(10).i32(*device),
            CtxSetCurrent { context } => w.u8(11).u64(*context),
            CtxGetCurrent => w.u8(12),
            CtxSynchronize => w.u8(13),
            ErrorText { code, description } => w.u8(14).u32(*code).u8(u8::from(*description)),
            MemAlloc { bytes } => w.u8(20).u64(*bytes),
            MemFree { address } => w.u8(21).u64(*address),
            MemGetInfo => w.u8(22),
            MemAllocHost { bytes } => w.u8(23).u64(*bytes),
            MemFreeHost { region } => w.u8(24).u64(*region),
            Copy {
                ends,
                bytes,
                stream,
            } => write_copy(w.u8(25), ends).u64(*bytes).option(*stream),
            Memset {
                address,
                width,
                value,
                count,
                stream,
            } => w
                .u8(26)
                .u64(*address)
                .u8(*width)
                .u32(*value)
                .u64(*count)
                .option(*stream),
            ModuleLoad { image } => w.u8(30).bytes(image),
            ModuleUnload { module } => w.u8(31).u64(*module),
            ModuleGetFunction { module, name } => w.u8(32).u64(*module).bytes(name.as_bytes()),
            ModuleGetGlobal { module, name } => w.u8(33).u64(*module).bytes(name.as_bytes()),
            FuncGetAttribute {
                function,
                attribute,
            } => w.u8(34).u64(*function).i32(*attribute),
            FuncSetAttribute {
                function,
                attribute,
                value,
            } => w.u8(35).u64(*function).i32(*attribute).i32(*value),
            Launch {
                function,
                grid,
                block,
                shared,
                stream,
                params,
            } => {
                w.u8(36).u64(*function);
                for v in grid.iter().chain(block) {
                    w.u32(*v);
                }
                w.u32(*shared).u64(*stream).bytes(params)
            }
            StreamCreate { flags, priority } => w
                .u8(40)
                .u32(*flags)
                .option(priority.map(|p| p as u32 as u64)),
            StreamDestroy { stream } => w.u8(41).u64(*stream),
            StreamSynchronize { stream } => w.u8(42).u64(*stream),
            StreamQuery { stream } => w.u8(43).u64(*stream),
            StreamWaitEvent {
                stream,
                event,
                flags,
            } => w.u8(44).u64(*stream).u64(*event).u32(*flags),
            EventCreate { flags } => w.u8(50).u32(*flags),
            EventDestroy { event } => w.u8(51).u64(*event),
            EventRecord { event, stream } => w.u8(52).u64(*event).u64(*stream),
            EventSynchronize { event } => w.u8(53).u64(*event),
            EventQuery { event } => w.u8(54).u64(*event),
            EventElapsed { start, end } => w.u8(55).u64(*start).u64(*end),
            Mark { nonce, index } => w.u8(60).bytes(nonce.as_bytes()).u64(*index),
        };
    }
}

fn write_place<'w>(w: &'w mut Writer, place: &HostPlace) -> &'w mut Writer {
    match *place {
        HostPlace::Region { region, offset } => w.u8(0).u64(region).u64(offset),
        HostPlace::Staging { half, at, total } => w.u8(1).u8(half).u64(at).u64(total),
    }
}

fn write_copy<'w>(w: &'w mut Writer, ends: &CopyEnds) -> &'w mut Writer {
    match ends {
        CopyEnds::HtoD { dst, src } => write_place(w.u8(0).u64(*dst), src),
        CopyEnds::DtoH { dst, src } => write_place(w.u8(1), dst).u64(*src),
        CopyEnds::DtoD { dst, src } => w.u8(2).u64(*dst).u64(*src),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MAX_FRAME_BYTES, noise};
    use super::*;

    /// One of every request, with values that use every field's width.
    fn every_request() -> Vec<Request> {
        use Request::*;
        let region = HostPlace::Region {
            region: 0x110,
            offset: u64::MAX,
        };
        let staged = HostPlace::Staging {
            half: 1,
            at: 16,
            total: 32,
        };
        vec![
            Hello { version: 1, pid: 7 },
            Init { flags: 0 },
            DriverGetVersion,
            DeviceGetCount,
            DeviceGet { ordinal: -1 },
            DeviceGetAttribute {
                attribute: 16,
                device: 0,
            },
            DeviceGetName { device: 0 },
            DeviceTotalMem { device: 0 },
            PrimaryCtxRetain { device: 0 },
            PrimaryCtxRelease { device: 0 },
            CtxSetCurrent { context: 0xc0 },
            CtxGetCurrent,
            CtxSynchronize,
            ErrorText {
                code: 700,
                description: true,
            },
            MemAlloc { bytes: 1 << 40 },
            MemFree { address: 0x7f00 },
            MemGetInfo,
            MemAllocHost { bytes: 4096 },
            MemFreeHost { region: 0x110 },
            Copy {
                ends: CopyEnds::HtoD {
                    dst: 0x7f00,
                    src: region,
                },
                bytes: 8,
                stream: Some(0x120),
            },
            Copy {
                ends: CopyEnds::DtoH {
                    dst: staged,
                    src: 0x7f00,
                },
                bytes: 16,
                stream: None,
            },
            Copy {
                ends: CopyEnds::DtoD { dst: 1, src: 2 },
                bytes: 3,
                stream: Some(0),
            },
            Memset {
                address: 0x7f00,
                width: 4,
                value: u32::MAX,
                count: 9,
                stream: None,
            },
            ModuleLoad {
                image: b".version 7.0".to_vec(),
            },
            ModuleUnload { module: 0x130 },
            ModuleGetFunction {
                module: 0x130,
                name: "vecadd".into(),
            },
            ModuleGetGlobal {
                module: 0x130,
                name: "table".into(),
            },
            FuncGetAttribute {
                function: 0x140,
                attribute: 8,
            },
            FuncSetAttribute {
                function: 0x140,
                attribute: 8,
                value: -1,
            },
            Launch {
                function: 0x140,
                grid: [1, 2, 3],
                block: [4, 5, 6],
                shared: 7,
                stream: 2,
                params: vec![1, 2, 3, 4, 5, 6, 7, 8],
            },
            StreamCreate {
                flags: 1,
                priority: Some(-1),
            },
            StreamCreate {
                flags: 0,
                priority: None,
            },
            StreamDestroy { stream: 0x150 },
            StreamSynchronize { stream: 1 },
            StreamQuery { stream: 0x150 },
            StreamWaitEvent {
                stream: 0x150,
                event: 0x160,
                flags: 0,
            },
            EventCreate { flags: 2 },
            EventDestroy { event: 0x160 },
            EventRecord {
                event: 0x160,
                stream: 0,
            },
            EventSynchronize { event: 0x160 },
            EventQuery { event: 0x160 },
            EventElapsed {
                start: 0x160,
                end: 0x170,
            },
            Mark {
                nonce: "0123456789abcdef".into(),
                index: 3,
            },
        ]
    }

    #[test]
    fn every_request_comes_back_as_it_went() {
        for request in every_request() {
            let body = request.encode();
            assert!(body.len() <= MAX_FRAME_BYTES);
            assert_eq!(Request::decode(&body), Ok(request.clone()), "{request:?}");
            // Every prefix is cut short, and one byte more is trailing.
            for cut in 0..body.len() {
                assert!(
                    Request::decode(&body[..cut]).is_err(),
                    "{request:?} at {cut}"
                );
            }
            let mut longer = body.clone();
            longer.push(0);
            assert_eq!(
                Request::decode(&longer),
                Err(WireError::Trailing { bytes: 1 })
            );
        }
    }

    #[test]
    fn values_the_protocol_does_not_have_are_refused() {
        let mut staged = Request::Copy {
            ends: CopyEnds::HtoD {
                dst: 0,
                src: HostPlace::Staging {
                    half: 0,
                    at: 0,
                    total: 1,
                },
            },
            bytes: 1,
            stream: None,
        }
        .encode();
        // tag, direction, destination, host place, then the half.
        staged[11] = 2;
        assert!(matches!(
            Request::decode(&staged),
            Err(WireError::BadValue {
                what: "staging half",
                ..
            })
        ));
        assert_eq!(
            Request::decode(&[99]),
            Err(WireError::UnknownTag { tag: 99 })
        );
        let mut memset = Request::Memset {
            address: 0,
            width: 4,
            value: 0,
            count: 0,
            stream: None,
        }
        .encode();
        memset[9] = 2;
        assert!(matches!(
            Request::decode(&memset),
            Err(WireError::BadValue {
                what: "memset width",
                ..
            })
        ));
        let mut name = Request::ModuleGetFunction {
            module: 1,
            name: "k".into(),
        }
        .encode();
        *name.last_mut().unwrap() = 0xff;
        assert!(matches!(
            Request::decode(&name),
            Err(WireError::NotText { .. })
        ));
    }

    #[test]
    fn random_bytes_never_panic_the_decoder() {
        for seed in 0..20_000u64 {
            let length = (seed % 97) as usize;
            let _ = Request::decode(&noise(seed, length));
        }
        // Each valid request with one byte changed decodes or is refused.
        for (i, request) in every_request().iter().enumerate() {
            let body = request.encode();
            for at in 0..body.len() {
                let mut changed = body.clone();
                changed[at] ^= noise(i as u64 * 1000 + at as u64, 1)[0] | 1;
                let _ = Request::decode(&changed);
            }
        }
    }
}
