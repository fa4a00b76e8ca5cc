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

    // Step 4: allocate a and b on the GPU, n floats each, and partials, one
    //     float per block, with DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let mut d_a = DeviceBuffer::<f32>::zeroed(n)?;
    let mut d_b = DeviceBuffer::<f32>::zeroed(n)?;
    let mut d_partials = DeviceBuffer::<f32>::zeroed(blocks)?;

    // NaN in every partial, so a block that never writes its own cannot pass.
    d_partials.set_32(f32::NAN.to_bits())?;
    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 5: copy a and b from the host into their GPU buffers, with copy_from
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_a.copy_from(&task.a)?;
    d_b.copy_from(&task.b)?;

    let h2d_ms = stopwatch.lap_ms()?;

    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_a, &d_b], &d_partials, || {
        // Step 6: launch dot on `stream` with task.blocks blocks of
        //     task.threads threads and one float of shared memory per thread,
        //     passing a, b, partials and n, with cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        let shared_bytes = task.threads * std::mem::size_of::<f32>() as u32;
        // SAFETY: the arguments match the kernel's parameters in order and
        // type (three float pointers, then size_t n); a and b hold n floats,
        // partials one per block, and the shared memory one per thread.
        unsafe {
            launch!(dot<<<task.blocks, task.threads, shared_bytes, stream>>>(
                d_a.as_device_ptr(),
                d_b.as_device_ptr(),
                d_partials.as_device_ptr(),
                n
            ))
        }
    })?;

    // Allocated (and touched, by the NaN fill) before timing: the copy alone is timed.
    let mut partials = vec![f32::NAN; blocks];
    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 7: copy the partials from the GPU into the host vector partials,
    //     with copy_to
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_partials.copy_to(&mut partials)?;

    let d2h_ms = stopwatch.lap_ms()?;

    // Step 8: free the three GPU buffers with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    // An error here is left over from earlier work, such as a kernel fault.
    DeviceBuffer::drop(d_a)?;
    DeviceBuffer::drop(d_b)?;
    DeviceBuffer::drop(d_partials)?;

    Ok(GpuOutput {
        values: partials,
        h2d_ms,
        kernel_ms,
        d2h_ms,
    })
}
