//! A block's fault as the user reads it, the one mapping from the
//! executor's typed faults (`exec::error`) to the host's: the CUDA error
//! code a GPU would return ([`code`]), and the finding the emulator prints
//! ([`finding`]: its kind, block, thread, address and `kernel.cu` line,
//! and the student's words, which name all of them again), for every way a
//! block can fail.

use kernels::emulator_output::{Finding, FindingKind};

use super::codes::{self, CuResult};
use crate::exec::error::{AccessError, BlockError, Earlier, ThreadError};
use crate::exec::launch::{Found, Shape};
use crate::exec::memory::state::POISON;
use crate::exec::schedule::thread::RUNAWAY;
use crate::ir::{Kernel, Space};

/// A launch that failed as a GPU launch would: the CUDA error code, and
/// what to tell the user.
#[derive(Debug)]
pub struct Fault {
    pub code: CuResult,
    /// Why: the block's error, or the launch's refusal (`limits`) (boxed:
    /// a launch's result stays small).
    pub finding: Box<Finding>,
    /// What the blocks printed before it.
    pub printed: Vec<u8>,
    /// What blocks carried on past before it (`exec::memory::carry_on`).
    pub findings: Vec<Finding>,
}

/// The CUDA error code a GPU returns for a launch `error` stopped.
pub fn code(error: &BlockError) -> CuResult {
    match error {
        BlockError::Thread(_, _, ThreadError::Unsupported(_)) => codes::ILLEGAL_INSTRUCTION,
        BlockError::Thread(_, _, ThreadError::Assert { .. }) => codes::ASSERT,
        BlockError::Thread(_, _, ThreadError::Access(AccessError::OutOfBounds { .. })) => {
            codes::ILLEGAL_ADDRESS
        }
        BlockError::Thread(_, _, ThreadError::Access(AccessError::Misaligned { .. })) => {
            codes::MISALIGNED_ADDRESS
        }
        _ => codes::LAUNCH_FAILED,
    }
}

/// What block `found.ctaid` of a launch of `kernel` over `shape` found,
/// typed and in words.
pub fn finding(kernel: &Kernel, shape: Shape, found: &Found) -> Finding {
    let at = Launch {
        kernel,
        shape,
        ctaid: found.ctaid,
    };
    match &found.error {
        BlockError::Thread(t, pc, error) => at.thread_finding(*t, *pc, error),
        BlockError::BarrierDivergence((t1, pc1), (t2, pc2)) => at.about(
            FindingKind::Barrier,
            *t1,
            *pc1,
            format!(
                "{}: barrier not reached by every thread: thread {} waits at {} while thread {} \
                 waits at {}; every live thread of a block must reach the same __syncthreads()",
                at.head(),
                at.thread(*t1),
                at.origin(*pc1),
                at.thread(*t2),
                at.origin(*pc2)
            ),
        ),
        BlockError::Deadlock(t, pc) => at.about(
            FindingKind::Deadlock,
            *t,
            *pc,
            format!(
                "{}: thread {} waits forever at {}: the other threads it waits for exited or wait \
                 elsewhere",
                at.head(),
                at.thread(*t),
                at.origin(*pc)
            ),
        ),
    }
}

/// Why the PTX a program loads cannot be loaded (`message`: the parser's
/// or the decoder's, naming the PTX line).
pub fn unloadable(message: &str) -> Finding {
    Finding::new(
        FindingKind::UnloadablePtx,
        format!("the PTX cannot be loaded: {message}"),
    )
}

/// Why kernel `name` is refused before it runs: the first of what it
/// holds that the emulator cannot run, and where (`at`).
pub fn cannot_run(name: &str, first: &str, at: Option<&str>) -> Finding {
    Finding::new(
        FindingKind::Unsupported,
        format!(
            "kernel `{name}` cannot run on the CPU emulator: {first}{}",
            at.map_or(String::new(), |at| format!(" ({at})"))
        ),
    )
}

/// A panic inside driver function `name`: the emulator's bug.
pub fn internal(name: &str) -> Finding {
    Finding::new(
        FindingKind::Internal,
        format!(
            "internal error in {name} (a bug in the emulator, not in your code); please report \
             it with the command you ran"
        ),
    )
}

/// Index `index` of a row-major `shape`, as (x, y, z).
fn coords(index: u64, shape: [u32; 3]) -> [u32; 3] {
    let x = index % u64::from(shape[0]);
    let y = index / u64::from(shape[0]) % u64::from(shape[1]);
    let z = index / (u64::from(shape[0]) * u64::from(shape[1]));
    [x as u32, y as u32, z as u32]
}

fn triple([x, y, z]: [u32; 3]) -> String {
    format!("({x},{y},{z})")
}

/// Where an out-of-bounds `address` lies against the allocation `near`
/// it (base, size, label).
fn near_words(address: u64, near: Option<&(u64, u64, String)>) -> String {
    match near {
        Some((base, size, label)) if address >= *base => format!(
            "{} bytes past the start of a {size}-byte {label} allocation at {base:#x} (it ends at \
             {:#x})",
            address - base,
            base + size
        ),
        _ => "in no allocation".to_string(),
    }
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

/// The block a finding is in, and what names its threads and
/// instructions.
struct Launch<'a> {
    kernel: &'a Kernel,
    shape: Shape,
    ctaid: [u32; 3],
}

impl Launch<'_> {
    /// "kernel `dot` block (0,0,0)".
    fn head(&self) -> String {
        format!("kernel `{}` block {}", self.kernel.name, triple(self.ctaid))
    }

    /// Thread `t` of the block, as (x,y,z).
    fn thread(&self, t: usize) -> String {
        triple(coords(t as u64, self.shape.block))
    }

    /// "`ld.global.f32` at kernel.cu:35 (PTX line 80)".
    fn origin(&self, pc: u32) -> String {
        self.kernel.origins.get(pc as usize).map_or_else(
            || format!("instruction {pc}"),
            |o| format!("`{}` at {}", o.opcode, o.describe()),
        )
    }

    /// A finding of `kind` about thread `t` at instruction `pc`.
    fn about(&self, kind: FindingKind, t: usize, pc: u32, words: String) -> Finding {
        Finding {
            kind,
            block: Some(self.ctaid),
            thread: Some(coords(t as u64, self.shape.block)),
            address: None,
            line: self
                .kernel
                .origins
                .get(pc as usize)
                .and_then(|o| o.kernel_line),
            words,
        }
    }

    fn thread_finding(&self, t: usize, pc: u32, error: &ThreadError) -> Finding {
        let who = format!("{} thread {}", self.head(), self.thread(t));
        match error {
            ThreadError::Access(access) => self.access_finding(t, pc, access),
            ThreadError::Unsupported(index) => {
                let what = self
                    .kernel
                    .unsupported
                    .get(*index as usize)
                    .map_or("unsupported instruction", String::as_str);
                let words = format!(
                    "{who}: {what} (the emulator stops here rather than guess), {}",
                    self.origin(pc)
                );
                self.about(FindingKind::Unsupported, t, pc, words)
            }
            ThreadError::Assert {
                message,
                file,
                line,
                function,
            } => {
                let words = format!(
                    "{file}:{line}: {function}: block: [{}], thread: [{}] Assertion `{message}` \
                     failed (kernel `{}`)",
                    triple(self.ctaid).trim_matches(|c| c == '(' || c == ')'),
                    self.thread(t).trim_matches(|c| c == '(' || c == ')'),
                    self.kernel.name
                );
                self.about(FindingKind::Assert, t, pc, words)
            }
            ThreadError::Trap => {
                let words = format!(
                    "{who}: the kernel called __trap() (or `trap`), {}",
                    self.origin(pc)
                );
                self.about(FindingKind::Trap, t, pc, words)
            }
            ThreadError::Runaway => {
                let words = format!(
                    "{who}: ran more than {RUNAWAY} instructions, so it is taken to loop forever; {}",
                    self.origin(pc)
                );
                self.about(FindingKind::Runaway, t, pc, words)
            }
        }
    }

    fn access_finding(&self, t: usize, pc: u32, error: &AccessError) -> Finding {
        let who = format!("{} thread {}", self.head(), self.thread(t));
        let (kind, address, words) = match error {
            AccessError::OutOfBounds {
                space,
                address,
                len,
                near,
            } => {
                let place = near_words(*address, near.as_ref());
                let words = format!(
                    "{who}: out-of-bounds {} access of {len} bytes at {address:#x}, {place}; {}",
                    space_name(*space),
                    self.origin(pc)
                );
                (FindingKind::OutOfBounds, *address, words)
            }
            AccessError::Poisoned {
                address,
                origin: (reader, read_at, offset),
            } => {
                let words = format!(
                    "{who}: a value computed from uninitialised shared memory is stored to global \
                     memory at {address:#x}, {}: thread {} of the block read shared address \
                     {offset:#x}, which no thread of the block had written, at {}. Shared memory \
                     holds garbage when a block starts (the emulator fills it with {POISON:#010x}): \
                     write every element before any thread reads it",
                    self.origin(pc),
                    self.thread(*reader),
                    self.origin(*read_at),
                );
                (FindingKind::Uninitialised, *address, words)
            }
            AccessError::Uninitialised {
                address,
                len,
                allocation: (base, size, label),
            } => {
                let words = format!(
                    "{who}: uninitialised global read of {len} bytes at {address:#x}, {} bytes into \
                     a {size}-byte {label} allocation at {base:#x} that nothing wrote there (no \
                     host copy, memset or kernel store); {}",
                    address - base,
                    self.origin(pc)
                );
                (FindingKind::Uninitialised, *address, words)
            }
            AccessError::Misaligned {
                space,
                address,
                align,
            } => {
                let words = format!(
                    "{who}: misaligned {} access at {address:#x} (needs {align}-byte alignment); {}",
                    space_name(*space),
                    self.origin(pc)
                );
                (FindingKind::Misaligned, *address, words)
            }
            AccessError::Race {
                space,
                address,
                write,
                earlier,
            } => {
                let (kind, words) = self.race_words(t, pc, *space, *address, *write, earlier);
                (kind, *address, words)
            }
        };
        Finding {
            address: Some(address),
            ..self.about(kind, t, pc, words)
        }
    }

    /// A race's kind and words: both threads, both instructions, and the
    /// fix.
    fn race_words(
        &self,
        t: usize,
        pc: u32,
        space: Space,
        address: u64,
        write: bool,
        earlier: &Earlier,
    ) -> (FindingKind, String) {
        let threads: u64 = self.shape.block.iter().map(|&d| u64::from(d)).product();
        let other_block = triple(coords(earlier.thread / threads, self.shape.grid));
        let other_thread = triple(coords(earlier.thread % threads, self.shape.block));
        let (kind, name, fix) = match space {
            Space::Shared => (
                FindingKind::SharedMemoryRace,
                "shared-memory race",
                "put __syncthreads() between them or use an atomic",
            ),
            _ => (
                FindingKind::GlobalMemoryConflict,
                "global-memory conflict",
                "give each thread its own element or use an atomic",
            ),
        };
        let did = |wrote: bool| if wrote { "wrote" } else { "read" };
        let words = format!(
            "{name} in kernel `{}` at {} address {address:#x}: block {other_block} thread \
             {other_thread} {} it ({}), then block {} thread {} {} it ({}) with no barrier \
             between; {fix}",
            self.kernel.name,
            space_name(space),
            did(earlier.wrote),
            earlier.at.map_or_else(
                || "an earlier instruction".to_string(),
                |at| self.origin(at)
            ),
            triple(self.ctaid),
            self.thread(t),
            did(write),
            self.origin(pc),
        );
        (kind, words)
    }
}
