//! Decoding control and synchronisation: branches and returns, block
//! barriers (with `bar.red`'s reductions), warp collectives (shuffles,
//! votes, matches, `__syncwarp`, `__activemask`), fences and hints, the
//! special registers (clocks among them); and the messages that name, in
//! CUDA C terms, what the emulator does not run.

use super::{Decoded, Decoder, RETURN_LABEL};
use crate::ir::*;
use ptx::ast::{self, Operand};

/// What an instruction the emulator does not run is, for a student: the
/// CUDA C construct it comes from, then the PTX opcode.
pub(super) fn not_supported(opcode: &str) -> String {
    let base = opcode.split('.').next().unwrap_or(opcode);
    let construct = match base {
        "tex" | "tld4" | "txq" => "texture fetches (tex2D(), tex1Dfetch(), cudaTextureObject_t)",
        "suld" | "sust" | "sured" | "suq" => {
            "surface reads and writes (surf2Dread(), surf2Dwrite())"
        }
        "wmma" | "mma" | "ldmatrix" | "stmatrix" | "movmatrix" | "wgmma" => {
            "warp matrix operations on Tensor Cores (nvcuda::wmma, mma.sync)"
        }
        "cp" => "asynchronous copies (cuda::memcpy_async, __pipeline_memcpy_async)",
        "mbarrier" => "asynchronous barriers (cuda::barrier)",
        "redux" => "warp reductions (__reduce_add_sync() and the like)",
        "vote" => "warp votes without a mask (__any(), __all(): use __any_sync() and __all_sync())",
        "shfl" => "shuffles without a mask (__shfl(): use __shfl_sync())",
        "getctarank" | "mapa" | "elect" | "setmaxnreg" | "griddepcontrol" => {
            "thread block clusters and other compute 9.0 features"
        }
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vmad" | "vset"
        | "vadd2" | "vsub2" | "vavrg2" | "vmin2" | "vmax2" | "vset2" | "vadd4" | "vsub4"
        | "vavrg4" | "vmin4" | "vmax4" | "vset4" => {
            "SIMD video instructions (__vadd4() and the like)"
        }
        "istypep" => "texture and surface handle tests",
        "alloca" | "stacksave" | "stackrestore" => "variable-length arrays on the stack (alloca())",
        _ => "",
    };
    if construct.is_empty() {
        format!("the PTX instruction `{opcode}` is not supported by the CPU emulator")
    } else {
        format!("{construct} (PTX `{opcode}`) are not supported by the CPU emulator")
    }
}

/// A special register: a fixed one, or a clock read into a fresh
/// register by an instruction emitted just before its use.
pub(super) fn special_register(decoder: &mut Decoder<'_>, name: &str) -> Decoded<(Reg, u32)> {
    let axis = |base: Reg, suffix: &str| match suffix {
        "x" => Ok(base),
        "y" => Ok(base + 1),
        "z" => Ok(base + 2),
        _ => Err(format!("the special register {name} is not supported")),
    };
    let clock = |decoder: &mut Decoder<'_>, clock: Clock, bits: u32| {
        let d = decoder.new_register(0)?;
        decoder.emit(Op::ReadClock { d, clock });
        Ok((d, bits))
    };
    let reg = match name.split_once('.') {
        Some(("%tid", s)) => axis(fixed::TID, s)?,
        Some(("%ntid", s)) => axis(fixed::NTID, s)?,
        Some(("%ctaid", s)) => axis(fixed::CTAID, s)?,
        Some(("%nctaid", s)) => axis(fixed::NCTAID, s)?,
        _ => match name {
            "%laneid" => fixed::LANEID,
            "%warpid" => fixed::WARPID,
            "%nwarpid" => fixed::NWARPID,
            "%lanemask_eq" => fixed::LANEMASK_EQ,
            "%lanemask_lt" => fixed::LANEMASK_LT,
            "%lanemask_le" => fixed::LANEMASK_LE,
            "%lanemask_gt" => fixed::LANEMASK_GT,
            "%lanemask_ge" => fixed::LANEMASK_GE,
            "%smid" => fixed::SMID,
            "%nsmid" => fixed::NSMID,
            "WARP_SZ" => fixed::WARP_SIZE,
            "%dynamic_smem_size" => fixed::DYNAMIC_SMEM_SIZE,
            "%total_smem_size" => fixed::TOTAL_SMEM_SIZE,
            "%gridid" => fixed::ZERO,
            "%clock" => return clock(decoder, Clock::Clock32, 32),
            "%clock64" => return clock(decoder, Clock::Clock64, 64),
            "%globaltimer" => return clock(decoder, Clock::GlobalTimer, 64),
            "%globaltimer_lo" => return clock(decoder, Clock::GlobalTimerLo, 32),
            "%globaltimer_hi" => return clock(decoder, Clock::GlobalTimerHi, 32),
            _ if name.starts_with('%') => {
                return Err(format!(
                    "the register {name} is not declared, or is a special register the CPU emulator \
                     does not provide"
                ));
            }
            _ => return Err(format!("the register {name} is not declared")),
        },
    };
    Ok((reg, 32))
}

fn warp(op: WarpOp, d: Reg, d_pred: Reg, a: Reg, b: Reg, c: Reg, mask: Reg) -> Op {
    Op::Warp {
        op,
        d,
        d_pred,
        a,
        b,
        c,
        mask,
    }
}

pub(super) fn instruction(
    decoder: &mut Decoder<'_>,
    instruction: &ast::Instruction,
    parts: &[&str],
) -> Decoded<Op> {
    let unsupported = || not_supported(&instruction.opcode);
    let nothing = Op::Mov {
        d: fixed::SINK,
        a: fixed::ZERO,
    };
    match parts[0] {
        "bra" => {
            let [target] = decoder.operands(instruction)?;
            let Operand::Symbol(label) = target else {
                return Err(unsupported());
            };
            let instance = decoder.frame().instance;
            decoder.pending.push((decoder.code.len(), instance, label));
            Ok(Op::Branch { target: 0 })
        }
        "ret" if decoder.frames.len() > 1 => {
            let instance = decoder.frame().instance;
            decoder
                .pending
                .push((decoder.code.len(), instance, RETURN_LABEL.to_string()));
            Ok(Op::Branch { target: 0 })
        }
        "ret" | "exit" => Ok(Op::Exit),
        "trap" | "brkpt" => Ok(Op::Trap),
        "bar" | "barrier" if parts.get(1) == Some(&"warp") => {
            let [mask] = decoder.operands(instruction)?;
            let mask = decoder.source(&mask)?;
            Ok(warp(
                WarpOp::Sync,
                fixed::SINK,
                fixed::SINK,
                fixed::ZERO,
                fixed::ZERO,
                fixed::ZERO,
                mask,
            ))
        }
        "bar" | "barrier" if parts.get(1) == Some(&"red") => {
            // bar.red.popc.u32 d, barrier, {!}p;  bar.red.and.pred ...
            let reduce = match parts.get(2) {
                Some(&"popc") => BarrierReduce::Popc,
                Some(&"and") => BarrierReduce::And,
                Some(&"or") => BarrierReduce::Or,
                _ => return Err(unsupported()),
            };
            if instruction.operands.len() != 3 {
                return Err(format!(
                    "`{}` with a thread count (a named barrier for part of a block) is not supported \
                     by the CPU emulator",
                    instruction.opcode
                ));
            }
            let d = decoder.dest(&instruction.operands[0])?;
            let a = decoder.source(&instruction.operands[2])?;
            Ok(Op::BarrierReduce { reduce, d, a })
        }
        "bar" | "barrier"
            if matches!(parts.get(1), None | Some(&"sync") | Some(&"aligned"))
                && !parts.contains(&"arrive") =>
        {
            if instruction.operands.len() > 1 {
                return Err(format!(
                    "`{}` with a thread count (a named barrier for part of a block) is not supported by \
                     the CPU emulator",
                    instruction.opcode
                ));
            }
            Ok(Op::Barrier)
        }
        "bar" | "barrier" => Err(format!(
            "`{}` (a barrier some threads only arrive at) is not supported by the CPU emulator",
            instruction.opcode
        )),
        // A device-wide fence may order blocks (with an atomic): the race
        // checker is told.
        "membar" | "fence" if parts.iter().any(|p| matches!(*p, "gl" | "gpu" | "sys")) => {
            decoder.device_fence = true;
            Ok(nothing)
        }
        // Fences, sleeps and cache hints: the emulator's memory is coherent
        // and its threads take turns.
        "membar" | "fence" | "nanosleep" | "prefetch" | "prefetchu" | "discard"
        | "applypriority" | "pmevent" => Ok(nothing),
        "createpolicy" => {
            let d = decoder.dest(instruction.operands.first().ok_or_else(unsupported)?)?;
            Ok(Op::Mov { d, a: fixed::ZERO })
        }
        "shfl" if parts.get(1) == Some(&"sync") => {
            let mode = match parts.get(2) {
                Some(&"up") => ShuffleMode::Up,
                Some(&"down") => ShuffleMode::Down,
                Some(&"bfly") => ShuffleMode::Butterfly,
                Some(&"idx") => ShuffleMode::Index,
                _ => return Err(unsupported()),
            };
            let [d, a, b, c, mask] = decoder.operands(instruction)?;
            let (d, d_pred) = match d {
                Operand::Pair(value, pred) => {
                    (decoder.register(&value)?.0, decoder.register(&pred)?.0)
                }
                other => (decoder.dest(&other)?, fixed::SINK),
            };
            let (a, b, c, mask) = (
                decoder.source(&a)?,
                decoder.source(&b)?,
                decoder.source(&c)?,
                decoder.source(&mask)?,
            );
            Ok(warp(WarpOp::Shuffle(mode), d, d_pred, a, b, c, mask))
        }
        "vote" if parts.get(1) == Some(&"sync") => {
            let op = match parts.get(2) {
                Some(&"all") => WarpOp::VoteAll,
                Some(&"any") => WarpOp::VoteAny,
                Some(&"uni") => WarpOp::VoteUni,
                Some(&"ballot") => WarpOp::VoteBallot,
                _ => return Err(unsupported()),
            };
            let [d, a, mask] = decoder.operands(instruction)?;
            let (d, a, mask) = (
                decoder.dest(&d)?,
                decoder.source(&a)?,
                decoder.source(&mask)?,
            );
            Ok(warp(op, d, fixed::SINK, a, fixed::ZERO, fixed::ZERO, mask))
        }
        "activemask" => {
            let [d] = decoder.operands(instruction)?;
            let d = decoder.dest(&d)?;
            // Every lane of the warp may take part; which did is the result.
            let all = decoder.constant(0xffff_ffff)?;
            Ok(warp(
                WarpOp::ActiveMask,
                d,
                fixed::SINK,
                fixed::ZERO,
                fixed::ZERO,
                fixed::ZERO,
                all,
            ))
        }
        "match" if parts.get(1) == Some(&"any") || parts.get(1) == Some(&"all") => {
            // match.any.sync.b32 d, a, mask;  match.all.sync.b32 d[|p], a, mask;
            let op = if parts[1] == "any" {
                WarpOp::MatchAny
            } else {
                WarpOp::MatchAll
            };
            let [d, a, mask] = decoder.operands(instruction)?;
            let (d, d_pred) = match d {
                Operand::Pair(value, pred) => {
                    (decoder.register(&value)?.0, decoder.register(&pred)?.0)
                }
                other => (decoder.dest(&other)?, fixed::SINK),
            };
            let (a, mask) = (decoder.source(&a)?, decoder.source(&mask)?);
            Ok(warp(op, d, d_pred, a, fixed::ZERO, fixed::ZERO, mask))
        }
        _ => Err(unsupported()),
    }
}
