//! dot-gm: the GPU computes every product `c[i] = a[i]·b[i]`; the course's
//! harness adds them up on the host, in f64 and, for comparison, in a plain
//! f32 running sum.
//!
//! The harness (kernels::dot) parses the flags, makes a and b, finishes and
//! checks the sum and prints the report; this file is the GPU part.
//! `cargo run -p dot-gm -- --help` lists the flags.

use std::process::ExitCode;

use cust::prelude::*;
use kernels::dot::Variant;
use kernels::dot::driver::{GpuOutput, Task, run_exercise};
use kernels::{CourseError, Gpu, Stopwatch, median_ms_fresh};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

fn main() -> ExitCode {
    run_exercise(Variant::Gm, products_on_gpu)
}

/// Computes every product `c[i] = a[i]·b[i]` on the GPU and times each step.
fn products_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    let dot = module.get_function("dot")?;
    let stream = gpu.stream();
    let n = task.a.len();

    // Step 2: allocate a, b and c on the GPU, n floats each, with
    //     DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    // Zeroed rather than uninitialized: the fill costs about a millisecond
    // and keeps this step free of unsafe code.
    let mut d_a = DeviceBuffer::<f32>::zeroed(n)?;
    let mut d_b = DeviceBuffer::<f32>::zeroed(n)?;
    let mut d_c = DeviceBuffer::<f32>::zeroed(n)?;

    // NaN in every element, so one the kernel never writes cannot pass the check.
    d_c.set_32(f32::NAN.to_bits())?;
    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 3: copy a and b from the host into their GPU buffers, with copy_from
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_a.copy_from(&task.a)?;
    d_b.copy_from(&task.b)?;

    let h2d_ms = stopwatch.lap_ms()?;

    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_a, &d_b], &d_c, || {
        // Step 4: launch dot on `stream` with task.blocks blocks of
        //     task.threads threads, passing a, b, c and n, with cust's launch!
        //     macro (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        // SAFETY: the arguments match the kernel's parameters in order and
        // type (three float pointers, then size_t n), and each buffer holds n floats.
        unsafe {
            launch!(dot<<<task.blocks, task.threads, 0, stream>>>(
                d_a.as_device_ptr(),
                d_b.as_device_ptr(),
                d_c.as_device_ptr(),
                n
            ))
        }
    })?;

    // Allocated (and touched, by the NaN fill) before timing: the copy alone is timed.
    let mut c = vec![f32::NAN; n];
    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 5: copy c from the GPU into the host vector c, with copy_to
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_c.copy_to(&mut c)?;

    let d2h_ms = stopwatch.lap_ms()?;

    // Step 6: free the three GPU buffers with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    // An error here is left over from earlier work, such as a kernel fault.
    DeviceBuffer::drop(d_a)?;
    DeviceBuffer::drop(d_b)?;
    DeviceBuffer::drop(d_c)?;

    Ok(GpuOutput {
        values: c,
        h2d_ms,
        kernel_ms,
        d2h_ms,
    })
}
