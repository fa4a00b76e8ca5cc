//! The grader's runs above 2^31 elements with the inputs made on the GPU
//! (`--inputs-on-gpu`, vecadd-anyN's and dot-gm's): the course's host code
//! allocates a, b and c on the GPU, fills a and b with its own kernels
//! (`inputs_on_gpu/inputs_on_gpu.cu`), and runs the student's kernel
//! (the PTX [`KERNEL_PTX_ENV`](crate::grader_names::KERNEL_PTX_ENV) names) on them as
//! the solution's host code does. Made on the host, a, b and c are 26 GB
//! of fresh memory a run: 12 to 16 s of wall and about 40 core-seconds on
//! an H200, where the kernel takes 6 ms (bench/runs/2026-11-29-h200-inputs-on-gpu). The
//! check is the exercise's own: vecadd-anyN's first on the GPU, each
//! exercise's on the host wherever a verdict needs it (the driver says).
//!
//! Threat model. The student's kernel shares the process's context with
//! these kernels and can write any device memory it can address while it
//! runs. So nothing it could have written decides a verdict: vecadd-anyN's
//! check on the GPU compares c with one period of a and b uploaded after
//! the student's last launch has ended, and counts into memory allocated
//! and zeroed after it; a and b, which the kernel could have changed, are
//! never read back as the truth. The kernel cannot outlive its launch: each
//! launch is waited for before the next step (a grid never ends before the
//! grids it launches, and a module loaded from PTX alone cannot link the
//! device runtime that launches them), and a grid that never ends meets
//! the run's timeout. The grader passes the flag only to the course's own
//! binary, whose host code this is.

use cust::function::Function;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use cust::module::Module;
use cust::prelude::*;

use crate::catalogue::ExerciseId;
use crate::error::CourseError;
use crate::gpu::Gpu;
use crate::host_memory;
use crate::stopwatch::{Stopwatch, median_ms_checked};

/// The course's kernels, compiled by nvcc 11.8 for compute_75 from
/// inputs_on_gpu.cu beside it (the test below checks it is that file's).
const PTX: &str = include_str!("inputs_on_gpu/inputs_on_gpu.ptx");

/// Each of these kernels strides over a grid of this many blocks of
/// [`THREADS`]: enough to fill any GPU, and any n is covered.
const BLOCKS: u32 = 4096;
const THREADS: u32 = 256;

/// How the course's kernels fill an input vector.
#[derive(Clone, Copy, Debug)]
pub enum Fill<'a> {
    /// x\[i] = values\[i mod values.len()] (vecadd-anyN's periodic inputs).
    Repeat(&'a [f32]),
    /// x\[i] = p + q·i rounded to the nearest f32 (the dot exercises').
    Affine { p: i64, q: i64 },
}

/// The inputs and output of a three-array kernel, `kernel(a, b, c, n)`,
/// on the GPU.
pub struct Arrays {
    pub a: DeviceBuffer<f32>,
    pub b: DeviceBuffer<f32>,
    pub c: DeviceBuffer<f32>,
}

impl Arrays {
    /// a and b of `n` elements made as `fill_a` and `fill_b` say, and c
    /// (which [`median_ms_checked`] fills with NaN before each launch).
    pub fn made(
        kernels: &CourseKernels,
        stream: &Stream,
        n: usize,
        fill_a: Fill,
        fill_b: Fill,
    ) -> Result<Arrays, CourseError> {
        let during = |err: cust::error::CudaError| {
            CourseError::from(err).during("allocating a, b and c on the GPU")
        };
        let a = DeviceBuffer::<f32>::zeroed(n).map_err(during)?;
        let b = DeviceBuffer::<f32>::zeroed(n).map_err(during)?;
        let c = DeviceBuffer::<f32>::zeroed(n).map_err(during)?;
        kernels.fill(stream, &a, fill_a)?;
        kernels.fill(stream, &b, fill_b)?;
        Ok(Arrays { a, b, c })
    }

    /// Frees the three, reporting a fault left over from earlier work.
    pub fn free(self) -> Result<(), CourseError> {
        DeviceBuffer::drop(self.a)?;
        DeviceBuffer::drop(self.b)?;
        DeviceBuffer::drop(self.c)?;
        Ok(())
    }
}

/// How the student's kernel is launched, and how many timed launches the
/// median is of.
#[derive(Clone, Copy, Debug)]
pub struct Launch {
    pub n: u64,
    pub blocks: u32,
    pub threads: u32,
    pub runs: u32,
}

/// A run of the student's kernel on inputs made on the GPU: the arrays,
/// c as the last launch left it, the course's kernels for the check, and
/// the milliseconds the inputs and the kernel (the median) took.
pub struct KernelRun {
    pub course: CourseKernels,
    pub arrays: Arrays,
    pub inputs_ms: f64,
    pub kernel_ms: f64,
}

/// Exercise `id`'s kernel, `kernel(a, b, c, n)` (vecadd-anyN's and
/// dot-gm's signature), loaded from `ptx` and launched as `launch` says, as
/// the solution's host code launches it ([`median_ms_checked`]: poison,
/// NaN before each launch, windows sampled), on a and b made as `fill_a`
/// and `fill_b` say.
pub fn run_three_array_kernel(
    gpu: &Gpu,
    ptx: &str,
    id: ExerciseId,
    launch: Launch,
    fill_a: Fill,
    fill_b: Fill,
) -> Result<KernelRun, CourseError> {
    let course = CourseKernels::load()?;
    let module = gpu.load_ptx(ptx)?;
    let kernel = module.get_function(id.exercise().launches[0][0])?;
    let stream = gpu.stream();
    let n = usize::try_from(launch.n).map_err(|_| {
        CourseError::BadArguments(format!(
            "--n {}: more than this machine addresses",
            launch.n
        ))
    })?;
    let mut stopwatch = Stopwatch::start(stream)?;
    let arrays = Arrays::made(&course, stream, n, fill_a, fill_b)?;
    let inputs_ms = stopwatch.lap_ms()?;
    let Arrays { a, b, c } = &arrays;
    let kernel_ms = median_ms_checked(stream, launch.runs, c, || {
        // SAFETY: the kernel's parameters are three float pointers and a
        // size_t n (the exercise's signature, which its PTX check holds the
        // student to), and each buffer holds n floats.
        unsafe {
            launch!(kernel<<<launch.blocks, launch.threads, 0, stream>>>(
                a.as_device_ptr(),
                b.as_device_ptr(),
                c.as_device_ptr(),
                n
            ))
        }
    })?;
    Ok(KernelRun {
        course,
        arrays,
        inputs_ms,
        kernel_ms,
    })
}

/// c of `n` elements copied to the host, for a check there.
pub fn copied_to_host(c: &DeviceSlice<f32>) -> Result<Vec<f32>, CourseError> {
    let n = c.len() as u64;
    let mut host = host_memory::try_filled("c", n, |_| f32::NAN)
        .map_err(|err| CourseError::BadArguments(format!("--n {n}: {err}")))?;
    c.copy_to(&mut host[..])?;
    Ok(host)
}

/// The course's own kernels, loaded from the PTX this crate embeds (never
/// from [`KERNEL_PTX_ENV`](crate::grader_names::KERNEL_PTX_ENV)).
pub struct CourseKernels {
    module: Module,
}

impl CourseKernels {
    pub fn load() -> Result<CourseKernels, CourseError> {
        let module = Module::from_ptx(PTX, &[]).map_err(|err| {
            CourseError::from(err).during("loading the course's kernels for inputs on the GPU")
        })?;
        Ok(CourseKernels { module })
    }

    fn function(&self, name: &str) -> Result<Function<'_>, CourseError> {
        self.module
            .get_function(name)
            .map_err(|err| CourseError::from(err).during("finding a course kernel"))
    }

    /// Fills `out` as `fill` says, and waits for it.
    pub fn fill(
        &self,
        stream: &Stream,
        out: &DeviceSlice<f32>,
        fill: Fill,
    ) -> Result<(), CourseError> {
        let n = out.len() as u64;
        match fill {
            Fill::Repeat(values) => {
                let values = DeviceBuffer::from_slice(values)?;
                let repeat = self.function("course_repeat")?;
                // SAFETY: the kernel takes (float*, const float*, u64 period,
                // u64 n); `out` holds n floats and `values` period floats.
                unsafe {
                    launch!(repeat<<<BLOCKS, THREADS, 0, stream>>>(
                        out.as_device_ptr(),
                        values.as_device_ptr(),
                        values.len() as u64,
                        n
                    ))?;
                }
                // `values` is freed below, after the kernel that reads it.
                wait(stream, "making an input on the GPU")?;
                DeviceBuffer::drop(values)?;
            }
            Fill::Affine { p, q } => {
                let affine = self.function("course_affine")?;
                // SAFETY: the kernel takes (float*, i64 p, i64 q, u64 n), and
                // `out` holds n floats.
                unsafe {
                    launch!(affine<<<BLOCKS, THREADS, 0, stream>>>(
                        out.as_device_ptr(),
                        p,
                        q,
                        n
                    ))?;
                }
                wait(stream, "making an input on the GPU")?;
            }
        }
        Ok(())
    }

    /// The elements of `c` that are not exactly a\[i] + b\[i], where a and b
    /// repeat `a_values` and `b_values` (of one length): uploaded here, after
    /// the student's kernel has ended, and counted into memory allocated
    /// here (the module's threat model).
    pub fn count_unequal_sums(
        &self,
        stream: &Stream,
        c: &DeviceSlice<f32>,
        a_values: &[f32],
        b_values: &[f32],
    ) -> Result<u64, CourseError> {
        assert_eq!(a_values.len(), b_values.len(), "one period for a and b");
        let a = DeviceBuffer::from_slice(a_values)?;
        let b = DeviceBuffer::from_slice(b_values)?;
        let unequal = DeviceBuffer::<u64>::zeroed(1)?;
        let count = self.function("course_count_unequal_sums")?;
        // SAFETY: the kernel takes (const float* c, const float* a, const
        // float* b, u64 period, u64 n, u64* unequal); c holds n floats, a and
        // b period floats each, and `unequal` one u64.
        unsafe {
            launch!(count<<<BLOCKS, THREADS, 0, stream>>>(
                c.as_device_ptr(),
                a.as_device_ptr(),
                b.as_device_ptr(),
                a_values.len() as u64,
                c.len() as u64,
                unequal.as_device_ptr()
            ))?;
        }
        wait(stream, "checking c on the GPU")?;
        let mut counted = [0u64];
        unequal.copy_to(&mut counted[..])?;
        DeviceBuffer::drop(a)?;
        DeviceBuffer::drop(b)?;
        DeviceBuffer::drop(unequal)?;
        Ok(counted[0])
    }
}

fn wait(stream: &Stream, work: &str) -> Result<(), CourseError> {
    stream
        .synchronize()
        .map_err(|err| CourseError::from(err).during(work))
}

#[cfg(test)]
mod tests {
    use super::PTX;

    /// The committed PTX is nvcc's for the committed source: the same
    /// instructions (comments and line records aside).
    #[test]
    fn the_course_kernels_ptx_is_nvcc_s_for_its_source() {
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/inputs_on_gpu/inputs_on_gpu.cu");
        crate::nvcc::assert_ptx_is_nvcc_s(&source, PTX);
        for entry in [
            "course_repeat",
            "course_affine",
            "course_count_unequal_sums",
        ] {
            assert!(PTX.contains(&format!(".entry {entry}(")), "{entry}");
        }
    }
}
