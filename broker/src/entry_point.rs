//! The driver entry point each request stands for, as the record names
//! it (`SEQ PID CALL ...`): the call the program made, whichever request
//! carried it.

use kernels::broker_wire::{CopyEnds, Request};

/// The driver entry point `request` stands for, as the record names it.
pub fn entry_point(request: &Request) -> &'static str {
    use Request::*;
    match request {
        Hello { .. } => "hello",
        Init { .. } => "cuInit",
        DriverGetVersion => "cuDriverGetVersion",
        DeviceGetCount => "cuDeviceGetCount",
        DeviceGet { .. } => "cuDeviceGet",
        DeviceGetAttribute { .. } => "cuDeviceGetAttribute",
        DeviceGetName { .. } => "cuDeviceGetName",
        DeviceTotalMem { .. } => "cuDeviceTotalMem_v2",
        PrimaryCtxRetain { .. } => "cuDevicePrimaryCtxRetain",
        PrimaryCtxRelease { .. } => "cuDevicePrimaryCtxRelease_v2",
        CtxSetCurrent { .. } => "cuCtxSetCurrent",
        CtxGetCurrent => "cuCtxGetCurrent",
        CtxSynchronize => "cuCtxSynchronize",
        ErrorText { description, .. } => match description {
            true => "cuGetErrorString",
            false => "cuGetErrorName",
        },
        MemAlloc { .. } => "cuMemAlloc_v2",
        MemFree { .. } => "cuMemFree_v2",
        MemGetInfo => "cuMemGetInfo_v2",
        MemAllocHost { .. } => "cuMemAllocHost_v2",
        MemFreeHost { .. } => "cuMemFreeHost",
        Copy { ends, stream, .. } => copy(ends, stream.is_some()),
        Memset { width, stream, .. } => match (width, stream.is_some()) {
            (1, false) => "cuMemsetD8_v2",
            (1, true) => "cuMemsetD8Async",
            (_, false) => "cuMemsetD32_v2",
            (_, true) => "cuMemsetD32Async",
        },
        ModuleLoad { .. } => "cuModuleLoadData",
        ModuleUnload { .. } => "cuModuleUnload",
        ModuleGetFunction { .. } => "cuModuleGetFunction",
        ModuleGetGlobal { .. } => "cuModuleGetGlobal_v2",
        FuncGetAttribute { .. } => "cuFuncGetAttribute",
        FuncSetAttribute { .. } => "cuFuncSetAttribute",
        Launch { .. } => "cuLaunchKernel",
        StreamCreate { priority: None, .. } => "cuStreamCreate",
        StreamCreate { .. } => "cuStreamCreateWithPriority",
        StreamDestroy { .. } => "cuStreamDestroy_v2",
        StreamSynchronize { .. } => "cuStreamSynchronize",
        StreamQuery { .. } => "cuStreamQuery",
        StreamWaitEvent { .. } => "cuStreamWaitEvent",
        EventCreate { .. } => "cuEventCreate",
        EventDestroy { .. } => "cuEventDestroy_v2",
        EventRecord { .. } => "cuEventRecord",
        EventSynchronize { .. } => "cuEventSynchronize",
        EventQuery { .. } => "cuEventQuery",
        EventElapsed { .. } => "cuEventElapsedTime",
        Mark { .. } => "mark",
    }
}

fn copy(ends: &CopyEnds, is_async: bool) -> &'static str {
    match (ends, is_async) {
        (CopyEnds::HtoD { .. }, false) => "cuMemcpyHtoD_v2",
        (CopyEnds::HtoD { .. }, true) => "cuMemcpyHtoDAsync_v2",
        (CopyEnds::DtoH { .. }, false) => "cuMemcpyDtoH_v2",
        (CopyEnds::DtoH { .. }, true) => "cuMemcpyDtoHAsync_v2",
        (CopyEnds::DtoD { .. }, false) => "cuMemcpyDtoD_v2",
        (CopyEnds::DtoD { .. }, true) => "cuMemcpyDtoDAsync_v2",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::broker_wire::HostPlace;

    /// One request of every kind (both StreamCreate forms).
    fn every_kind() -> Vec<Request> {
        use Request::*;
        let host = HostPlace::Region {
            region: 1,
            offset: 0,
        };
        let copy = |ends, stream| Copy {
            ends,
            bytes: 4,
            stream,
        };
        let memset = |width, stream| Memset {
            address: 0,
            width,
            value: 0,
            count: 1,
            stream,
        };
        vec![
            Hello { version: 1, pid: 1 },
            Init { flags: 0 },
            DriverGetVersion,
            DeviceGetCount,
            DeviceGet { ordinal: 0 },
            DeviceGetAttribute {
                attribute: 1,
                device: 0,
            },
            DeviceGetName { device: 0 },
            DeviceTotalMem { device: 0 },
            PrimaryCtxRetain { device: 0 },
            PrimaryCtxRelease { device: 0 },
            CtxSetCurrent { context: 0 },
            CtxGetCurrent,
            CtxSynchronize,
            ErrorText {
                code: 1,
                description: false,
            },
            ErrorText {
                code: 1,
                description: true,
            },
            MemAlloc { bytes: 1 },
            MemFree { address: 0 },
            MemGetInfo,
            MemAllocHost { bytes: 1 },
            MemFreeHost { region: 1 },
            copy(CopyEnds::HtoD { dst: 0, src: host }, None),
            copy(CopyEnds::HtoD { dst: 0, src: host }, Some(0)),
            copy(CopyEnds::DtoH { dst: host, src: 0 }, None),
            copy(CopyEnds::DtoH { dst: host, src: 0 }, Some(0)),
            copy(CopyEnds::DtoD { dst: 0, src: 0 }, None),
            copy(CopyEnds::DtoD { dst: 0, src: 0 }, Some(0)),
            memset(1, None),
            memset(1, Some(0)),
            memset(4, None),
            memset(4, Some(0)),
            ModuleLoad { image: vec![] },
            ModuleUnload { module: 1 },
            ModuleGetFunction {
                module: 1,
                name: "k".into(),
            },
            ModuleGetGlobal {
                module: 1,
                name: "g".into(),
            },
            FuncGetAttribute {
                function: 1,
                attribute: 0,
            },
            FuncSetAttribute {
                function: 1,
                attribute: 0,
                value: 0,
            },
            Launch {
                function: 1,
                grid: [1; 3],
                block: [1; 3],
                shared: 0,
                stream: 0,
                params: vec![],
            },
            StreamCreate {
                flags: 0,
                priority: None,
            },
            StreamCreate {
                flags: 0,
                priority: Some(0),
            },
            StreamDestroy { stream: 1 },
            StreamSynchronize { stream: 1 },
            StreamQuery { stream: 1 },
            StreamWaitEvent {
                stream: 1,
                event: 1,
                flags: 0,
            },
            EventCreate { flags: 0 },
            EventDestroy { event: 1 },
            EventRecord {
                event: 1,
                stream: 0,
            },
            EventSynchronize { event: 1 },
            EventQuery { event: 1 },
            EventElapsed { start: 1, end: 2 },
            Mark {
                nonce: "n".into(),
                index: 0,
            },
        ]
    }

    #[test]
    fn each_request_names_its_driver_call_and_the_names_differ() {
        let names: Vec<&str> = every_kind().iter().map(entry_point).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(names.contains(&"cuMemcpyDtoH_v2") && names.contains(&"cuMemsetD32_v2"));
        // The client's entry points, every one of them named here.
        let exported = include_str!("../../broker-client/src/entry/memory.rs");
        for name in names.iter().filter(|n| n.starts_with("cuMem")) {
            assert!(exported.contains(&format!("fn {name}(")), "{name}");
        }
    }
}
