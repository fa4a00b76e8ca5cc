//! streams-overlap: copies and kernels overlapped with pinned host memory
//! and several streams.
//!
//! The job is cut into chunks, and each chunk has three stages: copy in,
//! kernel, copy out. In one stream they run one after another. Spread over
//! several streams, one chunk's copy in can run while another's kernel runs
//! and a third's copy out, because the GPU has separate engines for copies
//! each way and for kernels. That only works from pinned (page-locked) host
//! memory: a copy from ordinary memory goes through a staging buffer and
//! makes the host wait.
//!
//! The course's harness (kernels::streams) runs the stages below for every
//! chunk, first in one stream and then in several, times everything with
//! events and checks every element. `cargo run -p streams-overlap -- --help`
//! lists the flags; `--timeline run.svg` draws the overlapped run.

use std::process::ExitCode;

use cust::memory::{AsyncCopyDestination, LockedBuffer};
use cust::prelude::*;
use kernels::streams::driver::{Chunk, GpuOutput, Stages, Task, measure_pipelines, run_exercise};
use kernels::{CourseError, Gpu};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

/// Threads per block for the kernel.
const THREADS: u32 = 256;

fn main() -> ExitCode {
    run_exercise(overlap_on_gpu)
}

/// The buffers and the kernel the stages use.
struct Transform<'m> {
    kernel: Function<'m>,
    work: u32,
    h_in: LockedBuffer<u32>,
    h_out: LockedBuffer<u32>,
    d_in: DeviceBuffer<u32>,
    d_out: DeviceBuffer<u32>,
}

impl Stages for Transform<'_> {
    fn copy_in(&mut self, chunk: &Chunk) -> Result<(), CourseError> {
        let range = chunk.range.clone();
        // TODO(step 4): copy this chunk of h_in into the same chunk of d_in,
        //     asynchronously on chunk.stream, with async_copy_from
        //     (https://docs.rs/cust/0.3.2/cust/memory/trait.AsyncCopyDestination.html).
        kernels::unfinished::<()>(4)?;

        Ok(())
    }

    fn compute(&mut self, chunk: &Chunk) -> Result<(), CourseError> {
        let range = chunk.range.clone();
        let (transform, stream) = (&self.kernel, chunk.stream);
        // TODO(step 5): launch transform on chunk.stream over this chunk,
        //     passing d_in and d_out from the chunk's start, the chunk's length
        //     and work, with cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        kernels::unfinished::<()>(5)?;

        Ok(())
    }

    fn copy_out(&mut self, chunk: &Chunk) -> Result<(), CourseError> {
        let range = chunk.range.clone();
        // TODO(step 6): copy this chunk of d_out into the same chunk of h_out,
        //     asynchronously on chunk.stream, with async_copy_to
        //     (https://docs.rs/cust/0.3.2/cust/memory/trait.AsyncCopyDestination.html).
        kernels::unfinished::<()>(6)?;

        Ok(())
    }

    fn output(&self) -> &[u32] {
        &self.h_out
    }

    fn fill_output(&mut self, value: u32) -> Result<(), CourseError> {
        kernels::host_memory::fill(&mut self.h_out, value);
        self.d_out.set_32(value)?;
        Ok(())
    }
}

/// Sets up the buffers, lets the harness run both pipelines, frees them.
fn overlap_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    let n = task.input.len();

    // TODO(step 2): copy the input into pinned host memory, and allocate pinned
    //     host memory for the output, n values each, with LockedBuffer
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.LockedBuffer.html).
    let h_in: LockedBuffer<u32> = kernels::unfinished(2)?;
    let h_out: LockedBuffer<u32> = kernels::unfinished(2)?;

    // TODO(step 3): allocate the input and the output on the GPU, n values
    //     each, with DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let d_in: DeviceBuffer<u32> = kernels::unfinished(3)?;
    let d_out: DeviceBuffer<u32> = kernels::unfinished(3)?;

    let mut stages = Transform {
        kernel: module.get_function("transform")?,
        work: task.work,
        h_in,
        h_out,
        d_in,
        d_out,
    };
    let measured = measure_pipelines(gpu, task, &mut stages)?;

    // TODO(step 7): free the four buffers with their drop functions,
    //     DeviceBuffer::drop and LockedBuffer::drop, which report errors a
    //     plain drop hides.
    kernels::unfinished::<()>(7)?;

    Ok(measured)
}
