//! Parsed PTX to the register machine (`ir`): registers and constants to
//! indices, labels to instruction indices, opcodes and their modifiers to
//! the functions of each instruction family, and device functions inlined
//! at their calls. An instruction the emulator cannot run becomes
//! `Op::Unsupported` with a message naming the construct in CUDA C terms;
//! a kernel holding one is refused before it runs (`Kernel::unsupported`).

use std::collections::{HashMap, HashSet};

use crate::exec::value::int;
use crate::ir::*;
use ptx::ast::{self, Declared, Operand, Statement};
use ptx::parser::type_size;

mod alu;
mod calls;
mod control;
mod memory;

/// Where a symbol lives once laid out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Symbol {
    /// `.const` or `.global` variable: its device address.
    Device(u64),
    /// Offset in the block's shared memory.
    Shared(u64),
    /// Offset in the thread's local memory: `.local` variables, and the
    /// `.param` variables that carry a call's arguments and results.
    Local(u64),
    /// Offset in the kernel's parameter buffer.
    Param(u64),
}

/// The instructions a kernel may reach once its calls are inlined, at
/// most: a bound on the code that recursion-free but deeply nested calls
/// could multiply.
const MAX_INSTRUCTIONS: usize = 1 << 20;

/// Registers and symbols declared in one `{ ... }` scope.
#[derive(Default)]
struct Scope {
    registers: HashMap<String, (Reg, u32)>,
    /// `%r<14>`: (prefix, first register, count, bits).
    ranges: Vec<(String, Reg, u32, u32)>,
    symbols: HashMap<String, Symbol>,
}

/// One body being decoded: the kernel's, or a device function's inlined at
/// a call. A body sees only its own registers and symbols and the module's.
struct Frame {
    scopes: Vec<Scope>,
    /// Labels are per body: each inlined copy has its own.
    instance: u32,
    function: String,
}

struct Decoder<'a> {
    module: &'a ast::Module,
    /// Module-level symbols: device variables and this kernel's shared
    /// memory.
    globals: HashMap<String, Symbol>,
    frames: Vec<Frame>,
    template: Vec<u64>,
    constants: HashMap<u64, Reg>,
    labels: HashMap<(u32, String), u32>,
    /// Branches to resolve: (instruction, body instance, label).
    pending: Vec<(usize, u32, String)>,
    code: Vec<Inst>,
    origins: Vec<Origin>,
    unsupported: Vec<String>,
    unsupported_at: Vec<String>,
    local_bytes: u64,
    next_instance: u32,
    /// Set with an instruction's error when the whole kernel cannot be
    /// decoded (too many registers), not only that instruction.
    fatal: Option<String>,
    /// A device-wide fence was decoded.
    device_fence: bool,
    /// 32-bit registers the `.reg` declarations decoded name.
    declared_registers: u32,
}

/// A reason an instruction cannot be decoded: becomes `Op::Unsupported`.
type Decoded<T> = Result<T, String>;

fn align_up(x: u64, align: u64) -> u64 {
    x.next_multiple_of(align.max(1))
}

/// The label a body's `ret` branches to.
const RETURN_LABEL: &str = "\0return";

/// Lays out a kernel's shared variables and decodes its body, with the
/// device functions it calls inlined. `module_symbols` holds the module's
/// `.const`/`.global` addresses.
pub fn decode_kernel(
    module: &ast::Module,
    kernel: &ast::Kernel,
    module_symbols: &HashMap<String, u64>,
) -> Result<Kernel, String> {
    let mut globals: HashMap<String, Symbol> = module_symbols
        .iter()
        .map(|(name, &address)| (name.clone(), Symbol::Device(address)))
        .collect();
    // Parameters, each aligned to its own alignment.
    let mut params = Vec::new();
    let mut param_symbols = HashMap::new();
    let mut param_bytes = 0u64;
    for param in &kernel.params {
        param_bytes = align_up(param_bytes, param.align);
        param_symbols.insert(param.name.clone(), Symbol::Param(param_bytes));
        params.push((param_bytes as usize, param.size as usize));
        param_bytes = param_bytes.saturating_add(param.size);
    }
    let static_shared = lay_out_shared(module, kernel, &mut globals)?;
    let mut decoder = Decoder {
        module,
        globals,
        frames: vec![Frame {
            scopes: vec![Scope {
                symbols: param_symbols,
                ..Scope::default()
            }],
            instance: 0,
            function: kernel.name.clone(),
        }],
        template: vec![0; fixed::FIRST_FREE as usize],
        constants: HashMap::new(),
        labels: HashMap::new(),
        pending: Vec::new(),
        code: Vec::new(),
        origins: Vec::new(),
        unsupported: Vec::new(),
        unsupported_at: Vec::new(),
        local_bytes: 0,
        next_instance: 1,
        fatal: None,
        device_fence: false,
        declared_registers: 0,
    };
    decoder.template[fixed::TRUE as usize] = 1;
    decoder.template[fixed::WARP_SIZE as usize] = 32;
    decoder.template[fixed::NSMID as usize] = u64::from(crate::device::MULTIPROCESSORS);
    for statement in &kernel.body {
        decoder.statement(statement)?;
    }
    // Falling off the end returns.
    decoder.push(Op::Exit, "ret", 0, None);
    for (index, instance, label) in std::mem::take(&mut decoder.pending) {
        let target = *decoder
            .labels
            .get(&(instance, label.clone()))
            .ok_or_else(|| format!("kernel {}: branch to unknown label {label}", kernel.name))?;
        decoder.code[index].op = Op::Branch { target };
    }
    Ok(Kernel {
        name: kernel.name.clone(),
        code: decoder.code,
        origins: decoder.origins,
        template: decoder.template,
        params,
        param_bytes: param_bytes as usize,
        static_shared,
        local_bytes: decoder.local_bytes,
        unsupported: decoder.unsupported,
        unsupported_at: decoder.unsupported_at,
        device_fence: decoder.device_fence,
        declared_registers: decoder.declared_registers,
        directives: kernel.directives.clone(),
        ptx_version: 0,
    })
}

/// Gives each shared variable the kernel can reach (the module's it names,
/// directly or in a function it calls, and its own) an offset; `extern`
/// arrays start where the static ones end. Returns the static size.
fn lay_out_shared(
    module: &ast::Module,
    kernel: &ast::Kernel,
    globals: &mut HashMap<String, Symbol>,
) -> Result<u64, String> {
    let bodies = reachable_bodies(module, kernel);
    let mut mentioned = HashSet::new();
    for body in &bodies {
        for statement in body.iter() {
            if let Statement::Instruction(instruction) = statement {
                for operand in &instruction.operands {
                    operand_names(operand, &mut mentioned);
                }
            }
        }
    }
    let own = bodies
        .iter()
        .flat_map(|b| b.iter())
        .filter_map(|s| match s {
            Statement::Variable(v) if v.space == "shared" => Some(v),
            _ => None,
        });
    let mut shared = 0u64;
    let mut dynamic = Vec::new();
    for variable in module
        .variables
        .iter()
        .filter(|v| v.space == "shared" && mentioned.contains(v.name.as_str()))
        .chain(own)
    {
        match variable.count {
            None => dynamic.push(variable),
            Some(count) => {
                shared = align_up(shared, variable.align);
                globals.insert(variable.name.clone(), Symbol::Shared(shared));
                shared = count
                    .checked_mul(variable.element)
                    .and_then(|bytes| shared.checked_add(bytes))
                    .ok_or_else(|| format!("the shared variable {} is too large", variable.name))?;
            }
        }
    }
    let static_shared = align_up(shared, 16);
    for variable in dynamic {
        globals.insert(variable.name.clone(), Symbol::Shared(static_shared));
    }
    Ok(static_shared)
}

/// The kernel's body and the bodies of every function it may call.
fn reachable_bodies<'m>(module: &'m ast::Module, kernel: &'m ast::Kernel) -> Vec<&'m [Statement]> {
    let mut bodies: Vec<&[Statement]> = vec![&kernel.body];
    let mut seen = HashSet::new();
    let mut index = 0;
    while index < bodies.len() {
        for statement in bodies[index] {
            let Statement::Instruction(instruction) = statement else {
                continue;
            };
            if !instruction.opcode.starts_with("call") {
                continue;
            }
            for operand in &instruction.operands {
                if let Operand::Symbol(name) = operand
                    && seen.insert(name.clone())
                    && let Some(body) = module.function(name).and_then(|f| f.body.as_deref())
                {
                    bodies.push(body);
                }
            }
        }
        index += 1;
    }
    bodies
}

/// Names used as operands.
fn operand_names<'a>(operand: &'a Operand, out: &mut HashSet<&'a str>) {
    match operand {
        Operand::Symbol(name) | Operand::Address(Some(name), _) => {
            out.insert(name);
        }
        Operand::Vector(parts) => parts.iter().for_each(|p| operand_names(p, out)),
        _ => {}
    }
}

/// Bits of a register type.
fn register_bits(ty: &str) -> u32 {
    type_size(ty).map_or(64, |bytes| if ty == "pred" { 1 } else { bytes as u32 * 8 })
}

impl Decoder<'_> {
    fn frame(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("a body is being decoded")
    }

    fn scope(&mut self) -> &mut Scope {
        self.frame().scopes.last_mut().expect("a scope")
    }

    /// Appends one instruction with where it came from.
    fn push(&mut self, op: Op, opcode: &str, ptx_line: u32, source: Option<String>) {
        self.code.push(Inst {
            op,
            guard: fixed::TRUE,
            negate: false,
        });
        self.origins.push(Origin {
            ptx_line,
            source,
            kernel_line: None,
            opcode: opcode.to_string(),
        });
    }

    /// Emits a helper instruction for the instruction being decoded (its
    /// origin is filled in after it).
    fn emit(&mut self, op: Op) {
        self.code.push(Inst {
            op,
            guard: fixed::TRUE,
            negate: false,
        });
    }

    fn statement(&mut self, statement: &Statement) -> Result<(), String> {
        match statement {
            Statement::Registers(ty, declared) => {
                let bits = register_bits(ty);
                // A predicate is no general register; a 64-bit one is two.
                let words = if ty == "pred" { 0 } else { bits.div_ceil(32) };
                for name in declared {
                    let named = match name {
                        Declared::One(_) => 1,
                        Declared::Range(_, count) => *count,
                    };
                    self.declared_registers = self
                        .declared_registers
                        .saturating_add(words.saturating_mul(named));
                    match name {
                        Declared::One(name) => {
                            let reg = self.new_registers(1)?;
                            self.scope().registers.insert(name.clone(), (reg, bits));
                        }
                        Declared::Range(prefix, count) => {
                            let first = self.new_registers(*count)?;
                            self.scope()
                                .ranges
                                .push((prefix.clone(), first, *count, bits));
                        }
                    }
                }
            }
            Statement::Variable(variable) => self.variable(variable)?,
            Statement::Label(name) => {
                let instance = self.frame().instance;
                self.labels
                    .insert((instance, name.clone()), self.code.len() as u32);
            }
            Statement::Open => self.frame().scopes.push(Scope::default()),
            Statement::Close => {
                self.frame().scopes.pop();
            }
            Statement::Instruction(instruction) => self.instruction_statement(instruction)?,
        }
        if self.code.len() > MAX_INSTRUCTIONS {
            return Err(format!(
                "kernel {} has more than {MAX_INSTRUCTIONS} instructions once its device functions are \
                 inlined",
                self.frames[0].function
            ));
        }
        Ok(())
    }

    /// A `.local` or call `.param` variable in a body: a slot of the
    /// thread's local memory. (`.shared` ones are laid out for the kernel.)
    fn variable(&mut self, variable: &ast::Variable) -> Result<(), String> {
        match variable.space.as_str() {
            "shared" => Ok(()),
            "local" | "param" => {
                let bytes = variable
                    .element
                    .checked_mul(variable.count.unwrap_or(1))
                    .filter(|&b| b <= 1 << 24)
                    .ok_or_else(|| format!("the local variable {} is too large", variable.name))?;
                let offset = align_up(self.local_bytes, variable.align);
                self.local_bytes = offset + bytes;
                self.scope()
                    .symbols
                    .insert(variable.name.clone(), Symbol::Local(offset));
                Ok(())
            }
            space => Err(format!(
                "a .{space} variable inside kernel {} is not supported",
                self.frames[0].function
            )),
        }
    }

    fn instruction_statement(&mut self, instruction: &ast::Instruction) -> Result<(), String> {
        let start = self.code.len();
        let origins_start = self.origins.len();
        let name = |file: u32| {
            let path = self
                .module
                .files
                .iter()
                .find(|(n, _)| *n == file)
                .map_or("?", |(_, p)| p.as_str());
            path.rsplit('/').next().unwrap_or(path)
        };
        let place = |(file, line): (u32, u32)| format!("{}:{line}", name(file));
        // The student's line: where the instruction is, or where it was
        // inlined into kernel.cu from a header.
        let kernel_line = [instruction.source, instruction.inlined_at]
            .into_iter()
            .flatten()
            .find(|&(file, _)| name(file) == KERNEL_FILE)
            .map(|(_, line)| line);
        let origin = Origin {
            ptx_line: instruction.ptx_line,
            source: instruction.source.map(|at| match instruction.inlined_at {
                Some(caller) if caller != at => {
                    format!("{}, inlined at {}", place(at), place(caller))
                }
                _ => place(at),
            }),
            kernel_line,
            opcode: instruction.opcode.clone(),
        };
        let guard = match &instruction.guard {
            Some((name, negate)) => self.register(name).map(|(r, _)| (r, *negate)),
            None => Ok((fixed::TRUE, false)),
        };
        let result = guard.and_then(|guard| {
            let op = self.instruction(instruction, guard)?;
            Ok((guard, op))
        });
        if let Some(message) = self.fatal.take() {
            return Err(message);
        }
        match result {
            Ok(((guard, negate), op)) => self.code.push(Inst { op, guard, negate }),
            Err(message) => {
                // Drop helper instructions already emitted for it.
                self.code.truncate(start);
                self.origins.truncate(origins_start);
                self.unsupported.push(message);
                self.unsupported_at.push(origin.describe());
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
        Ok(())
    }

    /// `count` fresh registers, the first's index.
    fn new_registers(&mut self, count: u32) -> Result<Reg, String> {
        let first = self.template.len();
        if first + count as usize > usize::from(Reg::MAX) {
            return Err(format!(
                "kernel {} uses more registers than the emulator holds ({})",
                self.frames[0].function,
                Reg::MAX
            ));
        }
        self.template.resize(first + count as usize, 0);
        Ok(first as Reg)
    }

    fn new_register(&mut self, value: u64) -> Decoded<Reg> {
        let reg = self.new_registers(1).inspect_err(|message| {
            self.fatal = Some(message.clone());
        })?;
        self.template[usize::from(reg)] = value;
        Ok(reg)
    }

    fn constant(&mut self, value: u64) -> Decoded<Reg> {
        if let Some(&reg) = self.constants.get(&value) {
            return Ok(reg);
        }
        let reg = self.new_register(value)?;
        self.constants.insert(value, reg);
        Ok(reg)
    }

    /// A declared register of this body, by name.
    fn declared(&self, name: &str) -> Option<(Reg, u32)> {
        for scope in self.frames.last()?.scopes.iter().rev() {
            if let Some(&found) = scope.registers.get(name) {
                return Some(found);
            }
            for (prefix, first, count, bits) in &scope.ranges {
                let Some(digits) = name.strip_prefix(prefix.as_str()) else {
                    continue;
                };
                if digits.is_empty()
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                    || (digits.len() > 1 && digits.starts_with('0'))
                {
                    continue;
                }
                if let Ok(index) = digits.parse::<u32>()
                    && index < *count
                {
                    return Some((first + index as Reg, *bits));
                }
            }
        }
        None
    }

    /// A register by name: declared, or a special register.
    fn register(&mut self, name: &str) -> Decoded<(Reg, u32)> {
        if let Some(found) = self.declared(name) {
            return Ok(found);
        }
        control::special_register(self, name)
    }

    /// A destination register; `_` writes nowhere.
    fn dest(&mut self, operand: &Operand) -> Decoded<Reg> {
        match operand {
            Operand::Reg(name) | Operand::Symbol(name) => self.register(name).map(|(r, _)| r),
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
                    let temp = self.new_register(0)?;
                    self.emit(Op::Unary {
                        f: int::w8::cnot,
                        d: temp,
                        a: reg,
                    });
                    Ok(temp)
                }
                None => self.register(name).map(|(r, _)| r),
            },
            Operand::Int(v) => self.constant(*v as u64),
            Operand::F32(bits) => self.constant(u64::from(*bits)),
            Operand::F64(bits) => self.constant(*bits),
            Operand::Symbol(name) => {
                if let Some((reg, _)) = self.declared(name) {
                    return Ok(reg);
                }
                let value = self.symbol_value(name)?;
                self.constant(value)
            }
            other => Err(format!("unexpected operand {other:?}")),
        }
    }

    /// A symbol of this body's scopes, or of the module.
    fn symbol(&self, name: &str) -> Option<Symbol> {
        let frame = self.frames.last()?;
        frame
            .scopes
            .iter()
            .rev()
            .find_map(|scope| scope.symbols.get(name).copied())
            .or_else(|| self.globals.get(name).copied())
    }

    /// A symbol's address (device variables) or offset (in shared, local
    /// or parameter memory).
    fn symbol_value(&self, name: &str) -> Decoded<u64> {
        match self.symbol(name) {
            Some(Symbol::Device(address)) => Ok(address),
            Some(Symbol::Shared(offset) | Symbol::Local(offset) | Symbol::Param(offset)) => {
                Ok(offset)
            }
            None if self.module.function(name).is_some() => Err(format!(
                "the address of the device function {name} (a function pointer) is not supported by \
                 the CPU emulator"
            )),
            None => Err(format!("unknown symbol {name}")),
        }
    }

    /// `[base+offset]` as (base register, offset), and the space a symbol
    /// base says the access is in (a call's `.param` lives in local memory).
    fn address(&mut self, operand: &Operand) -> Decoded<(Reg, i64, Option<Space>)> {
        let Operand::Address(base, offset) = operand else {
            return Err(format!("expected an address, found {operand:?}"));
        };
        match base {
            None => Ok((fixed::ZERO, *offset, None)),
            Some(name) if self.declared(name).is_some() || name.starts_with('%') => {
                Ok((self.register(name)?.0, *offset, None))
            }
            Some(name) => {
                let space = match self.symbol(name) {
                    Some(Symbol::Local(_)) => Some(Space::Local),
                    _ => None,
                };
                let at = self.symbol_value(name)?;
                Ok((fixed::ZERO, at as i64 + offset, space))
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

    /// Decodes one instruction; `guard` is its predicate (a call needs it
    /// to skip the inlined body).
    fn instruction(&mut self, instruction: &ast::Instruction, guard: (Reg, bool)) -> Decoded<Op> {
        let parts: Vec<&str> = instruction.opcode.split('.').collect();
        match parts[0] {
            "call" => calls::call(self, instruction, guard),
            "bra" | "brx" | "ret" | "exit" | "bar" | "barrier" | "membar" | "fence" | "shfl"
            | "vote" | "activemask" | "match" | "nanosleep" | "trap" | "brkpt" | "prefetch"
            | "prefetchu" | "discard" | "applypriority" | "createpolicy" | "pmevent" => {
                control::instruction(self, instruction, &parts)
            }
            "ld" | "ldu" => self.load(instruction, &parts),
            "st" => self.store(instruction, &parts),
            "atom" | "red" => self.atomic(instruction, &parts),
            "cvta" => {
                let [d, a] = self.operands(instruction)?;
                let (d, a) = (self.dest(&d)?, self.source(&a)?);
                let to = parts.get(1) == Some(&"to");
                let space = parts.get(if to { 2 } else { 1 }).copied().unwrap_or("");
                let window = match space {
                    "global" | "const" | "param" => return Ok(Op::Mov { d, a }),
                    "shared" => SHARED_WINDOW,
                    "local" => LOCAL_WINDOW,
                    _ => return Err(control::not_supported(&instruction.opcode)),
                };
                Ok(if to {
                    Op::FromGeneric { d, a, window }
                } else {
                    Op::ToGeneric { d, a, window }
                })
            }
            _ => alu::instruction(self, instruction, &parts),
        }
    }
}
