//! Parsed PTX to the register machine (`ir`): registers and constants to
//! indices, labels to instruction indices, opcodes and their modifiers to
//! the functions of each instruction family. An instruction the emulator
//! cannot run becomes `Op::Unsupported`, which stops a launch that reaches
//! it.

use std::collections::HashMap;

use crate::exec::access::{LOCAL_WINDOW, SHARED_WINDOW};
use crate::exec::convert::Conversion;
use crate::exec::{compare, float, int};
use crate::ir::*;
use ptx::ast::{self, Operand, Statement};
use ptx::parser::type_size;

mod memory;

/// Where a symbol lives once laid out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Symbol {
    /// `.const` or `.global` variable: its device address.
    Device(u64),
    /// Offset in the block's shared memory.
    Shared(u64),
    /// Offset in the thread's local memory.
    Local(u64),
    /// Offset in the parameter buffer.
    Param(u64),
    /// A `.param` declared in the body to pass to a `call`.
    CallArgument,
}

const CALLS_UNSUPPORTED: &str = "a `call` (printf, or a device function nvcc did not inline) is not supported by the CPU \
                                 emulator";

struct Decoder<'a> {
    template: Vec<u64>,
    scopes: Vec<HashMap<String, (Reg, u32)>>,
    constants: HashMap<u64, Reg>,
    symbols: HashMap<String, Symbol>,
    labels: HashMap<String, u32>,
    pending: Vec<(usize, String)>,
    code: Vec<Inst>,
    origins: Vec<Origin>,
    unsupported: Vec<String>,
    files: &'a [(u32, String)],
}

/// A reason an instruction cannot be decoded: becomes `Op::Unsupported`.
type Decoded<T> = Result<T, String>;

fn align_up(x: u64, align: u64) -> u64 {
    x.next_multiple_of(align.max(1))
}

/// Lays out a kernel's shared and local variables and decodes its body.
/// `module_symbols` holds the module's `.const`/`.global` addresses;
/// `module_shared` the module-level `.shared` variables.
pub fn decode_kernel(
    kernel: &ast::Kernel,
    module_symbols: &HashMap<String, u64>,
    module_shared: &[ast::Variable],
    files: &[(u32, String)],
) -> Result<Kernel, String> {
    let mut symbols: HashMap<String, Symbol> = module_symbols
        .iter()
        .map(|(name, &address)| (name.clone(), Symbol::Device(address)))
        .collect();
    // Parameters, each aligned to its own alignment.
    let mut params = Vec::new();
    let mut param_bytes = 0u64;
    for param in &kernel.params {
        param_bytes = align_up(param_bytes, param.align);
        symbols.insert(param.name.clone(), Symbol::Param(param_bytes));
        params.push((param_bytes as usize, param.size as usize));
        param_bytes += param.size;
    }
    // Shared variables the kernel names (module level or its own), then
    // the `extern` array at the end; local variables per thread.
    let mentioned = mentioned_symbols(kernel);
    let own_variables = kernel.body.iter().filter_map(|s| match s {
        Statement::Variable(v) => Some(v),
        _ => None,
    });
    let mut shared = 0u64;
    let mut local = 0u64;
    let mut dynamic = Vec::new();
    for variable in module_shared
        .iter()
        .filter(|v| mentioned.contains(&v.name.as_str()))
        .chain(own_variables)
    {
        let size = variable.element * variable.count.unwrap_or(0);
        match (variable.space.as_str(), variable.count) {
            ("shared", None) => dynamic.push(variable),
            ("shared", Some(_)) => {
                shared = align_up(shared, variable.align);
                symbols.insert(variable.name.clone(), Symbol::Shared(shared));
                shared += size;
            }
            ("local", _) => {
                local = align_up(local, variable.align);
                symbols.insert(variable.name.clone(), Symbol::Local(local));
                local += size;
            }
            // Arguments of a `call`: the call itself is unsupported.
            ("param", _) => {
                symbols.insert(variable.name.clone(), Symbol::CallArgument);
            }
            (space, _) => {
                return Err(format!(
                    "a .{space} variable inside kernel {} is not supported",
                    kernel.name
                ));
            }
        }
    }
    let static_shared = align_up(shared, 16);
    for variable in dynamic {
        symbols.insert(variable.name.clone(), Symbol::Shared(static_shared));
    }
    let mut decoder = Decoder {
        template: vec![0; fixed::FIRST_FREE as usize],
        scopes: vec![HashMap::new()],
        constants: HashMap::new(),
        symbols,
        labels: HashMap::new(),
        pending: Vec::new(),
        code: Vec::new(),
        origins: Vec::new(),
        unsupported: Vec::new(),
        files,
    };
    decoder.template[fixed::TRUE as usize] = 1;
    decoder.template[fixed::WARP_SIZE as usize] = 32;
    decoder.template[fixed::NSMID as usize] = 2;
    for statement in &kernel.body {
        decoder.statement(statement)?;
    }
    // Falling off the end returns.
    decoder.code.push(Inst {
        op: Op::Exit,
        guard: fixed::TRUE,
        negate: false,
    });
    decoder.origins.push(Origin {
        ptx_line: 0,
        source: None,
        opcode: "ret".to_string(),
    });
    for (index, label) in std::mem::take(&mut decoder.pending) {
        let target = *decoder
            .labels
            .get(&label)
            .ok_or_else(|| format!("kernel {}: branch to unknown label {label}", kernel.name))?;
        decoder.code[index].op = Op::Branch { target };
    }
    if decoder.template.len() > usize::from(Reg::MAX) {
        return Err(format!(
            "kernel {} uses more registers than the emulator holds",
            kernel.name
        ));
    }
    Ok(Kernel {
        name: kernel.name.clone(),
        code: decoder.code,
        origins: decoder.origins,
        template: decoder.template,
        params,
        param_bytes: param_bytes as usize,
        static_shared,
        local_bytes: local,
        unsupported: decoder.unsupported,
    })
}

/// Names used as operands anywhere in the kernel.
fn mentioned_symbols(kernel: &ast::Kernel) -> Vec<&str> {
    fn walk<'a>(operand: &'a Operand, out: &mut Vec<&'a str>) {
        match operand {
            Operand::Symbol(name) | Operand::Address(Some(name), _) => out.push(name),
            Operand::Vector(parts) => parts.iter().for_each(|p| walk(p, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for statement in &kernel.body {
        if let Statement::Instruction(instruction) = statement {
            instruction.operands.iter().for_each(|o| walk(o, &mut out));
        }
    }
    out
}

/// Bits of a register type.
fn register_bits(ty: &str) -> u32 {
    type_size(ty).map_or(64, |bytes| if ty == "pred" { 1 } else { bytes as u32 * 8 })
}

impl Decoder<'_> {
    fn statement(&mut self, statement: &Statement) -> Result<(), String> {
        match statement {
            Statement::Registers(ty, names) => {
                let bits = register_bits(ty);
                for name in names {
                    let reg = self.new_register(0);
                    self.scopes
                        .last_mut()
                        .expect("a scope")
                        .insert(name.clone(), (reg, bits));
                }
            }
            Statement::Variable(_) => {}
            Statement::Label(name) => {
                self.labels.insert(name.clone(), self.code.len() as u32);
            }
            Statement::Open => self.scopes.push(HashMap::new()),
            Statement::Close => {
                self.scopes.pop();
            }
            Statement::Instruction(instruction) => {
                let start = self.code.len();
                let origin = Origin {
                    ptx_line: instruction.ptx_line,
                    source: instruction.source.map(|(file, line)| {
                        let path = self
                            .files
                            .iter()
                            .find(|(n, _)| *n == file)
                            .map_or("?", |(_, p)| p.as_str());
                        let name = path.rsplit('/').next().unwrap_or(path);
                        format!("{name}:{line}")
                    }),
                    opcode: instruction.opcode.clone(),
                };
                let guard = match &instruction.guard {
                    Some((name, negate)) => self.register(name).map(|(r, _)| (r, *negate)),
                    None => Ok((fixed::TRUE, false)),
                };
                let result = guard.and_then(|guard| {
                    let op = self.instruction(instruction)?;
                    Ok((guard, op))
                });
                match result {
                    Ok(((guard, negate), op)) => self.code.push(Inst { op, guard, negate }),
                    Err(message) => {
                        // Drop helper instructions already emitted for it.
                        self.code.truncate(start);
                        self.origins.truncate(start);
                        self.unsupported.push(message);
                        let index = self.unsupported.len() as u32 - 1;
                        self.code.push(Inst {
                            op: Op::Unsupported(index),
                            guard: fixed::TRUE,
                            negate: false,
                        });
                    }
                }
                while self.origins.len() < self.code.len() {
                    self.origins.push(origin.clone());
                }
            }
        }
        Ok(())
    }

    fn new_register(&mut self, value: u64) -> Reg {
        self.template.push(value);
        (self.template.len() - 1) as Reg
    }

    fn constant(&mut self, value: u64) -> Reg {
        if let Some(&reg) = self.constants.get(&value) {
            return reg;
        }
        let reg = self.new_register(value);
        self.constants.insert(value, reg);
        reg
    }

    /// A register by name: declared, or a special register.
    fn register(&self, name: &str) -> Decoded<(Reg, u32)> {
        for scope in self.scopes.iter().rev() {
            if let Some(&found) = scope.get(name) {
                return Ok(found);
            }
        }
        let axis = |base: Reg, suffix: &str| match suffix {
            "x" => Ok(base),
            "y" => Ok(base + 1),
            "z" => Ok(base + 2),
            _ => Err(format!("special register {name} is not supported")),
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
                _ => return Err(format!("register {name} is not supported or not declared")),
            },
        };
        Ok((reg, 32))
    }

    /// A destination register; `_` writes nowhere.
    fn dest(&self, operand: &Operand) -> Decoded<Reg> {
        match operand {
            Operand::Reg(name) => self.register(name).map(|(r, _)| r),
            Operand::Sink => Ok(fixed::SINK),
            other => Err(format!("expected a register, found {other:?}")),
        }
    }

    /// A source: a register, or a constant register holding an immediate or
    /// a symbol's address. `!%p` reads through a `not` emitted before.
    fn source(&mut self, operand: &Operand) -> Decoded<Reg> {
        match operand {
            Operand::Reg(name) => match name.strip_prefix('!') {
                Some(plain) => {
                    let (reg, _) = self.register(plain)?;
                    let temp = self.new_register(0);
                    self.code.push(Inst {
                        op: Op::Unary {
                            f: int::w8::cnot,
                            d: temp,
                            a: reg,
                        },
                        guard: fixed::TRUE,
                        negate: false,
                    });
                    Ok(temp)
                }
                None => self.register(name).map(|(r, _)| r),
            },
            Operand::Int(v) => Ok(self.constant(*v as u64)),
            Operand::F32(bits) => Ok(self.constant(u64::from(*bits))),
            Operand::F64(bits) => Ok(self.constant(*bits)),
            Operand::Symbol(name) => {
                let value = self.symbol_value(name)?;
                Ok(self.constant(value))
            }
            other => Err(format!("unexpected operand {other:?}")),
        }
    }

    /// A symbol's address (device variables) or offset (in shared, local
    /// or parameter memory).
    fn symbol_value(&self, name: &str) -> Decoded<u64> {
        match self.symbols.get(name) {
            Some(Symbol::Device(address)) => Ok(*address),
            Some(Symbol::Shared(offset) | Symbol::Local(offset) | Symbol::Param(offset)) => {
                Ok(*offset)
            }
            Some(Symbol::CallArgument) => Err(CALLS_UNSUPPORTED.to_string()),
            None => Err(format!("unknown symbol {name}")),
        }
    }

    /// `[base+offset]` as (base register, offset).
    fn address(&mut self, operand: &Operand) -> Decoded<(Reg, i64)> {
        let Operand::Address(base, offset) = operand else {
            return Err(format!("expected an address, found {operand:?}"));
        };
        match base {
            None => Ok((fixed::ZERO, *offset)),
            Some(name) if name.starts_with('%') => Ok((self.register(name)?.0, *offset)),
            Some(name) => {
                let at = self.symbol_value(name)?;
                Ok((fixed::ZERO, at as i64 + offset))
            }
        }
    }

    fn operands<const N: usize>(&self, instruction: &ast::Instruction) -> Decoded<[Operand; N]> {
        instruction
            .operands
            .clone()
            .try_into()
            .map_err(|_| format!("`{}` needs {N} operands", instruction.opcode))
    }

    fn instruction(&mut self, instruction: &ast::Instruction) -> Decoded<Op> {
        let parts: Vec<&str> = instruction.opcode.split('.').collect();
        let base = parts[0];
        let ty = *parts.last().unwrap_or(&"");
        let mods: Vec<&str> = parts[1..parts.len().saturating_sub(1).max(1)].to_vec();
        let unsupported = || {
            format!(
                "`{}` is not supported by the CPU emulator",
                instruction.opcode
            )
        };
        match base {
            "mov" => {
                let [d, a] = self.operands(instruction)?;
                if matches!(a, Operand::Vector(_)) || matches!(d, Operand::Vector(_)) {
                    return Err(unsupported());
                }
                Ok(Op::Mov {
                    d: self.dest(&d)?,
                    a: self.source(&a)?,
                })
            }
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "mul24" => {
                let [d, a, b] = self.operands(instruction)?;
                let ty = if ty == "pred" { "b8" } else { ty };
                let f = match ty {
                    "f32" | "f64" => float::binary(base, &mods, ty),
                    _ => int::binary(base, &mods, ty),
                }
                .ok_or_else(unsupported)?;
                Ok(Op::Binary {
                    f,
                    d: self.dest(&d)?,
                    a: self.source(&a)?,
                    b: self.source(&b)?,
                })
            }
            "mad" | "fma" | "mad24" => {
                let [d, a, b, c] = self.operands(instruction)?;
                let f = match ty {
                    "f32" | "f64" => float::ternary(base, &mods, ty),
                    _ => int::ternary(base, &mods, ty),
                }
                .ok_or_else(unsupported)?;
                Ok(Op::Ternary {
                    f,
                    d: self.dest(&d)?,
                    a: self.source(&a)?,
                    b: self.source(&b)?,
                    c: self.source(&c)?,
                })
            }
            "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "sqrt" | "rcp" | "rsqrt"
            | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
                let [d, a] = self.operands(instruction)?;
                let f = match (ty, base) {
                    ("f32" | "f64", _) => float::unary(base, &mods, ty),
                    ("pred", "not") => Some(int::w8::cnot as UnaryFn),
                    _ => int::unary(base, ty),
                }
                .ok_or_else(unsupported)?;
                Ok(Op::Unary {
                    f,
                    d: self.dest(&d)?,
                    a: self.source(&a)?,
                })
            }
            "setp" => self.setp(instruction, &parts).ok_or_else(unsupported)?,
            "selp" => {
                let [d, a, b, c] = self.operands(instruction)?;
                Ok(Op::Select {
                    d: self.dest(&d)?,
                    a: self.source(&a)?,
                    b: self.source(&b)?,
                    c: self.source(&c)?,
                })
            }
            "cvt" if parts.len() >= 3 => {
                let [d, a] = self.operands(instruction)?;
                let n = parts.len();
                let conversion = Conversion::new(&parts[1..n - 2], parts[n - 2], parts[n - 1])
                    .ok_or_else(unsupported)?;
                Ok(Op::Convert {
                    conversion,
                    d: self.dest(&d)?,
                    a: self.source(&a)?,
                })
            }
            "cvta" => {
                let [d, a] = self.operands(instruction)?;
                let (d, a) = (self.dest(&d)?, self.source(&a)?);
                let to = parts.get(1) == Some(&"to");
                let space = parts.get(if to { 2 } else { 1 }).copied().unwrap_or("");
                let window = match space {
                    "global" | "const" | "param" => return Ok(Op::Mov { d, a }),
                    "shared" => SHARED_WINDOW,
                    "local" => LOCAL_WINDOW,
                    _ => return Err(unsupported()),
                };
                Ok(if to {
                    Op::FromGeneric { d, a, window }
                } else {
                    Op::ToGeneric { d, a, window }
                })
            }
            "ld" | "ldu" => self.load(instruction, &parts).ok_or_else(unsupported)?,
            "st" => self.store(instruction, &parts).ok_or_else(unsupported)?,
            "atom" | "red" => self.atomic(instruction, &parts).ok_or_else(unsupported)?,
            "bra" => {
                let [target] = self.operands(instruction)?;
                let Operand::Symbol(label) = target else {
                    return Err(unsupported());
                };
                self.pending.push((self.code.len(), label));
                Ok(Op::Branch { target: 0 })
            }
            "ret" | "exit" => Ok(Op::Exit),
            "call" => Err(CALLS_UNSUPPORTED.to_string()),
            "bar" | "barrier" if parts.get(1) == Some(&"warp") => {
                let [mask] = self.operands(instruction)?;
                let mask = self.source(&mask)?;
                Ok(self.warp(
                    WarpOp::Sync,
                    fixed::SINK,
                    fixed::SINK,
                    fixed::ZERO,
                    fixed::ZERO,
                    fixed::ZERO,
                    mask,
                ))
            }
            "bar" | "barrier"
                if matches!(parts.get(1), Some(&"sync") | None)
                    || parts.get(1) == Some(&"aligned") =>
            {
                if instruction.operands.len() > 1 {
                    return Err(format!(
                        "`{}` with a thread count is not supported",
                        instruction.opcode
                    ));
                }
                Ok(Op::Barrier)
            }
            "membar" | "fence" => Ok(Op::Mov {
                d: fixed::SINK,
                a: fixed::ZERO,
            }),
            "shfl" if parts.get(1) == Some(&"sync") => {
                let mode = match parts.get(2) {
                    Some(&"up") => ShuffleMode::Up,
                    Some(&"down") => ShuffleMode::Down,
                    Some(&"bfly") => ShuffleMode::Butterfly,
                    Some(&"idx") => ShuffleMode::Index,
                    _ => return Err(unsupported()),
                };
                let [d, a, b, c, mask] = self.operands(instruction)?;
                let (d, d_pred) = match d {
                    Operand::Pair(value, pred) => {
                        (self.register(&value)?.0, self.register(&pred)?.0)
                    }
                    other => (self.dest(&other)?, fixed::SINK),
                };
                let (a, b, c, mask) = (
                    self.source(&a)?,
                    self.source(&b)?,
                    self.source(&c)?,
                    self.source(&mask)?,
                );
                Ok(self.warp(WarpOp::Shuffle(mode), d, d_pred, a, b, c, mask))
            }
            "vote" if parts.get(1) == Some(&"sync") => {
                let op = match parts.get(2) {
                    Some(&"all") => WarpOp::VoteAll,
                    Some(&"any") => WarpOp::VoteAny,
                    Some(&"uni") => WarpOp::VoteUni,
                    Some(&"ballot") => WarpOp::VoteBallot,
                    _ => return Err(unsupported()),
                };
                let [d, a, mask] = self.operands(instruction)?;
                let (d, a, mask) = (self.dest(&d)?, self.source(&a)?, self.source(&mask)?);
                Ok(self.warp(op, d, fixed::SINK, a, fixed::ZERO, fixed::ZERO, mask))
            }
            _ => Err(unsupported()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn warp(&self, op: WarpOp, d: Reg, d_pred: Reg, a: Reg, b: Reg, c: Reg, mask: Reg) -> Op {
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

    /// `setp.cmp[.bool].type d[|e], a, b[, c]`
    fn setp(&mut self, instruction: &ast::Instruction, parts: &[&str]) -> Option<Decoded<Op>> {
        let ty = *parts.last()?;
        let cmp = parts.get(1)?;
        let f = compare::compare(cmp, ty)?;
        let combine = match parts.get(2) {
            Some(&"and") => Combine::And,
            Some(&"or") => Combine::Or,
            Some(&"xor") => Combine::Xor,
            _ if parts.len() == 3 || parts.get(2) == Some(&"ftz") => Combine::And,
            _ => return None,
        };
        Some((|| {
            let ops = &instruction.operands;
            let (d, d_not) = match ops.first() {
                Some(Operand::Pair(p, q)) => (self.register(p)?.0, self.register(q)?.0),
                Some(other) => (self.dest(other)?, fixed::SINK),
                None => return Err("setp needs operands".to_string()),
            };
            let a = self.source(ops.get(1).ok_or("setp needs a")?)?;
            let b = self.source(ops.get(2).ok_or("setp needs b")?)?;
            let c = match ops.get(3) {
                Some(c) => self.source(c)?,
                None => fixed::TRUE,
            };
            Ok(Op::Setp {
                f,
                combine,
                d,
                d_not,
                a,
                b,
                c,
            })
        })())
    }
}
