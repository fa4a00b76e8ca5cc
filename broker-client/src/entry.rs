//! The driver's entry points, as the course's binaries import them (`nm -D
//! --undefined-only` on them lists these), by family, and the one entry
//! point of the broker's own, [`mark::cuda_course_broker_mark`].
//!
//! # Safety
//! Every function here is called from C with the driver API's contract
//! (cuda.h): out-pointers are null or writable, strings NUL-terminated,
//! host pointers cover the byte counts given, and `kernelParams` holds one
//! pointer per kernel parameter, each to a value of that parameter's size.

pub mod device;
pub mod mark;
pub mod memory;
pub mod module;
pub mod stream;
