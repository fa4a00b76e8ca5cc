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

    /// The element type and its size, the opcode's last part.
    fn element(instruction: &ast::Instruction, parts: &[&str]) -> Decoded<(String, u8)> {
        let ty = parts.last().copied().unwrap_or("");
        match type_size(ty) {
            Some(size) => Ok((ty.to_string(), size as u8)),
            None => Err(super::control::not_supported(&instruction.opcode)),
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
                if let Operand::Reg(name) | Operand::Symbol(name) = part
                    && let Some((_, b)) = self.declared(name)
                {
                    bits = b;
                }
                self.dest(part)?
            } else {
                self.source(part)?
            };
        }
        Ok((regs, bits))
    }

    /// The space of an access: what the opcode says, unless it says
    /// `.param` of a call's argument, which lives in local memory.
    fn resolved(stated: Space, by_symbol: Option<Space>) -> Space {
        match (stated, by_symbol) {
            (Space::Param | Space::Local, Some(Space::Local)) => Space::Local,
            (stated, _) => stated,
        }
    }

    pub(super) fn load(&mut self, instruction: &ast::Instruction, parts: &[&str]) -> Decoded<Op> {
        let (ty, size) = Self::element(instruction, parts)?;
        let count = Self::vector_count(parts);
        let read_only = parts.contains(&"nc") || parts[0] == "ldu";
        let signed = ty.starts_with('s');
        let [d, address] = self.operands(instruction)?;
        let (d, bits) = self.registers_of(&d, count, true)?;
        let (base, offset, by_symbol) = self.address(&address)?;
        let sign_to = if signed && u32::from(size) * 8 < bits {
            bits as u8
        } else {
            0
        };
        Ok(Op::Load {
            space: Self::resolved(Self::space(parts), by_symbol),
            size,
            sign_to,
            read_only,
            count,
            d,
            base,
            offset,
        })
    }

    pub(super) fn store(&mut self, instruction: &ast::Instruction, parts: &[&str]) -> Decoded<Op> {
        let (_, size) = Self::element(instruction, parts)?;
        let count = Self::vector_count(parts);
        let [address, s] = self.operands(instruction)?;
        let (base, offset, by_symbol) = self.address(&address)?;
        let space = Self::resolved(Self::space(parts), by_symbol);
        if matches!(space, Space::Const | Space::Param) {
            return Err(format!(
                "`{}` writes to read-only memory",
                instruction.opcode
            ));
        }
        let (s, _) = self.registers_of(&s, count, false)?;
        Ok(Op::Store {
            space,
            size,
            count,
            s,
            base,
            offset,
        })
    }

    /// `atom[.sem][.scope][.space].op.type d, [a], b[, c]`; `red` without d.
    pub(super) fn atomic(&mut self, instruction: &ast::Instruction, parts: &[&str]) -> Decoded<Op> {
        let unsupported = || super::control::not_supported(&instruction.opcode);
        let (ty, size) = Self::element(instruction, parts)?;
        let name = parts[parts.len() - 2];
        let signed = ty.starts_with('s');
        let op = match (name, ty.as_str(), size) {
            ("add" | "noftz", "f16", _) => AtomicOp::AddF16,
            ("add", "f32", _) => AtomicOp::AddF32,
            ("add", "f64", _) => AtomicOp::AddF64,
            ("cas", _, 2) => AtomicOp::Cas,
            (_, _, 1 | 2) => return Err(unsupported()),
            (_, "f32" | "f64" | "f16x2" | "bf16" | "bf16x2", _) => return Err(unsupported()),
            ("add", _, _) => AtomicOp::Add,
            ("min", _, _) if signed => AtomicOp::MinS,
            ("min", _, _) => AtomicOp::MinU,
            ("max", _, _) if signed => AtomicOp::MaxS,
            ("max", _, _) => AtomicOp::MaxU,
            ("inc", _, 4) => AtomicOp::Inc,
            ("dec", _, 4) => AtomicOp::Dec,
            ("and", _, _) => AtomicOp::And,
            ("or", _, _) => AtomicOp::Or,
            ("xor", _, _) => AtomicOp::Xor,
            ("exch", _, _) => AtomicOp::Exch,
            ("cas", _, _) => AtomicOp::Cas,
            _ => return Err(unsupported()),
        };
        let reduction = parts[0] == "red";
        let ops = &instruction.operands;
        let (d, rest) = if reduction {
            (fixed::SINK, &ops[..])
        } else {
            (
                self.dest(ops.first().ok_or("atom needs operands")?)?,
                &ops[1..],
            )
        };
        let (base, offset, by_symbol) =
            self.address(rest.first().ok_or("atom needs an address")?)?;
        let b = self.source(rest.get(1).ok_or("atom needs a value")?)?;
        let c = match rest.get(2) {
            Some(c) => self.source(c)?,
            None => fixed::ZERO,
        };
        Ok(Op::Atomic {
            space: Self::resolved(Self::space(parts), by_symbol),
            op,
            size,
            d,
            base,
            offset,
            b,
            c,
        })
    }
}
