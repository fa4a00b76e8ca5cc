//! Modules, kernels and launches. A module's PTX is read with the `ptx`
//! crate as it loads, for its kernels' parameters; a module that defines
//! one of the exercise's entries is replaced by the grader's canary, whose
//! text the client never receives. A launch's parameters arrive as the
//! bytes the PTX declares and are laid out here.

use std::ffi::{CString, c_void};

use kernels::broker_wire::{MAX_LOADED_BYTES, Reply};
use kernels::trace_record::key;

use super::{Answer, Function, Module, Note, Session, record_name, refuse, stream_field};
use crate::driver::{INVALID_IMAGE, INVALID_PTX, INVALID_VALUE, NOT_FOUND, OUT_OF_MEMORY};
use crate::kernel_params;

impl Session<'_> {
    pub(super) fn load_module(&mut self, image: Vec<u8>, note: &mut Note) -> Answer {
        let bytes = image.len();
        note.field(key::BYTES, bytes);
        self.modules.room()?;
        if self.loaded_bytes + bytes > MAX_LOADED_BYTES {
            return Err(refuse(
                OUT_OF_MEMORY,
                format!(
                    "a program may hold at most {MAX_LOADED_BYTES} bytes of PTX loaded at once"
                ),
            ));
        }
        let text = String::from_utf8(image).map_err(|_| {
            refuse(
                INVALID_IMAGE,
                "the module is not PTX text; the broker loads PTX",
            )
        })?;
        let entries = kernel_params::entries(&text).map_err(|err| {
            refuse(
                INVALID_PTX,
                format!("the broker cannot read this PTX: {err}"),
            )
        })?;
        let canary = (self.config.canary.as_ref()).filter(|canary| canary.replaces(&entries));
        let (ptx, entries) = match canary {
            Some(canary) => (canary.text.clone(), canary.entries.clone()),
            None => {
                let ptx = CString::new(text)
                    .map_err(|_| refuse(INVALID_IMAGE, "the PTX holds a NUL byte"))?;
                (ptx, entries)
            }
        };
        note.field(key::CANARY, u8::from(canary.is_some()));
        let real = self.driver.load_module(&ptx)?;
        let module = Module {
            real,
            entries,
            bytes,
        };
        let token = self.modules.insert(&mut self.tokens, module)?;
        self.loaded_bytes += bytes;
        note.hex("module", token);
        Ok(Reply::Value(token))
    }

    pub(super) fn unload_module(&mut self, module: u64, note: &mut Note) -> Answer {
        note.hex("module", module);
        self.driver.unload_module(self.modules.get(module)?.real)?;
        self.loaded_bytes -= self.modules.remove(module)?.bytes;
        self.functions.remove_where(|f| f.module == module);
        self.memory.forget_module(module);
        Ok(Reply::Done)
    }

    /// A kernel of the module, with its parameters' sizes and alignments.
    pub(super) fn function(&mut self, module: u64, name: &str, note: &mut Note) -> Answer {
        note.field(key::KERNEL, record_name(name));
        self.functions.room()?;
        let loaded = self.modules.get(module)?;
        let params = loaded.entries.get(name).ok_or(NOT_FOUND)?;
        let params = params.clone().map_err(|why| refuse(INVALID_VALUE, why))?;
        let c_name = CString::new(name).map_err(|_| NOT_FOUND)?;
        let real = self.driver.function(loaded.real, &c_name)?;
        let layout = params.layout.clone();
        let function = Function {
            real,
            module,
            name: name.to_owned(),
            params,
        };
        let token = self.functions.insert(&mut self.tokens, function)?;
        Ok(Reply::Function {
            function: token,
            params: layout,
        })
    }

    /// A module global: its range joins those copies may touch.
    pub(super) fn global(&mut self, module: u64, name: &str, note: &mut Note) -> Answer {
        note.field("name", record_name(name));
        let real = self.modules.get(module)?.real;
        let c_name = CString::new(name).map_err(|_| NOT_FOUND)?;
        let (address, bytes) = self.driver.global(real, &c_name)?;
        self.memory.add_global(address, bytes, module);
        note.hex(key::DST, address).field(key::BYTES, bytes);
        Ok(Reply::Pair(address, bytes))
    }

    pub(super) fn function_attribute(&mut self, function: u64, attribute: i32) -> Answer {
        let real = self.functions.get(function)?.real;
        let value = self.driver.function_attribute(attribute, real)?;
        Ok(Reply::Int(value.into()))
    }

    pub(super) fn set_function_attribute(
        &mut self,
        function: u64,
        attribute: i32,
        value: i32,
    ) -> Answer {
        let real = self.functions.get(function)?.real;
        self.driver.set_function_attribute(real, attribute, value)?;
        Ok(Reply::Done)
    }

    /// Lays the packed parameter bytes out as the PTX declares them and
    /// launches; records which 8-byte parameters point into the program's
    /// device memory.
    pub(super) fn launch(
        &mut self,
        function: u64,
        (grid, block, shared): ([u32; 3], [u32; 3], u32),
        stream: u64,
        packed: &[u8],
        note: &mut Note,
    ) -> Answer {
        stream_field(note, stream);
        let raw_stream = self.stream(stream)?;
        let called = self.functions.get(function)?;
        let (real, params) = (called.real, called.params.clone());
        let [gx, gy, gz] = grid;
        let [bx, by, bz] = block;
        note.field(key::KERNEL, record_name(&called.name))
            .field(key::GRID, format_args!("{gx},{gy},{gz}"))
            .field(key::BLOCK, format_args!("{bx},{by},{bz}"));
        if packed.len() != params.packed {
            return Err(refuse(
                INVALID_VALUE,
                format!(
                    "the launch passed {} bytes of parameters; the kernel declares {}",
                    packed.len(),
                    params.packed
                ),
            ));
        }
        // 16-byte aligned storage for the largest alignment a parameter
        // of the course's kernels has.
        let mut buffer = vec![0u128; params.bytes.div_ceil(16)];
        let base = buffer.as_mut_ptr().cast::<u8>();
        let mut pointers = Vec::with_capacity(params.layout.len());
        let mut devices = Vec::new();
        let mut from = 0;
        for (layout, &offset) in params.layout.iter().zip(&params.offsets) {
            let bytes = &packed[from..from + layout.size as usize];
            from += bytes.len();
            if let Ok(word) = <[u8; 8]>::try_from(bytes) {
                let value = u64::from_ne_bytes(word);
                if self.memory.holds(value, 0) {
                    devices.push(format!("{value:#x}"));
                }
            }
            // SAFETY: the layout puts every parameter inside the buffer
            // (offset + size <= params.bytes).
            let at = unsafe { base.add(offset) };
            // SAFETY: `bytes` and the buffer's range do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len()) };
            pointers.push(at.cast::<c_void>());
        }
        if !devices.is_empty() {
            note.field(key::POINTERS, devices.join(","));
        }
        // SAFETY: each pointer holds its parameter's declared bytes.
        self.timed(raw_stream, note, |d| unsafe {
            d.launch(real, grid, block, shared, raw_stream, &mut pointers)
        })?;
        Ok(Reply::Done)
    }
}
