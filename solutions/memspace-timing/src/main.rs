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

    // Step 5: fill the module's __constant__ array const_data with task.data,
    //     through the symbol the module exports for it, with Module::get_global
    //     (https://docs.rs/cust/0.3.2/cust/module/struct.Module.html).
    // The symbol's type must match the array's size exactly.
    let mut const_data = module.get_global::<[f32; SIZE]>(c"const_data")?;
    const_data.copy_from(&task.data)?;

    // Step 6: allocate data on the GPU with task.data copied in, and out, one
    //     float per thread of the grid, with DeviceBuffer::from_slice and
    //     DeviceBuffer::zeroed
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html).
    let d_data = DeviceBuffer::from_slice(&task.data[..])?;
    let mut d_out = DeviceBuffer::<f32>::zeroed(threads_in_grid)?;

    let global = measure(stream, &mut d_out, task.runs, Space::Global, |out| {
        // Step 7: launch sum_global on `stream` with task.blocks blocks of
        //     task.threads threads, passing data, out and per_thread, with
        //     cust's launch! macro
        //     (https://docs.rs/cust/0.3.2/cust/macro.launch.html).
        // SAFETY: the arguments match the kernel's parameters in order and
        // type; data holds SIZE floats and out one per thread of the grid.
        unsafe {
            launch!(sum_global<<<task.blocks, task.threads, 0, stream>>>(
                d_data.as_device_ptr(),
                out,
                per_thread
            ))
        }
    })?;
    let constant = measure(stream, &mut d_out, task.runs, Space::Constant, |out| {
        // Step 8: launch sum_constant the same way, passing out and per_thread:
        //     it reads const_data.
        // SAFETY: as for sum_global; const_data was filled in step 5.
        unsafe { launch!(sum_constant<<<task.blocks, task.threads, 0, stream>>>(out, per_thread)) }
    })?;
    let register = measure(stream, &mut d_out, task.runs, Space::Register, |out| {
        // Step 9: launch sum_register the same way, passing REGISTER_VALUE and
        //     out.
        // SAFETY: as for sum_global.
        unsafe {
            launch!(sum_register<<<task.blocks, task.threads, 0, stream>>>(REGISTER_VALUE, out))
        }
    })?;
    let shared = measure(stream, &mut d_out, task.runs, Space::Shared, |out| {
        // Step 10: launch sum_shared the same way, passing data, out and
        //     per_thread.
        // SAFETY: as for sum_global; the kernel declares its 16 KiB tile
        // itself, so the launch asks for no dynamic shared memory.
        unsafe {
            launch!(sum_shared<<<task.blocks, task.threads, 0, stream>>>(
                d_data.as_device_ptr(),
                out,
                per_thread
            ))
        }
    })?;

    // Step 11: free data and out with DeviceBuffer::drop
    //     (https://docs.rs/cust/0.3.2/cust/memory/struct.DeviceBuffer.html),
    //     which reports errors a plain drop hides.
    DeviceBuffer::drop(d_data)?;
    DeviceBuffer::drop(d_out)?;

    Ok(GpuOutput {
        runs: vec![global, constant, register, shared],
    })
}
