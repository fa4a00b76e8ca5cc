//! matmul-tiled: P = M × N on the GPU, with tiles of M and N staged in
//! shared memory.
//!
//! The course's harness (kernels::matmul) parses the flags, makes M and N,
//! checks every entry of P and prints the report; this file is the GPU part.
//! `cargo run -p matmul-tiled -- --help` lists the flags.

use std::process::ExitCode;

use cust::prelude::*;
use kernels::matmul::Variant;
use kernels::matmul::driver::{GpuOutput, Task, run_exercise};
use kernels::{CourseError, Gpu, Stopwatch, median_ms_fresh};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

fn main() -> ExitCode {
    run_exercise(Variant::Tiled, matmul_on_gpu)
}

/// Computes P = M × N on the GPU and times each step.
fn matmul_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    // One kernel per tile size: matmul_tiled_16 or matmul_tiled_32.
    let matmul = module.get_function(format!("matmul_tiled_{}", task.block))?;
    let stream = gpu.stream();
    let entries = task.m.len();

    // TODO(step 4): allocate M, N and P on the GPU, width × width floats each,
    //     with DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let mut d_m: DeviceBuffer<f32> = kernels::unfinished(4)?;
    let mut d_n: DeviceBuffer<f32> = kernels::unfinished(4)?;
    let mut d_p: DeviceBuffer<f32> = kernels::unfinished(4)?;

    // NaN in every entry, so one the kernel never writes cannot pass the check.
    d_p.set_32(f32::NAN.to_bits())?;
    let mut stopwatch = Stopwatch::start(stream)?;
    // TODO(step 5): copy M and N from the host into their GPU buffers, with
    //     copy_from
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    kernels::unfinished::<()>(5)?;

    let h2d_ms = stopwatch.lap_ms()?;

    let kernel_ms = median_ms_fresh(stream, task.runs, task, &[&d_m, &d_n], &d_p, || {
        // TODO(step 6): launch matmul on `stream` with task.block × task.block
        //     threads per block (one per entry of a tile) and enough blocks
        //     each way to cover the width, passing M, N, P and the width, with
        //     cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        kernels::unfinished(6)
    })?;

    // Allocated (and touched, by the NaN fill) before timing: the copy alone is timed.
    let mut p = vec![f32::NAN; entries];
    let mut stopwatch = Stopwatch::start(stream)?;
    // TODO(step 7): copy P from the GPU into the host vector p, with copy_to
    //     (https://docs.rs/cust/0.3.2/cust/memory/trait.CopyDestination.html).
    kernels::unfinished::<()>(7)?;

    let d2h_ms = stopwatch.lap_ms()?;

    // TODO(step 8): free the three GPU buffers with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    kernels::unfinished::<()>(8)?;

    Ok(GpuOutput {
        p,
        h2d_ms,
        kernel_ms,
        d2h_ms,
    })
}
