//! A launch as the driver makes it: the shape checked against the device's
//! limits (`limits`), the kernel run (`exec::launch`), and what its blocks
//! found turned into findings and a CUDA error code (`fault`).

use std::sync::Arc;

use kernels::emulator_output::Finding;

use super::fault::{self, Fault};
use super::limits;
use crate::exec::launch::{self, Report, Shape};
use crate::exec::schedule::accesses::Ask;
use crate::heap::Allocation;
use crate::ir::Kernel;

/// What a launch that ran to its end did, its findings worded.
pub type Launched = Report<Finding>;

/// Runs `kernel` over `shape` with `params` (its parameter buffer) against
/// `allocations`, as `cuLaunchKernel` does; with `carry_on`, past what a
/// GPU carries on past (`exec::memory::carry_on`), those findings in what
/// it returns; with `count`, what the hardware would count, by instruction
/// (`counters::launch_counters` reads it by `kernel.cu` line); with
/// `record`, what a profiler's pictures show (`accesses::launch_accesses`
/// reads it).
pub fn run(
    kernel: &Kernel,
    shape: Shape,
    params: Vec<u8>,
    allocations: Vec<Arc<Allocation>>,
    carry_on: bool,
    count: bool,
    record: Option<Ask>,
) -> Result<Launched, Fault> {
    limits::check_shape(kernel, shape)?;
    let words = |found: Vec<launch::Found>| -> Vec<Finding> {
        found
            .iter()
            .map(|found| fault::finding(kernel, shape, found))
            .collect()
    };
    match launch::launch(kernel, shape, params, allocations, carry_on, count, record) {
        Ok(report) => Ok(Report {
            executed: report.executed,
            cpu_seconds: report.cpu_seconds,
            printed: report.printed,
            findings: words(report.findings),
            counts: report.counts,
            recorded: report.recorded,
        }),
        Err(failed) => Err(Fault {
            code: fault::code(&failed.stopped.error),
            finding: Box::new(fault::finding(kernel, shape, &failed.stopped)),
            printed: failed.printed,
            findings: words(failed.findings),
        }),
    }
}
