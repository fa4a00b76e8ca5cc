//! What the driver checks before it runs a launch: the block and grid
//! shapes against the device's limits and the kernel's `.maxntid` and
//! `.reqntid`, and its shared memory against 48 KiB or the kernel's raised
//! limit, each refused with the code a GPU returns
//! (`CUDA_ERROR_INVALID_VALUE`, as an H100 does for every one of them).
//! Registers are not checked: ptxas allocates them on a GPU, and the
//! emulator has no ptxas.

use kernels::emulator_output::{Finding, FindingKind};

use super::codes;
use super::fault::Fault;
use crate::device;
use crate::exec::launch::Shape;
use crate::ir::Kernel;

/// Whether a GPU would run `kernel` over `shape`.
pub fn check_shape(kernel: &Kernel, shape: Shape) -> Result<(), Fault> {
    let refuse = |code, why: String| {
        Err(Fault {
            code,
            finding: Box::new(Finding::new(
                FindingKind::RefusedLaunch,
                format!("kernel `{}`: the launch is refused: {why}", kernel.name),
            )),
            printed: Vec::new(),
            findings: Vec::new(),
        })
    };
    let threads: u64 = shape.block.iter().map(|&d| u64::from(d)).product();
    let dims = |s: [u32; 3]| format!("({}, {}, {})", s[0], s[1], s[2]);
    if shape.block.contains(&0) || shape.grid.contains(&0) {
        return refuse(
            codes::INVALID_VALUE,
            format!(
                "a grid of {} blocks of {} threads has a dimension of 0",
                dims(shape.grid),
                dims(shape.block)
            ),
        );
    }
    let extents = [
        ("block", "threads", shape.block, device::MAX_BLOCK),
        ("grid", "blocks", shape.grid, device::MAX_GRID),
    ];
    for (what, of, dims_of, most) in extents {
        for axis in 0..3 {
            if dims_of[axis] > most[axis] {
                return refuse(
                    codes::INVALID_VALUE,
                    format!(
                        "a {what} of {} {of}: its {} dimension may be at most {}",
                        dims(dims_of),
                        ["x", "y", "z"][axis],
                        most[axis]
                    ),
                );
            }
        }
    }
    if threads > u64::from(device::MAX_THREADS_PER_BLOCK) {
        return refuse(
            codes::INVALID_VALUE,
            format!(
                "a block of {} threads has {threads}; a block may have at most {}",
                dims(shape.block),
                device::MAX_THREADS_PER_BLOCK
            ),
        );
    }
    if let Some(required) = kernel.directives.reqntid
        && required != shape.block
    {
        return refuse(
            codes::INVALID_VALUE,
            format!(
                "its PTX requires blocks of exactly {} threads (.reqntid), not {}",
                dims(required),
                dims(shape.block)
            ),
        );
    }
    if threads > u64::from(kernel.max_threads_per_block()) {
        return refuse(
            codes::INVALID_VALUE,
            format!(
                "a block of {threads} threads; __launch_bounds__ allows at most {} (.maxntid)",
                kernel.max_threads_per_block()
            ),
        );
    }
    let limit = shape
        .dynamic_limit
        .unwrap_or_else(|| device::SHARED_PER_BLOCK.saturating_sub(kernel.static_shared as u32));
    if shape.dynamic_shared > limit {
        return refuse(
            codes::INVALID_VALUE,
            format!(
                "{} bytes of dynamic shared memory besides {} static; the kernel may ask for {limit} \
                 (48 KiB in all, or up to the device's {} after \
                 cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))",
                shape.dynamic_shared,
                kernel.static_shared,
                device::SHARED_PER_BLOCK_OPTIN
            ),
        );
    }
    Ok(())
}
