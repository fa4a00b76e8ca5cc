//! The executor's faults, typed and with no CUDA error code (wasmi's
//! `TrapCode`): what went wrong with one access (`AccessError`), with one
//! thread (`ThreadError`) and with a block (`BlockError`). The driver alone
//! turns them into a CUDA code and the student's words
//! (`driver::fault`).

use crate::ir::Space;

/// What went wrong with one access.
#[derive(Debug)]
pub enum AccessError {
    OutOfBounds {
        space: Space,
        address: u64,
        len: u64,
        /// (base, length, label) of the allocation just below the address.
        near: Option<(u64, u64, String)>,
    },
    Misaligned {
        space: Space,
        address: u64,
        align: u64,
    },
    Race {
        space: Space,
        address: u64,
        /// Whether this (the later) access wrote.
        write: bool,
        earlier: Earlier,
    },
    /// A value from shared memory no thread of the block wrote, stored to
    /// global memory.
    Poisoned {
        address: u64,
        /// The first read of unwritten shared memory: (thread in the block,
        /// instruction, shared offset).
        origin: (usize, u32, u64),
    },
    /// A read of global memory nothing ever wrote (no copy, memset or
    /// store): compute-sanitizer's initcheck finding.
    Uninitialised {
        address: u64,
        len: u64,
        /// (base, length, label) of the allocation.
        allocation: (u64, u64, String),
    },
}

/// The earlier of two accesses that race, as the race checker kept it
/// (`exec::memory::race`).
#[derive(Debug, PartialEq)]
pub struct Earlier {
    /// Launch-wide thread index (block-major).
    pub thread: u64,
    /// The instruction, or None where the checker could not keep it.
    pub at: Option<u32>,
    pub wrote: bool,
}

/// Why a thread stopped with an error.
#[derive(Debug)]
pub enum ThreadError {
    Access(AccessError),
    /// The index into `Kernel::unsupported`.
    Unsupported(u32),
    /// More instructions than any course kernel needs: an endless loop.
    Runaway,
    /// `assert` failed: the expression, file, line and function.
    Assert {
        message: String,
        file: String,
        line: u32,
        function: String,
    },
    /// `__trap()`.
    Trap,
}

/// How a block failed.
#[derive(Debug)]
pub enum BlockError {
    /// A thread's error, with the thread's index in the block and the
    /// instruction.
    Thread(usize, u32, ThreadError),
    /// Live threads wait at different barriers: (thread, pc) of two of them.
    BarrierDivergence((usize, u32), (usize, u32)),
    /// Threads wait for lanes that will never arrive: (thread, pc).
    Deadlock(usize, u32),
}
