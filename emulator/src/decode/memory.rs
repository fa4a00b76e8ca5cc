//! Decoding the memory instructions: `ld`, `ldu`, `st`, `atom` and `red`,
//! with their state space, vector width and element type.

use super::{Decoded, Decoder};
use crate::ir::*;
use ptx::ast::{self, Operand};
use ptx::parser::type_size;

impl Decoder<'_> {
    /// The state space named among an ld/st/atom's modifiers.
    fn space(parts: &[&str]) -> Space {
        for part in parts {
            match *part {
                "global" => return Space::Global,
                "shared" => return Space::Shared,
                "const" => return Space::Const,
                "local" => return Space::Local,
                "param" => return Space::Param,
                _ => {}
            }
        }
        Space::Generic
    }

    fn vector_count(parts: &[&str]) -> u8 {
        match parts.iter().find(|p| matches!(**p, "v2" | "v4")) {
            Some(&"v2") => 2,
            Some(&"v4") => 4,
            _ => 1,
        }
    }

    fn registers_of(
        &mut self,
        operand: &Operand,
        count: u8,
        write: bool,
    ) -> Decoded<([Reg; 4], u32)> {
        let mut regs = [fixed::ZERO; 4];
        let mut bits = 64;
        let parts = match operand {
            Operand::Vector(parts) => parts.clone(),
            single => vec![single.clone()],
        };
        if parts.len() != count as usize {
            return Err("vector operand size does not match".to_string());
        }
        for (slot, part) in regs.iter_mut().zip(&parts) {
            *slot = if write {
                if let Operand::Reg(name) = part {
                    bits = self.register(name)?.1;
                }
                self.dest(part)?
            } else {
                self.source(part)?
            };
        }
        Ok((regs, bits))
    }

    pub(super) fn load(
        &mut self,
        instruction: &ast::Instruction,
        parts: &[&str],
    ) -> Option<Decoded<Op>> {
        let ty = *parts.last()?;
        let size = type_size(ty)? as u8;
        if ty == "f16" || ty == "f16x2" {
            return None;
        }
        let space = Self::space(parts);
        let count = Self::vector_count(parts);
        let read_only = parts.contains(&"nc") || parts[0] == "ldu";
        let signed = ty.starts_with('s');
        Some((|| {
            let [d, address] = self.operands(instruction)?;
            let (d, bits) = self.registers_of(&d, count, true)?;
            let (base, offset) = self.address(&address)?;
            let sign_to = if signed && u32::from(size) * 8 < bits {
                bits as u8
            } else {
                0
            };
            Ok(Op::Load {
                space,
                size,
                sign_to,
                read_only,
                count,
                d,
                base,
                offset,
            })
        })())
    }

    pub(super) fn store(
        &mut self,
        instruction: &ast::Instruction,
        parts: &[&str],
    ) -> Option<Decoded<Op>> {
        let ty = *parts.last()?;
        let size = type_size(ty)? as u8;
        let space = Self::space(parts);
        if matches!(space, Space::Const | Space::Param) {
            return None;
        }
        let count = Self::vector_count(parts);
        Some((|| {
            let [address, s] = self.operands(instruction)?;
            let (base, offset) = self.address(&address)?;
            let (s, _) = self.registers_of(&s, count, false)?;
            Ok(Op::Store {
                space,
                size,
                count,
                s,
                base,
                offset,
            })
        })())
    }

    /// `atom[.sem][.scope][.space].op.type d, [a], b[, c]`; `red` without d.
    pub(super) fn atomic(
        &mut self,
        instruction: &ast::Instruction,
        parts: &[&str],
    ) -> Option<Decoded<Op>> {
        let ty = *parts.last()?;
        let size = type_size(ty)? as u8;
        if size < 4 {
            return None;
        }
        let name = parts[parts.len() - 2];
        let signed = ty.starts_with('s');
        let op = match (name, ty) {
            ("add", "f32") => AtomicOp::AddF32,
            ("add", "f64") => AtomicOp::AddF64,
            (_, "f32" | "f64") => return None,
            ("add", _) => AtomicOp::Add,
            ("min", _) if signed => AtomicOp::MinS,
            ("min", _) => AtomicOp::MinU,
            ("max", _) if signed => AtomicOp::MaxS,
            ("max", _) => AtomicOp::MaxU,
            ("inc", _) if size == 4 => AtomicOp::Inc,
            ("dec", _) if size == 4 => AtomicOp::Dec,
            ("and", _) => AtomicOp::And,
            ("or", _) => AtomicOp::Or,
            ("xor", _) => AtomicOp::Xor,
            ("exch", _) => AtomicOp::Exch,
            ("cas", _) => AtomicOp::Cas,
            _ => return None,
        };
        let space = Self::space(parts);
        let reduction = parts[0] == "red";
        Some((|| {
            let ops = &instruction.operands;
            let (d, rest) = if reduction {
                (fixed::SINK, &ops[..])
            } else {
                (
                    self.dest(ops.first().ok_or("atom needs operands")?)?,
                    &ops[1..],
                )
            };
            let (base, offset) = self.address(rest.first().ok_or("atom needs an address")?)?;
            let b = self.source(rest.get(1).ok_or("atom needs a value")?)?;
            let c = match rest.get(2) {
                Some(c) => self.source(c)?,
                None => fixed::ZERO,
            };
            Ok(Op::Atomic {
                space,
                op,
                size,
                d,
                base,
                offset,
                b,
                c,
            })
        })())
    }
}
