//! Decoding the arithmetic and logic instructions: moves (with vector
//! packs and unpacks), integer, float and half arithmetic, the carry chain,
//! bit fields and permutes, comparisons and selects, and conversions.

use super::{Decoded, Decoder};
use crate::exec::value::{bits, compare, float, half, int};
use crate::ir::*;
use ptx::ast::{self, Operand};
use ptx::parser::type_size;

/// The PTX type names among an opcode's parts.
fn is_type(part: &str) -> bool {
    type_size(part).is_some()
}

/// Bits a register of PTX type `ty` holds.
fn type_bits(ty: &str) -> Option<u32> {
    match ty {
        "pred" => Some(1),
        _ => type_size(ty).map(|bytes| bytes as u32 * 8),
    }
}

pub(super) fn instruction(
    decoder: &mut Decoder<'_>,
    instruction: &ast::Instruction,
    parts: &[&str],
) -> Decoded<Op> {
    let base = parts[0];
    let types: Vec<&str> = parts[1..].iter().copied().filter(|p| is_type(p)).collect();
    let mods: Vec<&str> = parts[1..].iter().copied().filter(|p| !is_type(p)).collect();
    let ty = types.last().copied().unwrap_or("");
    let unsupported = || super::control::not_supported(&instruction.opcode);
    let carry = mods.contains(&"cc") || matches!(base, "addc" | "subc" | "madc");
    match base {
        "mov" => mov(decoder, instruction, ty),
        "add" | "sub" | "addc" | "subc" if carry => {
            let [d, a, b] = decoder.operands(instruction)?;
            let f = bits::carry(base, &mods, ty).ok_or_else(unsupported)?;
            Ok(Op::Carry {
                f,
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
                b: decoder.source(&b)?,
                c: fixed::ZERO,
                set: mods.contains(&"cc"),
            })
        }
        "mad" | "madc" if carry => {
            let [d, a, b, c] = decoder.operands(instruction)?;
            let f = bits::carry(base, &mods, ty).ok_or_else(unsupported)?;
            Ok(Op::Carry {
                f,
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
                b: decoder.source(&b)?,
                c: decoder.source(&c)?,
                set: mods.contains(&"cc"),
            })
        }
        "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl"
        | "shr" | "mul24" | "copysign" => {
            let [d, a, b] = decoder.operands(instruction)?;
            let ty = if ty == "pred" { "b8" } else { ty };
            let f = match (base, ty) {
                ("copysign", _) => bits::copysign(ty),
                (_, "f32" | "f64") => float::binary(base, &mods, ty),
                (_, "f16" | "f16x2") => half::binary(base, &mods, ty),
                _ => int::binary(base, &mods, ty),
            }
            .ok_or_else(unsupported)?;
            Ok(Op::Binary {
                f,
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
                b: decoder.source(&b)?,
            })
        }
        "mad" | "fma" | "mad24" | "bfe" | "shf" | "prmt" | "dp4a" | "dp2a" | "sad"
        | "vabsdiff4" | "vabsdiff2" => {
            let [d, a, b, c] = decoder.operands(instruction)?;
            let f = match (base, ty) {
                ("mad" | "fma" | "mad24", "f32" | "f64") => float::ternary(base, &mods, ty),
                ("mad" | "fma", "f16" | "f16x2") => half::ternary(base, &mods, ty),
                ("mad" | "mad24", _) => int::ternary(base, &mods, ty),
                _ => bits::ternary(base, &mods, &types),
            }
            .ok_or_else(unsupported)?;
            Ok(Op::Ternary {
                f,
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
                b: decoder.source(&b)?,
                c: decoder.source(&c)?,
            })
        }
        "bfi" | "lop3" => {
            let [d, a, b, c, e] = decoder.operands(instruction)?;
            let f = bits::quaternary(base, ty).ok_or_else(unsupported)?;
            Ok(Op::Quaternary {
                f,
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
                b: decoder.source(&b)?,
                c: decoder.source(&c)?,
                e: decoder.source(&e)?,
            })
        }
        "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "sqrt" | "rcp" | "rsqrt"
        | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "bfind" | "testp" => {
            let [d, a] = decoder.operands(instruction)?;
            let f = match (ty, base) {
                (_, "bfind") => bits::unary(base, &mods, ty),
                (_, "testp") => float::testp(&mods, ty),
                ("f32" | "f64", _) => float::unary(base, &mods, ty),
                ("f16" | "f16x2", _) => half::unary(base, ty),
                ("pred", "not") => Some(int::w8::cnot as UnaryFn),
                _ => int::unary(base, ty),
            }
            .ok_or_else(unsupported)?;
            Ok(Op::Unary {
                f,
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
            })
        }
        "setp" => setp(decoder, instruction, &mods, ty)?.ok_or_else(unsupported),
        "set" => set(decoder, instruction, &mods, &types)?.ok_or_else(unsupported),
        "selp" => {
            let [d, a, b, c] = decoder.operands(instruction)?;
            Ok(Op::Select {
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
                b: decoder.source(&b)?,
                c: decoder.source(&c)?,
            })
        }
        "slct" => {
            // d = c >= 0 ? a : b, c signed or float.
            let [d, a, b, c] = decoder.operands(instruction)?;
            let test = compare::compare("ge", ty).ok_or_else(unsupported)?;
            let (d, a, b, c) = (
                decoder.dest(&d)?,
                decoder.source(&a)?,
                decoder.source(&b)?,
                decoder.source(&c)?,
            );
            let p = decoder.new_register(0)?;
            decoder.emit(Op::Setp {
                f: test,
                combine: Combine::And,
                d: p,
                d_not: fixed::SINK,
                a: c,
                b: fixed::ZERO,
                c: fixed::TRUE,
            });
            Ok(Op::Select { d, a, b, c: p })
        }
        "cvt" if types.len() == 2 => {
            let [d, a] = decoder.operands(instruction)?;
            let conversion = Conversion::new(&mods, types[0], types[1]).ok_or_else(unsupported)?;
            Ok(Op::Convert {
                conversion,
                d: decoder.dest(&d)?,
                a: decoder.source(&a)?,
            })
        }
        _ => Err(unsupported()),
    }
}

/// `mov`: a register or immediate, or a vector packed into a register
/// (`mov.b64 %rd1, {%r1, %r2}`) or unpacked from one.
fn mov(decoder: &mut Decoder<'_>, instruction: &ast::Instruction, ty: &str) -> Decoded<Op> {
    let [d, a] = decoder.operands(instruction)?;
    let vector = |operand: &Operand| match operand {
        Operand::Vector(parts) => Some(parts.clone()),
        _ => None,
    };
    let total = type_bits(ty).ok_or_else(|| super::control::not_supported(&instruction.opcode))?;
    let split = |parts: &[Operand]| -> Decoded<(u8, u8)> {
        let count = parts.len() as u32;
        if !(2..=4).contains(&count) || total % count != 0 {
            return Err(format!("`{}` with {count} parts", instruction.opcode));
        }
        Ok((count as u8, (total / count) as u8))
    };
    if let Some(parts) = vector(&d) {
        let (count, bits) = split(&parts)?;
        let a = decoder.source(&a)?;
        let mut regs = [fixed::SINK; 4];
        for (slot, part) in regs.iter_mut().zip(&parts) {
            *slot = decoder.dest(part)?;
        }
        return Ok(Op::Unpack {
            a,
            parts: regs,
            count,
            bits,
        });
    }
    if let Some(parts) = vector(&a) {
        let (count, bits) = split(&parts)?;
        let mut regs = [fixed::ZERO; 4];
        for (slot, part) in regs.iter_mut().zip(&parts) {
            *slot = decoder.source(part)?;
        }
        return Ok(Op::Pack {
            d: decoder.dest(&d)?,
            parts: regs,
            count,
            bits,
        });
    }
    Ok(Op::Mov {
        d: decoder.dest(&d)?,
        a: decoder.source(&a)?,
    })
}

/// `setp.cmp[.bool].type d[|e], a, b[, c]`
fn setp(
    decoder: &mut Decoder<'_>,
    instruction: &ast::Instruction,
    mods: &[&str],
    ty: &str,
) -> Decoded<Option<Op>> {
    let Some(cmp) = mods.first() else {
        return Ok(None);
    };
    let f = match ty {
        "f16" => half::compare(cmp),
        _ => compare::compare(cmp, ty),
    };
    let Some(f) = f else {
        return Ok(None);
    };
    let combine = match mods.get(1) {
        Some(&"and") => Combine::And,
        Some(&"or") => Combine::Or,
        Some(&"xor") => Combine::Xor,
        None | Some(&"ftz") => Combine::And,
        _ => return Ok(None),
    };
    let ops = &instruction.operands;
    let (d, d_not) = match ops.first() {
        Some(Operand::Pair(p, q)) => (decoder.register(p)?.0, decoder.register(q)?.0),
        Some(other) => (decoder.dest(other)?, fixed::SINK),
        None => return Err("setp needs operands".to_string()),
    };
    let a = decoder.source(ops.get(1).ok_or("setp needs a")?)?;
    let b = decoder.source(ops.get(2).ok_or("setp needs b")?)?;
    let c = match ops.get(3) {
        Some(c) => decoder.source(c)?,
        None => fixed::TRUE,
    };
    Ok(Some(Op::Setp {
        f,
        combine,
        d,
        d_not,
        a,
        b,
        c,
    }))
}

/// `set.cmp[.bool].dtype.stype d, a, b[, c]`: a comparison as a value,
/// 1.0 for float destinations and all ones for integers.
fn set(
    decoder: &mut Decoder<'_>,
    instruction: &ast::Instruction,
    mods: &[&str],
    types: &[&str],
) -> Decoded<Option<Op>> {
    let [dtype, stype] = types else {
        return Ok(None);
    };
    let truth = match *dtype {
        "f32" => 0x3f80_0000,
        "f16" => 0x3c00,
        "u32" | "s32" | "b32" => 0xffff_ffff,
        "u16" | "s16" | "b16" => 0xffff,
        _ => return Ok(None),
    };
    let p = decoder.new_register(0)?;
    let mut probe = instruction.clone();
    let Some(first) = probe.operands.first_mut() else {
        return Err("set needs operands".to_string());
    };
    let d = std::mem::replace(first, Operand::Sink);
    let Some(Op::Setp {
        f,
        combine,
        d_not,
        a,
        b,
        c,
        ..
    }) = setp(decoder, &probe, mods, stype)?
    else {
        return Ok(None);
    };
    decoder.emit(Op::Setp {
        f,
        combine,
        d: p,
        d_not,
        a,
        b,
        c,
    });
    let (yes, no) = (decoder.constant(truth)?, fixed::ZERO);
    Ok(Some(Op::Select {
        d: decoder.dest(&d)?,
        a: yes,
        b: no,
        c: p,
    }))
}
