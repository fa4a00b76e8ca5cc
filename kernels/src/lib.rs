//! The cuda-course toolkit: everything between an exercise's `kernel.cu` and
//! a checked, timed result.
//!
//! - Always (standard library only, for build scripts and the `course`
//!   command): [`nvcc`] compiles the kernel to PTX; [`catalogue`] lists the
//!   exercises, their steps and their grading facts; [`exit_code`],
//!   [`launch`], [`seeded`], [`stats`], [`units`]; the SVG pictures
//!   ([`svg`], the streams [`timeline`], the emulator's [`access_picture`]); the wire formats that
//!   cross a process boundary: the driver-call trace ([`trace_record`]),
//!   the GPU broker's protocol ([`broker_wire`]), the CPU emulator's
//!   findings ([`emulator_output`]), hardware counters
//!   ([`emulator_counters`]) and recorded accesses ([`emulator_accesses`]),
//!   the grader's [`timing_gate`] (whose
//!   guard comes with `runtime`) and the names the grader passes to the
//!   course's binaries ([`grader_names`]).
//! - Feature `protocol` (serde, no GPU; the grader uses it): the result
//!   [`protocol`], each exercise's closed forms and check ([`vecadd`]), the
//!   [`checksum`] of a run's outputs, and the person-readable [`report`].
//! - Feature `runtime` (default; links libcuda through cust): the [`Gpu`],
//!   event timing, the copy-bandwidth probe, the shared command line, and
//!   each exercise's driver.
//!
//! A module of one layer uses only its own and those above it in this
//! list, and names another module, never an item re-exported here
//! (`tests/layers.rs`).

pub mod access_picture;
pub mod batch;
pub mod broker_wire;
pub mod catalogue;
pub mod emulator_accesses;
pub mod emulator_counters;
pub mod emulator_output;
pub mod exit_code;
pub mod grader_names;
pub mod host_memory;
pub mod launch;
pub mod nvcc;
pub mod seeded;
pub mod stats;
pub mod svg;
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
pub mod accesses;
#[cfg(feature = "runtime")]
pub mod cli;
#[cfg(feature = "runtime")]
pub mod copy_probe;
#[cfg(feature = "runtime")]
pub mod counters;
#[cfg(feature = "runtime")]
mod error;
#[cfg(feature = "runtime")]
pub mod fresh_inputs;
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
mod which_driver;

#[cfg(feature = "runtime")]
pub use error::{CourseError, error_name, unfinished};
#[cfg(feature = "runtime")]
pub use gpu::Gpu;
/// The names the grader passes to the course's binaries, at the crate's
/// root where the grader names them (`kernels::KERNEL_PTX_ENV`).
pub use grader_names::{CANARY_RUN_ENV, INPUTS_ON_GPU, KERNEL_PTX_ENV, POISON_KERNEL};
#[cfg(feature = "runtime")]
pub use stopwatch::{Stopwatch, median_ms, median_ms_checked, median_ms_fresh};
