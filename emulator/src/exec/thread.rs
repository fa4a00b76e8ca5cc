//! One thread running decoded instructions until it reaches a barrier, a
//! warp-wide operation or its end. The hot loop: register moves and function
//! pointers chosen at decode time, memory through `access`.

use super::access::{AccessError, ThreadMemory};
use crate::ir::{Combine, Kernel, Op};

/// Why a thread stopped without an error. Its pc stays on the barrier or
/// warp instruction until the block scheduler lets it through.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    Barrier,
    Warp,
    Exit,
}

#[derive(Debug)]
pub enum ThreadError {
    Access(AccessError),
    /// The index into `Kernel::unsupported`.
    Unsupported(u32),
    /// More instructions than any course kernel needs: an endless loop.
    Runaway,
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
/// instruction index.
pub fn run(
    kernel: &Kernel,
    regs: &mut [u64],
    pc_slot: &mut u32,
    memory: &mut ThreadMemory<'_>,
    executed: &mut u64,
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
    let result = loop {
        let at = pc;
        let inst = &code[at as usize];
        count += 1;
        if (reg!(inst.guard) != 0) == inst.negate {
            pc += 1;
            continue;
        }
        match inst.op {
            Op::Mov { d, a } => reg!(d) = reg!(a),
            Op::Unary { f, d, a } => reg!(d) = f(reg!(a)),
            Op::Convert { conversion, d, a } => reg!(d) = conversion.apply(reg!(a)),
            Op::Binary { f, d, a, b } => reg!(d) = f(reg!(a), reg!(b)),
            Op::Ternary { f, d, a, b, c } => reg!(d) = f(reg!(a), reg!(b), reg!(c)),
            Op::Setp {
                f,
                combine,
                d,
                d_not,
                a,
                b,
                c,
            } => {
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
            Op::Select { d, a, b, c } => reg!(d) = if reg!(c) != 0 { reg!(a) } else { reg!(b) },
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
                let mut out = [0u64; 4];
                if let Err(e) = memory.load(space, address, size, n, read_only, at, &mut out) {
                    break Err((at, ThreadError::Access(e)));
                }
                for i in 0..n as usize {
                    reg!(d[i]) = if sign_to == 0 {
                        out[i]
                    } else {
                        sign_extend(out[i], size, sign_to)
                    };
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
                let values = [reg!(s[0]), reg!(s[1]), reg!(s[2]), reg!(s[3])];
                if let Err(e) = memory.store(space, address, size, &values[..n as usize], at) {
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
                match memory.atomic(space, op, address, size, reg!(b), reg!(c), at) {
                    Ok(old) => reg!(d) = old,
                    Err(e) => break Err((at, ThreadError::Access(e))),
                }
            }
            Op::ToGeneric { d, a, window } => reg!(d) = reg!(a).wrapping_add(window),
            Op::FromGeneric { d, a, window } => reg!(d) = reg!(a).wrapping_sub(window),
            Op::Branch { target } => {
                if *executed + count > RUNAWAY {
                    break Err((at, ThreadError::Runaway));
                }
                pc = target;
                continue;
            }
            Op::Barrier => break Ok(Stop::Barrier),
            Op::Warp { .. } => break Ok(Stop::Warp),
            Op::Exit => break Ok(Stop::Exit),
            Op::Unsupported(index) => break Err((at, ThreadError::Unsupported(index))),
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
