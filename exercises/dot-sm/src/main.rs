//! dot-sm: a dot product summed on the GPU block by block: each block leaves
//! one partial sum, and the course's harness adds the partials on the host.
//!
//! The harness (kernels::dot) parses the flags, makes a and b, finishes and
//! checks the sum and prints the report; this file is the GPU part.
//! `cargo run -p dot-sm -- --help` lists the flags.

use std::process::ExitCode;

use cust::prelude::*;
use kernels::dot::Variant;
use kernels::dot::driver::{GpuOutput, Task, run_exercise};
use kernels::{CourseError, Gpu, Stopwatch, median_ms_fresh};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

fn main() -> ExitCode {
    run_exercise(Variant::Sm, partials_on_gpu)
}

/// Computes one partial dot product per block on the GPU and times each step.
fn partials_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    let dot = module.get_function("dot")?;
    let stream = gpu.stream();
    let n = task.a.len();
    let blocks = task.blocks as usize;

    // TODO(step 4): allocate a and b on the GPU, n floats each, and partials,
    //     one float per block, with DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let mut d_a: DeviceBuffer<f32> = kernels::unfinished(4)?;
    let mut d_b: DeviceBuffer<f32> = kernels::unfinished(4)?;
    let mut d_partials: DeviceBuffer<f32> = kernels::unfinished(4)?;

    // NaN in every partial, so a block that never writes its own cannot pass.
    d_partials.set_32(f32::NAN.to_bits())?;
    let mut stopwatch = Stopwatch::start(stream)?;
    // TODO(step 5): copy a and b from the host into their GPU buffers, with
    //     copy_from
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    kernels::unfinished::<()>(5)?;

    let h2d_ms = stopwatch.lap_ms()?;

    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_a, &d_b], &d_partials, || {
        // TODO(step 6): launch dot on `stream` with task.blocks blocks of
        //     task.threads threads and one float of shared memory per thread,
        //     passing a, b, partials and n, with cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        kernels::unfinished(6)
    })?;

    // Allocated (and touched, by the NaN fill) before timing: the copy alone is timed.
    let mut partials = vec![f32::NAN; blocks];
    let mut stopwatch = Stopwatch::start(stream)?;
    // TODO(step 7): copy the partials from the GPU into the host vector
    //     partials, with copy_to
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    kernels::unfinished::<()>(7)?;

    let d2h_ms = stopwatch.lap_ms()?;

    // TODO(step 8): free the three GPU buffers with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    kernels::unfinished::<()>(8)?;

    Ok(GpuOutput {
        values: partials,
        h2d_ms,
        kernel_ms,
        d2h_ms,
    })
}
