//! The cuda-course toolkit: everything between an exercise's `kernel.cu` and
//! a checked, timed result.
//!
//! - Always (standard library only, for build scripts and the `course`
//!   command): [`nvcc`] compiles the kernel to PTX; [`catalogue`] lists the
//!   exercises, their steps and their grading facts; [`exit_code`],
//!   [`launch`], [`seeded`], [`stats`], [`units`]; the wire formats that
//!   cross a process boundary: the driver-call trace ([`trace_record`]),
//!   the GPU broker's protocol ([`broker_wire`]), the CPU emulator's
//!   findings ([`emulator_output`]) and the grader's [`timing_gate`]
//!   (whose guard comes with `runtime`).
//! - Feature `protocol` (serde, no GPU; the grader uses it): the result
//!   [`protocol`], each exercise's closed forms and check ([`vecadd`]), the
//!   [`checksum`] of a run's outputs, and the person-readable [`report`].
//! - Feature `runtime` (default; links libcuda through cust): the [`Gpu`],
//!   event timing, the copy-bandwidth probe, the shared command line, and
//!   each exercise's driver.

pub mod batch;
pub mod broker_wire;
pub mod catalogue;
pub mod emulator_output;
pub mod exit_code;
pub mod host_memory;
pub mod launch;
pub mod nvcc;
pub mod seeded;
pub mod stats;
pub mod timeline;
pub mod timing_gate;
pub mod trace_record;
pub mod units;

#[cfg(feature = "protocol")]
pub mod checksum;
#[cfg(feature = "protocol")]
pub mod dot;
#[cfg(feature = "protocol")]
pub mod matmul;
#[cfg(feature = "protocol")]
pub mod memspace;
#[cfg(feature = "protocol")]
pub mod protocol;
#[cfg(feature = "protocol")]
pub mod report;
#[cfg(feature = "protocol")]
pub mod streams;
#[cfg(feature = "protocol")]
pub mod vecadd;

#[cfg(feature = "runtime")]
pub mod cli;
#[cfg(feature = "runtime")]
pub mod copy_probe;
#[cfg(feature = "runtime")]
mod error;
#[cfg(feature = "runtime")]
mod fresh_launch;
#[cfg(feature = "runtime")]
mod gpu;
#[cfg(feature = "runtime")]
pub mod inputs_on_gpu;
#[cfg(feature = "runtime")]
pub mod stopwatch;
#[cfg(feature = "testing")]
pub mod testing;

#[cfg(feature = "runtime")]
pub use error::{CourseError, error_name, unfinished};
#[cfg(feature = "runtime")]
pub use gpu::Gpu;
#[cfg(feature = "runtime")]
pub use stopwatch::{Stopwatch, median_ms, median_ms_checked};

/// The course's own kernel launched before each of a student's launches on
/// a GPU, filling shared memory with poison (`fresh_launch`): the grader
/// leaves it out of compute-sanitizer's checks, which are of the student's
/// kernel (the name is exact, and no exercise's kernel has it).
pub const POISON_KERNEL: &str = "course_poison_shared";

/// The variable naming a PTX file that `Gpu::load_module` loads instead
/// of the PTX the binary embeds. The grader sets it when it runs a
/// student's kernel through the course's own host code (the solution
/// binary), so a kernel's points come from host code the student did not
/// write. It gives a student's own binary nothing: the student already
/// chooses what PTX their binary loads, and the grader never sets it for
/// their runs (a sandboxed run's environment is cleared).
pub const KERNEL_PTX_ENV: &str = "CUDA_COURSE_KERNEL_PTX";

/// The flag (without its dashes) of vecadd-anyN's and dot-gm's binaries
/// that makes a and b on the GPU (`inputs_on_gpu`), and the name of the
/// step its report times: the grader passes it to the course's binary at
/// the runs above 2^31 elements. One name for the binary, its report and
/// the grader's plan.
pub const INPUTS_ON_GPU: &str = "inputs-on-gpu";
