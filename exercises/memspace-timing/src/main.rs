//! memspace-timing: the same sum of 4096 values, read by every thread from
//! global, constant, register and shared memory, timed side by side.
//!
//! The course's harness (kernels::memspace) parses the flags, checks every
//! thread's sum and prints the table; this file is the GPU part.
//! `cargo run -p memspace-timing -- --help` lists the flags.

use std::process::ExitCode;

use cust::prelude::*;
use kernels::memspace::driver::{GpuOutput, Task, measure, run_exercise};
use kernels::memspace::{REGISTER_VALUE, SIZE, Space};
use kernels::{CourseError, Gpu};

/// src/kernel.cu, compiled to PTX by build.rs.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel.ptx"));

fn main() -> ExitCode {
    run_exercise(measure_on_gpu)
}

/// Runs and times the four kernels; `measure` fills out with NaN before each
/// one, times it and copies the sums back.
fn measure_on_gpu(gpu: &Gpu, task: &Task) -> Result<GpuOutput, CourseError> {
    let module = gpu.load_module(PTX)?;
    let stream = gpu.stream();
    let sum_global = module.get_function("sum_global")?;
    let sum_constant = module.get_function("sum_constant")?;
    let sum_register = module.get_function("sum_register")?;
    let sum_shared = module.get_function("sum_shared")?;
    let threads_in_grid = task.blocks as usize * task.threads as usize;
    let per_thread = task.per_thread;

    // TODO(step 5): fill the module's __constant__ array const_data with
    //     task.data, through the symbol the module exports for it, with
    //     Module::get_global
    //     (https://docs.rs/cust/0.3.2/cust/module/struct.Module.html).
    kernels::unfinished::<()>(5)?;

    // TODO(step 6): allocate data on the GPU with task.data copied in, and out,
    //     one float per thread of the grid, with DeviceBuffer::from_slice and
    //     DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let d_data: DeviceBuffer<f32> = kernels::unfinished(6)?;
    let mut d_out: DeviceBuffer<f32> = kernels::unfinished(6)?;

    let global = measure(stream, &mut d_out, task.runs, Space::Global, |out| {
        // TODO(step 7): launch sum_global on `stream` with task.blocks blocks
        //     of task.threads threads, passing data, out and per_thread, with
        //     cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        kernels::unfinished(7)
    })?;
    let constant = measure(stream, &mut d_out, task.runs, Space::Constant, |out| {
        // TODO(step 8): launch sum_constant the same way, passing out and
        //     per_thread: it reads const_data.
        kernels::unfinished(8)
    })?;
    let register = measure(stream, &mut d_out, task.runs, Space::Register, |out| {
        // TODO(step 9): launch sum_register the same way, passing
        //     REGISTER_VALUE and out.
        kernels::unfinished(9)
    })?;
    let shared = measure(stream, &mut d_out, task.runs, Space::Shared, |out| {
        // TODO(step 10): launch sum_shared the same way, passing data, out and
        //     per_thread.
        kernels::unfinished(10)
    })?;

    // TODO(step 11): free data and out with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    kernels::unfinished::<()>(11)?;

    Ok(GpuOutput {
        runs: vec![global, constant, register, shared],
    })
}
