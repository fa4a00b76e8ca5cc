//! dot-atomic: a dot product summed entirely on the GPU: each block adds its
//! partial sum into one float with atomicAdd, and only that float comes back.
//!
//! The harness (kernels::dot) parses the flags, makes a and b, finishes and
//! checks the sum and prints the report; this file is the GPU part.
//! `cargo run -p dot-atomic -- --help` lists the flags; `--sweep` times every
//! mix of blocks and loops per thread.

use std::process::ExitCode;

use cust::prelude::*;
use kernels::dot::Variant;
use kernels::dot::driver::{GpuOutput, Task, run_exercise};
use kernels::{CourseError, Gpu, Stopwatch, median_ms_fresh};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

fn main() -> ExitCode {
    run_exercise(Variant::Atomic, dot_on_gpu)
}

/// Computes the dot product on the GPU and times each step.
fn dot_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    let dot = module.get_function("dot")?;
    let stream = gpu.stream();
    let n = task.a.len();

    // Step 4: allocate a and b on the GPU, n floats each, and the result, one
    //     float, with DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let mut d_a = DeviceBuffer::<f32>::zeroed(n)?;
    let mut d_b = DeviceBuffer::<f32>::zeroed(n)?;
    let mut d_result = DeviceBuffer::<f32>::zeroed(1)?;

    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 5: copy a and b from the host into their GPU buffers, with copy_from
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_a.copy_from(&task.a)?;
    d_b.copy_from(&task.b)?;

    let h2d_ms = stopwatch.lap_ms()?;

    // The course gives each launch a and b of its own and checks its sum;
    // it is given the result's pointer, not the buffer, which this closure
    // zeroes before every launch. The last launch's sum is the exercise's.
    let result_ptr = d_result.as_device_ptr();
    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_a, &d_b], result_ptr, || {
        // Step 6: zero the result on `stream` before every launch, with
        //     set_zero_async
        //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceSlice.html),
        //     then launch dot with task.blocks blocks of task.threads threads
        //     and one float of shared memory per thread, passing a, b, result
        //     and n, with cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        // Every launch adds into the result: without the zero, the second
        // run would start from the first run's total.
        // SAFETY: the zeroing is queued on `stream` before the kernel, so
        // the stream finishes it before the kernel reads the result.
        unsafe { d_result.set_zero_async(stream)? };
        let shared_bytes = task.threads * std::mem::size_of::<f32>() as u32;
        // SAFETY: the arguments match the kernel's parameters in order and
        // type (three float pointers, then size_t n); a and b hold n floats,
        // the result one, and the shared memory one per thread.
        unsafe {
            launch!(dot<<<task.blocks, task.threads, shared_bytes, stream>>>(
                d_a.as_device_ptr(),
                d_b.as_device_ptr(),
                d_result.as_device_ptr(),
                n
            ))
        }
    })?;

    // Allocated (and touched, by the NaN fill) before timing: the copy alone is timed.
    let mut result = vec![f32::NAN; 1];
    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 7: copy the result from the GPU into the host vector result, with
    //     copy_to
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_result.copy_to(&mut result)?;

    let d2h_ms = stopwatch.lap_ms()?;

    // Step 8: free the three GPU buffers with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    // An error here is left over from earlier work, such as a kernel fault.
    DeviceBuffer::drop(d_a)?;
    DeviceBuffer::drop(d_b)?;
    DeviceBuffer::drop(d_result)?;

    Ok(GpuOutput {
        values: result,
        h2d_ms,
        kernel_ms,
        d2h_ms,
    })
}
