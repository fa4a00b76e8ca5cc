//! One thread running decoded instructions until it reaches a barrier, a
//! warp-wide operation or its end. The hot loop: register moves and function
//! pointers chosen at decode time, memory through `exec::memory::access`.

use super::counters::Counting;
use super::printf;
use crate::exec::error::ThreadError;
use crate::exec::memory::state::ThreadMemory;
use crate::ir::{Clock, Combine, Kernel, Op, Reg, fixed};

/// Why a thread stopped without an error. Its pc stays on the barrier or
/// warp instruction until the block scheduler lets it through.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    Barrier,
    Warp,
    Exit,
    /// With `STEP`, it ran one instruction (the block's lockstep).
    Step,
    /// It read shared memory no thread wrote into these registers (`mask`
    /// says which of them), outside taint tracking: the block starts it,
    /// and the thread goes on from the next instruction.
    Taint {
        registers: [Reg; 4],
        mask: u8,
    },
}

/// Nanoseconds of the host's clock: `%globaltimer`.
fn global_timer() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A NUL-terminated string at a generic address, or "?".
fn text(memory: &mut ThreadMemory<'_>, address: u64) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < 1024 {
        match memory.read_generic(address + bytes.len() as u64, 1) {
            Ok(0) | Err(_) => break,
            Ok(byte) => bytes.push(byte as u8),
        }
    }
    if bytes.is_empty() {
        return "?".to_string();
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Instructions one thread may run before it is taken for an endless loop.
pub const RUNAWAY: u64 = 1 << 34;

fn sign_extend(value: u64, size: u8, to_bits: u8) -> u64 {
    let from = u32::from(size) * 8;
    let shift = 64 - from;
    let wide = (((value << shift) as i64) >> shift) as u64;
    if to_bits >= 64 {
        wide
    } else {
        wide & ((1u64 << to_bits) - 1)
    }
}

/// Runs from `*pc`; on return `*pc` is the instruction it stopped at, and
/// `executed` has grown by the instructions it ran. Errors carry the
/// instruction index. With `TAINT`, `taint` holds a bit per register, and
/// every instruction passes its sources' taint to its destinations (see
/// `exec::memory::taint`); without it, a read of unwritten shared memory stops
/// the thread (`Stop::Taint`) so the block can start tracking. With
/// `STEP`, it stops after one instruction (`Stop::Step`). With `COUNT`,
/// each instruction and each global and shared access is counted in
/// `counting` (see `counters`), which must then be there.
pub fn run<const TAINT: bool, const STEP: bool, const COUNT: bool>(
    kernel: &Kernel,
    regs: &mut [u64],
    taint: &mut [u64],
    pc_slot: &mut u32,
    memory: &mut ThreadMemory<'_>,
    executed: &mut u64,
    mut counting: Option<&mut Counting>,
) -> Result<Stop, (u32, ThreadError)> {
    let mut pc = *pc_slot;
    let code = &kernel.code[..];
    // Decoding gives every operand an index below the template's length,
    // and every thread's registers are a copy of the template.
    assert_eq!(
        regs.len(),
        kernel.template.len(),
        "a thread's registers match its kernel"
    );
    assert!(
        !TAINT || taint.len() * 64 >= regs.len(),
        "a taint bit for every register"
    );
    assert!(!COUNT || counting.is_some(), "somewhere to count");
    let thread = memory.thread;
    let mut count = 0u64;
    // Register access without bounds checks: the hot path of every
    // instruction.
    macro_rules! reg {
        ($index:expr) => {
            // SAFETY: every index decoding produced is below the template's
            // length, which `regs` has (asserted above).
            *unsafe { regs.get_unchecked_mut(usize::from($index)) }
        };
    }
    // A register's taint, and setting it (taint mode only).
    macro_rules! t {
        ($index:expr) => {
            TAINT && taint[usize::from($index) / 64] & (1 << ($index % 64)) != 0
        };
    }
    macro_rules! set_t {
        ($index:expr, $value:expr) => {
            if TAINT {
                let (word, bit) = (usize::from($index) / 64, 1u64 << ($index % 64));
                if $value {
                    taint[word] |= bit;
                } else {
                    taint[word] &= !bit;
                }
            }
        };
    }
    let result = loop {
        if STEP && count > 0 {
            break Ok(Stop::Step);
        }
        let at = pc;
        let inst = &code[at as usize];
        count += 1;
        if COUNT && let Some(counting) = counting.as_deref_mut() {
            counting.executed(thread, at);
        }
        if (reg!(inst.guard) != 0) == inst.negate {
            pc += 1;
            continue;
        }
        match inst.op {
            Op::Mov { d, a } => {
                set_t!(d, t!(a));
                reg!(d) = reg!(a);
            }
            Op::Unary { f, d, a } => {
                set_t!(d, t!(a));
                reg!(d) = f(reg!(a));
            }
            Op::Convert { conversion, d, a } => {
                set_t!(d, t!(a));
                reg!(d) = conversion.apply(reg!(a));
            }
            Op::Binary { f, d, a, b } => {
                set_t!(d, t!(a) || t!(b));
                reg!(d) = f(reg!(a), reg!(b));
            }
            Op::Ternary { f, d, a, b, c } => {
                set_t!(d, t!(a) || t!(b) || t!(c));
                reg!(d) = f(reg!(a), reg!(b), reg!(c));
            }
            Op::Setp {
                f,
                combine,
                d,
                d_not,
                a,
                b,
                c,
            } => {
                let tainted = t!(a) || t!(b) || t!(c);
                set_t!(d, tainted);
                set_t!(d_not, tainted);
                let r = f(reg!(a), reg!(b));
                let other = reg!(c) != 0;
                let (yes, no) = match combine {
                    Combine::And => (r && other, !r && other),
                    Combine::Or => (r || other, !r || other),
                    Combine::Xor => (r ^ other, !r ^ other),
                };
                reg!(d) = u64::from(yes);
                reg!(d_not) = u64::from(no);
            }
            Op::Select { d, a, b, c } => {
                let pick = reg!(c) != 0;
                set_t!(d, t!(c) || if pick { t!(a) } else { t!(b) });
                reg!(d) = if pick { reg!(a) } else { reg!(b) };
            }
            Op::Load {
                space,
                size,
                sign_to,
                read_only,
                count: n,
                d,
                base,
                offset,
            } => {
                let address = reg!(base).wrapping_add(offset as u64);
                if COUNT && let Some(counting) = counting.as_deref_mut() {
                    let bytes = u32::from(size) * u32::from(n);
                    counting.access(thread, at, space, address, bytes);
                }
                let mut out = [0u64; 4];
                // The common global load inlined here, any other in `load`.
                let loaded =
                    match memory.load_global(space, address, size, n, read_only, at, &mut out) {
                        Ok(true) => Ok(0),
                        Ok(false) => memory.load(space, address, size, n, read_only, at, &mut out),
                        Err(e) => Err(e),
                    };
                let tainted = match loaded {
                    Ok(tainted) => tainted,
                    Err(e) => break Err((at, ThreadError::Access(e))),
                };
                for i in 0..n as usize {
                    set_t!(d[i], tainted & (1 << i) != 0);
                    reg!(d[i]) = if sign_to == 0 {
                        out[i]
                    } else {
                        sign_extend(out[i], size, sign_to)
                    };
                }
                if !TAINT && tainted != 0 {
                    pc += 1;
                    break Ok(Stop::Taint {
                        registers: d,
                        mask: tainted,
                    });
                }
            }
            Op::Store {
                space,
                size,
                count: n,
                s,
                base,
                offset,
            } => {
                let address = reg!(base).wrapping_add(offset as u64);
                if COUNT && let Some(counting) = counting.as_deref_mut() {
                    let bytes = u32::from(size) * u32::from(n);
                    counting.access(thread, at, space, address, bytes);
                }
                let values = [reg!(s[0]), reg!(s[1]), reg!(s[2]), reg!(s[3])];
                let mut tainted = 0u8;
                for (i, &value) in s.iter().take(n as usize).enumerate() {
                    tainted |= u8::from(t!(value)) << i;
                }
                if let Err(e) =
                    memory.store(space, address, size, &values[..n as usize], at, tainted)
                {
                    break Err((at, ThreadError::Access(e)));
                }
            }
            Op::Atomic {
                space,
                op,
                size,
                d,
                base,
                offset,
                b,
                c,
            } => {
                let address = reg!(base).wrapping_add(offset as u64);
                if COUNT && let Some(counting) = counting.as_deref_mut() {
                    counting.access(thread, at, space, address, u32::from(size));
                }
                let tainted = t!(b) || t!(c);
                match memory.atomic(space, op, address, size, reg!(b), reg!(c), at, tainted) {
                    Ok((old, old_tainted)) => {
                        set_t!(d, old_tainted);
                        reg!(d) = old;
                    }
                    Err(e) => break Err((at, ThreadError::Access(e))),
                }
            }
            Op::ToGeneric { d, a, window } => {
                set_t!(d, t!(a));
                reg!(d) = reg!(a).wrapping_add(window);
            }
            Op::FromGeneric { d, a, window } => {
                set_t!(d, t!(a));
                reg!(d) = reg!(a).wrapping_sub(window);
            }
            Op::Branch { target } => {
                if *executed + count > RUNAWAY {
                    break Err((at, ThreadError::Runaway));
                }
                pc = target;
                continue;
            }
            Op::Barrier | Op::BarrierReduce { .. } => break Ok(Stop::Barrier),
            Op::Warp { .. } => break Ok(Stop::Warp),
            Op::Exit => break Ok(Stop::Exit),
            Op::Unsupported(index) => break Err((at, ThreadError::Unsupported(index))),
            Op::Pack {
                d,
                parts,
                count: n,
                bits,
            } => {
                let field = u64::MAX >> (64 - u32::from(bits));
                let mut value = 0;
                let mut tainted = false;
                for (i, &part) in parts.iter().take(n as usize).enumerate() {
                    value |= (reg!(part) & field) << (i as u32 * u32::from(bits));
                    tainted |= t!(part);
                }
                set_t!(d, tainted);
                reg!(d) = value;
            }
            Op::Unpack {
                a,
                parts,
                count: n,
                bits,
            } => {
                let field = u64::MAX >> (64 - u32::from(bits));
                let value = reg!(a);
                let tainted = t!(a);
                for (i, &part) in parts.iter().take(n as usize).enumerate() {
                    set_t!(part, tainted);
                    reg!(part) = (value >> (i as u32 * u32::from(bits))) & field;
                }
            }
            Op::Quaternary { f, d, a, b, c, e } => {
                set_t!(d, t!(a) || t!(b) || t!(c) || t!(e));
                reg!(d) = f(reg!(a), reg!(b), reg!(c), reg!(e));
            }
            Op::Carry { f, d, a, b, c, set } => {
                let tainted = t!(a) || t!(b) || t!(c) || t!(fixed::CARRY);
                let (value, carry) = f(reg!(a), reg!(b), reg!(c), reg!(fixed::CARRY));
                set_t!(d, tainted);
                reg!(d) = value;
                if set {
                    set_t!(fixed::CARRY, tainted);
                    reg!(fixed::CARRY) = carry;
                }
            }
            Op::ReadClock { d, clock } => {
                let cycles = *executed + count;
                set_t!(d, false);
                reg!(d) = match clock {
                    Clock::Clock32 => cycles & 0xffff_ffff,
                    Clock::Clock64 => cycles,
                    Clock::GlobalTimer => global_timer(),
                    Clock::GlobalTimerLo => global_timer() & 0xffff_ffff,
                    Clock::GlobalTimerHi => global_timer() >> 32,
                };
            }
            Op::Printf { d, format, args } => {
                let mut out = std::mem::take(&mut memory.block.printf);
                let result = printf::format(memory, reg!(format), reg!(args), &mut out);
                memory.block.printf = out;
                set_t!(d, false);
                match result {
                    Ok(count) => reg!(d) = count,
                    Err(e) => break Err((at, ThreadError::Access(e))),
                }
            }
            Op::AssertFail {
                message,
                file,
                line,
                function,
            } => {
                let failure = ThreadError::Assert {
                    message: text(memory, reg!(message)),
                    file: text(memory, reg!(file)),
                    line: reg!(line) as u32,
                    function: text(memory, reg!(function)),
                };
                break Err((at, failure));
            }
            Op::Trap => break Err((at, ThreadError::Trap)),
        }
        pc += 1;
    };
    *pc_slot = pc;
    *executed += count;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_loads_extend_to_the_register_width() {
        assert_eq!(sign_extend(0xff, 1, 32), 0xffff_ffff);
        assert_eq!(sign_extend(0x7f, 1, 32), 0x7f);
        assert_eq!(sign_extend(0x8000, 2, 64), 0xffff_ffff_ffff_8000);
        assert_eq!(sign_extend(0xffff_ffff, 4, 64), u64::MAX);
    }
}
