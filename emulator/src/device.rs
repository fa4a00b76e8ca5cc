//! The emulated device's limits, in one place: what `cuDeviceGetAttribute`
//! reports and what a launch is checked against. A compute capability 7.5
//! device (Turing), the oldest the course targets, so a kernel that fits
//! here fits on every GPU the course runs on.

/// Threads in one block, at most.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Each block dimension, at most.
pub const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
/// Each grid dimension, at most.
pub const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];
/// Static plus dynamic shared memory per block without the opt-in
/// attribute.
pub const SHARED_PER_BLOCK: u32 = 48 * 1024;
/// Shared memory per block with `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`
/// raised: Turing's 64 KiB.
pub const SHARED_PER_BLOCK_OPTIN: u32 = 64 * 1024;
/// Shared memory per multiprocessor.
pub const SHARED_PER_MULTIPROCESSOR: u32 = 64 * 1024;
/// 32-bit registers per block and per multiprocessor.
pub const REGISTERS_PER_BLOCK: u32 = 65536;
/// Multiprocessors: two, so the course's default grids stay small on a CPU.
pub const MULTIPROCESSORS: u32 = 2;
pub const WARP_SIZE: u32 = 32;
/// Compute capability.
pub const COMPUTE: (u32, u32) = (7, 5);
