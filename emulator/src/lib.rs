//! A CPU stand-in for the CUDA driver. Built as `libcuda.so.1` and put first
//! on `LD_LIBRARY_PATH`, it lets the course's binaries, unchanged, run their
//! kernels on the CPU: it parses the PTX they load, decodes it to a register
//! machine, and runs every thread, checking each memory access's bounds and
//! alignment, data races in shared and global memory, and barriers every
//! thread must reach. Faults are reported on stderr with block, thread,
//! address and `kernel.cu` line, and fail the launch with a CUDA error code.

pub mod decode;
pub mod device;
pub mod driver;
pub mod exec;
pub mod ir;
pub mod memory;
pub mod module;
