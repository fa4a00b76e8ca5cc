//! The client `libcuda.so.1` (issue 50): a student's binary loads it in
//! place of the driver (its soname is `libcuda.so.1`, see build.rs) and
//! each driver call it makes is forwarded to the grader's GPU broker over
//! the socket [`kernels::broker_wire::FD_VARIABLE`] names, in that
//! module's protocol. Nothing here can reach a GPU: the sandbox has none,
//! and the broker checks everything it is sent. What the client does is
//! make the program's calls work as they would on the driver: page-locked
//! memory shared with the broker, pageable copies through a staging
//! area, kernel parameters read as the PTX declares them, handles as the
//! broker's tokens. Without a broker every call answers
//! `CUDA_ERROR_NO_DEVICE`, and one line on stderr says why.

pub mod codes;
pub mod connection;
pub mod entry;
pub mod ffi;
pub mod host_memory;
