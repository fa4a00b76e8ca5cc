//! A CPU stand-in for the CUDA driver. Built as `libcuda.so.1` and put first
//! on `LD_LIBRARY_PATH`, it lets the course's binaries, unchanged, run their
//! kernels on the CPU: it parses the PTX they load, decodes it to a register
//! machine, and runs every thread, checking each memory access's bounds and
//! alignment, data races in shared and global memory, and barriers every
//! thread must reach. Faults are reported on stderr with block, thread,
//! address and `kernel.cu` line (`kernels::emulator_output`), and fail the
//! launch with a CUDA error code.
//!
//! The floor plan, from the bottom up (`tests/layers.rs` keeps it): the
//! emulated device's limits ([`device`]) and memory ([`heap`]); the
//! register machine ([`ir`]); the values instructions compute
//! ([`exec::value`]); PTX decoded to the machine ([`decode`]) and a loaded
//! module ([`module`]); the executor ([`exec`]: typed faults, the memory
//! model, the scheduler, the launch); and the driver API ([`driver`]),
//! which alone turns faults into CUDA codes and words.

pub mod decode;
pub mod device;
pub mod driver;
pub mod exec;
pub mod heap;
pub mod ir;
pub mod module;
