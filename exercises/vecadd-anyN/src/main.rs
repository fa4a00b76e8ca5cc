//! vecadd-anyN: c = a + b on the GPU for vectors of any length, launched with
//! a grid that may be far smaller than the vectors.
//!
//! The course's harness (kernels::vecadd) parses the flags, makes a and b,
//! checks every element of c and prints the report; this file is the GPU
//! part. `cargo run -p vecadd-anyN -- --help` lists the flags.

use std::process::ExitCode;

use cust::prelude::*;
use kernels::vecadd::driver::{GpuOutput, Task, run_exercise};
use kernels::{CourseError, Gpu, Stopwatch, median_ms_fresh};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

fn main() -> ExitCode {
    run_exercise(add_on_gpu)
}

/// Computes c = a + b on the GPU and times each step.
fn add_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    let vecadd = module.get_function("vecadd")?;
    let stream = gpu.stream();
    let n = task.a.len();

    // TODO(step 2): allocate a, b and c on the GPU, n floats each, with
    //     DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let mut d_a: DeviceBuffer<f32> = kernels::unfinished(2)?;
    let mut d_b: DeviceBuffer<f32> = kernels::unfinished(2)?;
    let mut d_c: DeviceBuffer<f32> = kernels::unfinished(2)?;

    // NaN in every element, so one the kernel never writes cannot pass the check.
    d_c.set_32(f32::NAN.to_bits())?;
    let mut stopwatch = Stopwatch::start(stream)?;
    // TODO(step 3): copy a and b from the host into their GPU buffers, with
    //     copy_from
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    kernels::unfinished::<()>(3)?;

    let h2d_ms = stopwatch.lap_ms()?;

    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_a, &d_b], &d_c, || {
        // TODO(step 4): launch vecadd on `stream` with task.blocks blocks of
        //     task.threads threads, passing a, b, c and n, with cust's launch!
        //     macro (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        kernels::unfinished(4)
    })?;

    // Allocated (and touched, by the NaN fill) before timing: the copy alone is timed.
    let mut c = vec![f32::NAN; n];
    let mut stopwatch = Stopwatch::start(stream)?;
    // TODO(step 5): copy c from the GPU into the host vector c, with copy_to
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    kernels::unfinished::<()>(5)?;

    let d2h_ms = stopwatch.lap_ms()?;

    // TODO(step 6): free the three GPU buffers with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    kernels::unfinished::<()>(6)?;

    Ok(GpuOutput {
        c,
        h2d_ms,
        kernel_ms,
        d2h_ms,
    })
}
