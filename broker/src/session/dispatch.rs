//! Which call each request is: one arm a request, to the family's module.

use kernels::broker_wire::Request;

use super::{Answer, Note, Session};

impl Session<'_> {
    /// Makes the call `request` stands for (every request but hello, a
    /// mark and an error's text, which the session answers itself).
    pub(super) fn dispatch(&mut self, request: Request, note: &mut Note) -> Answer {
        use Request::*;
        match request {
            Init { flags } => self.init(flags),
            DriverGetVersion => self.driver_version(),
            DeviceGetCount => self.device_count(),
            DeviceGet { ordinal } => self.device_get(ordinal),
            DeviceGetAttribute { attribute, device } => self.device_attribute(attribute, device),
            DeviceGetName { device } => self.device_name(device),
            DeviceTotalMem { device } => self.device_total_memory(device),
            PrimaryCtxRetain { device } | PrimaryCtxRelease { device } => {
                self.primary_context(device)
            }
            CtxSetCurrent { context } => self.set_current(context),
            CtxGetCurrent => self.current(),
            CtxSynchronize => self.synchronize(note),
            MemAlloc { bytes } => self.alloc(bytes, note),
            MemFree { address } => self.free(address, note),
            MemGetInfo => self.memory_info(),
            MemAllocHost { bytes } => self.alloc_host(bytes, note),
            MemFreeHost { region } => self.free_host(region, note),
            Copy {
                ends,
                bytes,
                stream,
            } => self.copy(ends, bytes, stream, note),
            Memset {
                address,
                width,
                value,
                count,
                stream,
            } => self.memset(address, (width, value), count, stream, note),
            ModuleLoad { image } => self.load_module(image, note),
            ModuleUnload { module } => self.unload_module(module, note),
            ModuleGetFunction { module, name } => self.function(module, &name, note),
            ModuleGetGlobal { module, name } => self.global(module, &name, note),
            FuncGetAttribute {
                function,
                attribute,
            } => self.function_attribute(function, attribute),
            FuncSetAttribute {
                function,
                attribute,
                value,
            } => self.set_function_attribute(function, attribute, value),
            Launch {
                function,
                grid,
                block,
                shared,
                stream,
                params,
            } => self.launch(function, (grid, block, shared), stream, &params, note),
            StreamCreate { flags, priority } => self.create_stream(flags, priority, note),
            StreamDestroy { stream } => self.destroy_stream(stream, note),
            StreamSynchronize { stream } => self.synchronize_stream(stream, note),
            StreamQuery { stream } => self.query_stream(stream, note),
            StreamWaitEvent {
                stream,
                event,
                flags,
            } => self.wait_event(stream, event, flags, note),
            EventCreate { flags } => self.create_event(flags, note),
            EventDestroy { event } => self.destroy_event(event, note),
            EventRecord { event, stream } => self.record_event(event, stream, note),
            EventSynchronize { event } => self.synchronize_event(event, note),
            EventQuery { event } => self.query_event(event, note),
            EventElapsed { start, end } => self.elapsed(start, end, note),
            // The session answers these before dispatching.
            Hello { .. } | Mark { .. } | ErrorText { .. } => Err(super::refuse(
                crate::driver::INVALID_VALUE,
                "this request is the session's, not a driver call",
            )),
        }
    }
}
