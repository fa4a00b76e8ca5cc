//! The C ABI: every `cu*` function the course binaries import, with the
//! driver's signatures and result codes.

pub mod codes;
pub mod device_api;
pub mod function_api;
pub mod memory_api;
pub mod module_api;
pub mod state;
pub mod stream_api;
