//! A failed block as the user reads it: the CUDA error code a GPU would
//! return and a message naming the block, the thread, the address and the
//! `kernel.cu` line, for every way a block can fail.

use super::access::AccessError;
use super::block::BlockError;
use super::launch::{Fault, Shape};
use super::thread::ThreadError;
use crate::driver::codes;
use crate::ir::{Kernel, Space};

fn coords(index: u64, shape: [u32; 3]) -> String {
    let x = index % u64::from(shape[0]);
    let y = index / u64::from(shape[0]) % u64::from(shape[1]);
    let z = index / (u64::from(shape[0]) * u64::from(shape[1]));
    format!("({x},{y},{z})")
}

fn space_name(space: Space) -> &'static str {
    match space {
        Space::Global | Space::Generic => "global",
        Space::Shared => "shared",
        Space::Const => "constant",
        Space::Local => "local",
        Space::Param => "parameter",
    }
}

/// The message and CUDA error code for a block's failure.
pub fn describe(kernel: &Kernel, shape: Shape, ctaid: [u32; 3], error: BlockError) -> Fault {
    let block = format!("({},{},{})", ctaid[0], ctaid[1], ctaid[2]);
    let threads: u64 = shape.block.iter().map(|&d| u64::from(d)).product();
    let thread = |t: usize| coords(t as u64, shape.block);
    let origin = |pc: u32| {
        kernel.origins.get(pc as usize).map_or_else(
            || format!("instruction {pc}"),
            |o| format!("`{}` at {}", o.opcode, o.describe()),
        )
    };
    let head = format!("kernel `{}` block {block}", kernel.name);
    let (code, message) = match error {
        BlockError::Thread(t, pc, ThreadError::Unsupported(index)) => (
            codes::ILLEGAL_INSTRUCTION,
            format!(
                "{head} thread {}: {} (the emulator stops here rather than guess)",
                thread(t),
                kernel
                    .unsupported
                    .get(index as usize)
                    .map_or("unsupported instruction", String::as_str)
            ) + &format!(", {}", origin(pc)),
        ),
        BlockError::Thread(
            t,
            _,
            ThreadError::Assert {
                message,
                file,
                line,
                function,
            },
        ) => (
            codes::ASSERT,
            format!(
                "{file}:{line}: {function}: block: [{}], thread: [{}] Assertion `{message}` failed \
                 (kernel `{}`)",
                block.trim_matches(|c| c == '(' || c == ')'),
                thread(t).trim_matches(|c| c == '(' || c == ')'),
                kernel.name
            ),
        ),
        BlockError::Thread(t, pc, ThreadError::Trap) => (
            codes::LAUNCH_FAILED,
            format!(
                "{head} thread {}: the kernel called __trap() (or `trap`), {}",
                thread(t),
                origin(pc)
            ),
        ),
        BlockError::Thread(t, pc, ThreadError::Runaway) => (
            codes::LAUNCH_FAILED,
            format!(
                "{head} thread {}: ran more than {} instructions, so it is taken to loop forever; {}",
                thread(t),
                super::thread::RUNAWAY,
                origin(pc)
            ),
        ),
        BlockError::Thread(t, pc, ThreadError::Access(access)) => {
            let who = format!("{head} thread {}", thread(t));
            match access {
                AccessError::OutOfBounds {
                    space,
                    address,
                    len,
                    near,
                } => {
                    let place = match near {
                        Some((base, size, label)) if address >= base => format!(
                            "{} bytes past the start of a {size}-byte {label} allocation at {base:#x} (it ends at {:#x})",
                            address - base,
                            base + size
                        ),
                        _ => "in no allocation".to_string(),
                    };
                    (
                        codes::ILLEGAL_ADDRESS,
                        format!(
                            "{who}: out-of-bounds {} access of {len} bytes at {address:#x}, {place}; {}",
                            space_name(space),
                            origin(pc)
                        ),
                    )
                }
                AccessError::Poisoned {
                    address,
                    origin: (reader, read_at, offset),
                } => (
                    codes::LAUNCH_FAILED,
                    format!(
                        "{who}: a value computed from uninitialised shared memory is stored to global \
                         memory at {address:#x}, {}: thread {} of the block read shared address \
                         {offset:#x}, which no thread of the block had written, at {}. Shared memory \
                         holds garbage when a block starts (the emulator fills it with {:#010x}): \
                         write every element before any thread reads it",
                        origin(pc),
                        thread(reader),
                        origin(read_at),
                        super::taint::POISON
                    ),
                ),
                AccessError::Uninitialised {
                    address,
                    len,
                    allocation: (base, size, label),
                } => (
                    codes::LAUNCH_FAILED,
                    format!(
                        "{who}: uninitialised global read of {len} bytes at {address:#x}, {} bytes into a \
                         {size}-byte {label} allocation at {base:#x} that nothing wrote there (no host \
                         copy, memset or kernel store); {}",
                        address - base,
                        origin(pc)
                    ),
                ),
                AccessError::Misaligned {
                    space,
                    address,
                    align,
                } => (
                    codes::MISALIGNED_ADDRESS,
                    format!(
                        "{who}: misaligned {} access at {address:#x} (needs {align}-byte alignment); {}",
                        space_name(space),
                        origin(pc)
                    ),
                ),
                AccessError::Race {
                    space,
                    address,
                    write,
                    conflict,
                } => {
                    let other_block = coords(conflict.earlier.thread / threads, shape.grid);
                    let other_thread = coords(conflict.earlier.thread % threads, shape.block);
                    let (kind, fix) = match space {
                        Space::Shared => (
                            "shared-memory race",
                            "put __syncthreads() between them or use an atomic",
                        ),
                        _ => (
                            "global-memory conflict",
                            "give each thread its own element or use an atomic",
                        ),
                    };
                    (
                        codes::LAUNCH_FAILED,
                        format!(
                            "{kind} in kernel `{}` at {} address {address:#x}: block {other_block} thread \
                             {other_thread} {} it ({}), then block {block} thread {} {} it ({}) with no \
                             barrier between; {fix}",
                            kernel.name,
                            space_name(space),
                            if conflict.earlier_wrote {
                                "wrote"
                            } else {
                                "read"
                            },
                            conflict
                                .earlier
                                .at
                                .map_or_else(|| "an earlier instruction".to_string(), origin),
                            thread(t),
                            if write { "wrote" } else { "read" },
                            origin(pc),
                        ),
                    )
                }
            }
        }
        BlockError::BarrierDivergence((t1, pc1), (t2, pc2)) => (
            codes::LAUNCH_FAILED,
            format!(
                "{head}: barrier not reached by every thread: thread {} waits at {} while thread {} waits at {}; \
                 every live thread of a block must reach the same __syncthreads()",
                thread(t1),
                origin(pc1),
                thread(t2),
                origin(pc2)
            ),
        ),
        BlockError::Deadlock(t, pc) => (
            codes::LAUNCH_FAILED,
            format!(
                "{head}: thread {} waits forever at {}: the other threads it waits for exited or wait elsewhere",
                thread(t),
                origin(pc)
            ),
        ),
    };
    Fault {
        code,
        message,
        printed: Vec::new(),
        findings: Vec::new(),
    }
}
