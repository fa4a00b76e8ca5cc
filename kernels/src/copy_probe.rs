//! This GPU's practical memory bandwidth, measured in the same process as the
//! exercise: a large device-to-device copy, timed like a kernel.

use cust::error::CudaError;
use cust::memory::{AsyncCopyDestination, DeviceBuffer};

use crate::error::CourseError;
use crate::gpu::Gpu;
use crate::stopwatch;

/// Bytes in each of the two buffers: ten times the largest L2 cache (50 MB on
/// an H100), so the copy streams through DRAM rather than the cache.
const PROBE_BYTES: u64 = 512 << 20;

/// The same on the CPU emulator, whose times are the CPU's and judged by
/// nobody: 512 MiB there cost a second of page faults in every run, most of
/// an emulated grading's time.
const EMULATOR_PROBE_BYTES: u64 = 4 << 20;

/// Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes
/// written (as BabelStream does), median of `runs` after a warm-up.
pub fn copy_gb_per_s(gpu: &Gpu, runs: u32) -> Result<f64, CourseError> {
    let during = |err: CudaError| CourseError::from(err).during("measuring copy bandwidth");
    // A quarter of free memory at most, so the probe fits beside anything.
    let probe = crate::gpu::default_size(PROBE_BYTES, EMULATOR_PROBE_BYTES);
    let bytes = probe.min(gpu.free_memory()? / 4) & !255;
    if bytes == 0 {
        return Err(during(CudaError::OutOfMemory));
    }
    let mut source = DeviceBuffer::<u32>::zeroed((bytes / 4) as usize).map_err(during)?;
    // Not zeros: a pattern keeps any cleverness about zero pages out of it.
    source.set_32(0x5eed_c0de).map_err(during)?;
    // SAFETY: every byte is written by the first copy before it is read.
    let mut target = unsafe { DeviceBuffer::<u32>::uninitialized(source.len()) }.map_err(during)?;
    let stream = gpu.stream();
    let ms = stopwatch::median_ms_of("the copy-bandwidth probe", stream, runs, || {
        // SAFETY: both buffers live until the stream is synchronized at the
        // end of each timed run.
        unsafe { target.async_copy_from(&source, stream) }
    })?;
    Ok(2.0 * bytes as f64 / (ms * 1e6))
}
