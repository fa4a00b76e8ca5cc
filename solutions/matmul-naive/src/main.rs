//! matmul-naive: P = M × N on the GPU, one thread per entry of P.
//!
//! The course's harness (kernels::matmul) parses the flags, makes M and N,
//! checks every entry of P and prints the report; this file is the GPU part.
//! `cargo run -p matmul-naive -- --help` lists the flags.

use std::process::ExitCode;

use cust::prelude::*;
use kernels::matmul::Variant;
use kernels::matmul::driver::{GpuOutput, Task, run_exercise};
use kernels::{CourseError, Gpu, Stopwatch, median_ms_fresh};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

fn main() -> ExitCode {
    run_exercise(Variant::Naive, matmul_on_gpu)
}

/// Computes P = M × N on the GPU and times each step.
fn matmul_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    let matmul = module.get_function("matmul")?;
    let stream = gpu.stream();
    let entries = task.m.len();

    // Step 2: allocate M, N and P on the GPU, width × width floats each, with
    //     DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    // Zeroed rather than uninitialized: the fill costs little and keeps
    // this step free of unsafe code.
    let mut d_m = DeviceBuffer::<f32>::zeroed(entries)?;
    let mut d_n = DeviceBuffer::<f32>::zeroed(entries)?;
    let mut d_p = DeviceBuffer::<f32>::zeroed(entries)?;

    // NaN in every entry, so one the kernel never writes cannot pass the check.
    d_p.set_32(f32::NAN.to_bits())?;
    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 3: copy M and N from the host into their GPU buffers, with copy_from
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_m.copy_from(&task.m)?;
    d_n.copy_from(&task.n)?;

    let h2d_ms = stopwatch.lap_ms()?;

    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_m, &d_n], &d_p, || {
        // Step 4: launch matmul on `stream` with task.block × task.block
        //     threads per block and enough blocks each way to cover the width,
        //     passing M, N, P and the width, with cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        // ⌈W / block⌉ blocks each way: rounded up, so the last partial
        // block row and column are covered too.
        let blocks = task.width.div_ceil(task.block);
        // SAFETY: the arguments match the kernel's parameters in order and
        // type (three float pointers, then int width, at most 32768), and
        // each buffer holds width × width floats.
        unsafe {
            launch!(matmul<<<(blocks, blocks), (task.block, task.block), 0, stream>>>(
                d_m.as_device_ptr(),
                d_n.as_device_ptr(),
                d_p.as_device_ptr(),
                task.width as i32
            ))
        }
    })?;

    // Allocated (and touched, by the NaN fill) before timing: the copy alone is timed.
    let mut p = vec![f32::NAN; entries];
    let mut stopwatch = Stopwatch::start(stream)?;
    // Step 5: copy P from the GPU into the host vector p, with copy_to
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    d_p.copy_to(&mut p)?;

    let d2h_ms = stopwatch.lap_ms()?;

    // Step 6: free the three GPU buffers with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    // An error here is left over from earlier work, such as a kernel fault.
    DeviceBuffer::drop(d_m)?;
    DeviceBuffer::drop(d_n)?;
    DeviceBuffer::drop(d_p)?;

    Ok(GpuOutput {
        p,
        h2d_ms,
        kernel_ms,
        d2h_ms,
    })
}
