//! The pre-decoded form a kernel runs in: a register machine whose registers
//! are indices into one `u64` array per thread, with immediates, symbols and
//! launch constants placed in registers before the first instruction, labels
//! resolved to instruction indices, and each operation's types and rounding
//! chosen up front as a function pointer. Nothing is parsed while running.

/// The source file an exercise's kernel is in: the file whose lines a
/// finding names (`Origin::kernel_line`).
pub const KERNEL_FILE: &str = "kernel.cu";

/// A register index. Values live in the low bits, zero-extended.
pub type Reg = u16;

pub type UnaryFn = fn(u64) -> u64;
pub type BinaryFn = fn(u64, u64) -> u64;
pub type TernaryFn = fn(u64, u64, u64) -> u64;
pub type CompareFn = fn(u64, u64) -> bool;
pub type QuaternaryFn = fn(u64, u64, u64, u64) -> u64;
/// An operation that reads and writes the carry flag (`add.cc`, `addc`,
/// `madc`): (a, b, c, carry in) -> (d, carry out).
pub type CarryFn = fn(u64, u64, u64, u64) -> (u64, u64);

/// Generic addresses of shared memory: this window plus the offset
/// (`cvta.shared`, and `exec::memory::state::generic` back).
pub const SHARED_WINDOW: u64 = 0x0000_1000_0000_0000;
/// Generic addresses of the thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x0000_2000_0000_0000;
/// Bytes of each window.
pub const WINDOW_BYTES: u64 = 1 << 32;

/// A PTX numeric type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int { bits: u32, signed: bool },
    F16,
    F32,
    F64,
}

/// One `cvt` form, decoded (`exec::value::convert` makes and applies it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Conversion {
    pub to: Num,
    pub from: Num,
    /// `.rni .rzi .rmi .rpi`: round to an integral value.
    pub int_mode: Option<u8>,
    /// `.rn .rz .rm .rp`: round to the destination float type.
    pub float_mode: u8,
    pub sat: bool,
    pub ftz: bool,
}

/// Registers every kernel has, at fixed indices.
pub mod fixed {
    use super::Reg;
    /// Always 0: the base of `[8]` and of parameter and variable addresses.
    pub const ZERO: Reg = 0;
    /// Always 1: the guard of unguarded instructions.
    pub const TRUE: Reg = 1;
    /// Written by outputs nobody reads (`_`, setp's absent second output).
    pub const SINK: Reg = 2;
    pub const TID: Reg = 3; // .x .y .z
    pub const NTID: Reg = 6;
    pub const CTAID: Reg = 9;
    pub const NCTAID: Reg = 12;
    pub const LANEID: Reg = 15;
    pub const WARPID: Reg = 16;
    pub const NWARPID: Reg = 17;
    pub const LANEMASK_EQ: Reg = 18;
    pub const LANEMASK_LT: Reg = 19;
    pub const LANEMASK_LE: Reg = 20;
    pub const LANEMASK_GT: Reg = 21;
    pub const LANEMASK_GE: Reg = 22;
    pub const SMID: Reg = 23;
    pub const NSMID: Reg = 24;
    pub const WARP_SIZE: Reg = 25;
    /// The carry flag of `add.cc` and friends (CC.CF).
    pub const CARRY: Reg = 26;
    /// `%dynamic_smem_size` and `%total_smem_size`, set at launch.
    pub const DYNAMIC_SMEM_SIZE: Reg = 27;
    pub const TOTAL_SMEM_SIZE: Reg = 28;
    /// The first register the kernel's own declarations get.
    pub const FIRST_FREE: Reg = 29;
}

/// Where a load or store goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
    Const,
    Local,
    Param,
    /// A generic address: global, or inside the shared or local window.
    Generic,
}

/// The atomic operations (`atom`, `red`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    AddF16,
    AddF32,
    AddF64,
    MinU,
    MinS,
    MaxU,
    MaxS,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

/// Warp-wide operations: every participating lane must arrive first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// shfl.sync mode; d, d_pred, a (value), b (lane/delta), c (clamp), mask.
    Shuffle(ShuffleMode),
    VoteAll,
    VoteAny,
    VoteUni,
    VoteBallot,
    /// bar.warp.sync: only the meeting.
    Sync,
    /// activemask: the lanes that arrived at this instruction together.
    ActiveMask,
    /// match.any.sync: the lanes whose value equals this lane's.
    MatchAny,
    /// match.all.sync: the mask if all lanes' values are equal, else 0,
    /// and that as the predicate.
    MatchAll,
}

/// The reductions of `bar.red` (`__syncthreads_count/and/or`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierReduce {
    Popc,
    And,
    Or,
}

/// Registers whose value is read when the instruction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// `%clock`: the low 32 bits of `%clock64`.
    Clock32,
    /// `%clock64`: a per-thread count that only grows (the emulator counts
    /// instructions, not cycles).
    Clock64,
    /// `%globaltimer`: nanoseconds of the host's clock.
    GlobalTimer,
    GlobalTimerLo,
    GlobalTimerHi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleMode {
    Up,
    Down,
    Butterfly,
    Index,
}

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Mov {
        d: Reg,
        a: Reg,
    },
    Unary {
        f: UnaryFn,
        d: Reg,
        a: Reg,
    },
    Convert {
        conversion: Conversion,
        d: Reg,
        a: Reg,
    },
    Binary {
        f: BinaryFn,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Ternary {
        f: TernaryFn,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// d = compare(a, b) `combine` c; d_not = !compare(a, b) `combine` c.
    Setp {
        f: CompareFn,
        combine: Combine,
        d: Reg,
        d_not: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// d = c ? a : b
    Select {
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    Load {
        space: Space,
        /// Bytes of each element.
        size: u8,
        /// 0: zero-extend; otherwise sign-extend to this many bits (the
        /// destination register's width).
        sign_to: u8,
        /// `.nc`: read-only for the whole kernel, so no conflict tracking.
        read_only: bool,
        count: u8,
        d: [Reg; 4],
        base: Reg,
        offset: i64,
    },
    Store {
        space: Space,
        size: u8,
        count: u8,
        s: [Reg; 4],
        base: Reg,
        offset: i64,
    },
    Atomic {
        space: Space,
        op: AtomicOp,
        size: u8,
        d: Reg,
        base: Reg,
        offset: i64,
        b: Reg,
        c: Reg,
    },
    /// Shared -> generic (`cvta.shared`) and back (`cvta.to.shared`), and
    /// the same for local.
    ToGeneric {
        d: Reg,
        a: Reg,
        window: u64,
    },
    FromGeneric {
        d: Reg,
        a: Reg,
        window: u64,
    },
    Branch {
        target: u32,
    },
    Barrier,
    Warp {
        op: WarpOp,
        d: Reg,
        d_pred: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
        mask: Reg,
    },
    Exit,
    /// An instruction the emulator cannot run: the launch stops with the
    /// message at this index of `Kernel::unsupported` if a thread gets here.
    Unsupported(u32),
    /// `d` from `count` fields of `bits` each, the first lowest
    /// (`mov.b64 %rd, {%r1, %r2}`).
    Pack {
        d: Reg,
        parts: [Reg; 4],
        count: u8,
        bits: u8,
    },
    /// `count` fields of `bits` each from `a`, the first lowest
    /// (`mov.b64 {%r1, %r2}, %rd`).
    Unpack {
        a: Reg,
        parts: [Reg; 4],
        count: u8,
        bits: u8,
    },
    Quaternary {
        f: QuaternaryFn,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
        e: Reg,
    },
    /// Reads `fixed::CARRY`, and writes it when `set` (`.cc`).
    Carry {
        f: CarryFn,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
        set: bool,
    },
    ReadClock {
        d: Reg,
        clock: Clock,
    },
    /// `__syncthreads_count/and/or`: a barrier whose `d` is the reduction
    /// of every thread's `a`.
    BarrierReduce {
        reduce: BarrierReduce,
        d: Reg,
        a: Reg,
    },
    /// `printf`: the format's generic address, the argument buffer's; `d`
    /// gets the number of arguments.
    Printf {
        d: Reg,
        format: Reg,
        args: Reg,
    },
    /// `assert` failed (`__assertfail`): the message, file and function
    /// are generic addresses of strings.
    AssertFail {
        message: Reg,
        file: Reg,
        line: Reg,
        function: Reg,
    },
    /// `trap` (`__trap()`): the kernel stops with an error.
    Trap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    And,
    Or,
    Xor,
}

/// One decoded instruction: runs when `regs[guard] != 0` differs from
/// `negate`.
#[derive(Clone, Copy, Debug)]
pub struct Inst {
    pub op: Op,
    pub guard: Reg,
    pub negate: bool,
}

/// Where an instruction came from, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    pub ptx_line: u32,
    /// `kernel.cu:35` when the PTX has `.loc` lines.
    pub source: Option<String>,
    /// The line of the student's `kernel.cu` it came from (inlined there,
    /// for one from a header), when the PTX says.
    pub kernel_line: Option<u32>,
    pub opcode: String,
}

impl Origin {
    /// "kernel.cu line 35" or "PTX line 120".
    pub fn describe(&self) -> String {
        match &self.source {
            Some(source) => format!("{source} (PTX line {})", self.ptx_line),
            None => format!("PTX line {}", self.ptx_line),
        }
    }
}

/// A kernel ready to run.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub code: Vec<Inst>,
    pub origins: Vec<Origin>,
    /// Initial register values: constants, symbol addresses; per-thread and
    /// per-block slots are filled at launch.
    pub template: Vec<u64>,
    /// (offset, size) of each parameter in the parameter buffer.
    pub params: Vec<(usize, usize)>,
    pub param_bytes: usize,
    /// Static shared memory; dynamic shared memory starts here.
    pub static_shared: u64,
    /// Per-thread `.local` bytes.
    pub local_bytes: u64,
    pub unsupported: Vec<String>,
    /// Where each of `unsupported` is: "kernel.cu:35 (PTX line 120)".
    pub unsupported_at: Vec<String>,
    /// It has a device-wide fence (`__threadfence()`), with which blocks
    /// may order their accesses through an atomic.
    pub device_fence: bool,
    /// 32-bit registers a thread needs as the PTX's `.reg` declarations
    /// count them (64-bit ones two, predicates none; an inlined function's
    /// once per call): an approximation of what ptxas allocates, which is
    /// usually fewer.
    pub declared_registers: u32,
    /// `.maxntid`, `.reqntid` and the rest: what bounds its launches.
    pub directives: ptx::ast::LaunchDirectives,
    /// The PTX ISA version of its module, times ten (`.version 7.8` -> 78).
    pub ptx_version: u32,
}

impl Kernel {
    /// Threads a block of this kernel may have: the device's limit, or less
    /// under `.maxntid` or `.reqntid`.
    pub fn max_threads_per_block(&self) -> u32 {
        let product = |shape: [u32; 3]| shape.iter().map(|&d| u64::from(d)).product::<u64>();
        [self.directives.maxntid, self.directives.reqntid]
            .into_iter()
            .flatten()
            .map(product)
            .fold(u64::from(crate::device::MAX_THREADS_PER_BLOCK), u64::min) as u32
    }
}
