//! The C ABI: every `cu*` function the course binaries import, with the
//! driver's signatures and result codes. The one place a typed fault of the
//! executor becomes a CUDA error code and the student's words (`fault`,
//! `limits`, `launch`), as wasmi's C API maps its `TrapCode`s.

pub mod accesses;
pub mod codes;
pub mod counters;
pub mod device_api;
pub mod fault;
pub mod function_api;
pub mod launch;
pub mod limits;
pub mod memory_api;
pub mod module_api;
pub mod state;
pub mod stream_api;
