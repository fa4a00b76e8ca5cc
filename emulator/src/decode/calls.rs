//! Decoding `call`: a device function nvcc did not inline (`__noinline__`)
//! is inlined here, each call getting its own copy of the body with its own
//! registers, labels and local memory; its `.param` arguments and results
//! are slots of the thread's local memory that the caller's `st.param` and
//! the callee's `ld.param` share. The runtime's own functions are built in:
//! `vprintf` (printf) and `__assertfail` (a failed assert). Recursion and
//! calls through function pointers are refused.

use super::{Decoded, Decoder, Frame, RETURN_LABEL, Scope, Symbol};
use crate::ir::*;
use ptx::ast::{self, Operand};

/// `call[.uni] (rets), function, (args)[, prototype];` and the forms
/// without results or arguments.
pub(super) fn call(
    decoder: &mut Decoder<'_>,
    instruction: &ast::Instruction,
    guard: (Reg, bool),
) -> Decoded<Op> {
    let mut operands = instruction.operands.iter().peekable();
    let returns = match operands.peek() {
        Some(Operand::Vector(parts)) => {
            operands.next();
            parts.clone()
        }
        _ => Vec::new(),
    };
    let name = match operands.next() {
        Some(Operand::Symbol(name)) => name.clone(),
        Some(Operand::Reg(_)) => {
            return Err(
                "calls through a function pointer are not supported by the CPU emulator"
                    .to_string(),
            );
        }
        _ => return Err(format!("`{}` names no function", instruction.opcode)),
    };
    let arguments = match operands.next() {
        Some(Operand::Vector(parts)) => parts.clone(),
        None => Vec::new(),
        Some(_) => {
            return Err(
                "calls through a function pointer are not supported by the CPU emulator"
                    .to_string(),
            );
        }
    };
    let slot = |decoder: &Decoder<'_>, operand: &Operand| match operand {
        Operand::Symbol(name) => match decoder.symbol(name) {
            Some(Symbol::Local(offset)) => Ok(offset),
            _ => Err(format!("the call argument {name} is not a .param variable")),
        },
        other => Err(format!(
            "the call argument {other:?} is not a .param variable"
        )),
    };
    let returns = returns
        .iter()
        .map(|r| slot(decoder, r))
        .collect::<Decoded<Vec<u64>>>()?;
    let arguments = arguments
        .iter()
        .map(|a| slot(decoder, a))
        .collect::<Decoded<Vec<u64>>>()?;
    let function = decoder.module.function(&name);
    match (name.as_str(), function.and_then(|f| f.body.as_ref())) {
        ("vprintf", None) => printf(decoder, &returns, &arguments),
        ("__assertfail", None) => assert_fail(decoder, &arguments),
        (_, Some(_)) => inline(decoder, &name, &returns, &arguments, guard),
        ("malloc" | "free", None) => Err(
            "device-side memory allocation (malloc() and free() in a kernel) is not supported by \
             the CPU emulator"
                .to_string(),
        ),
        (other, None)
            if other.starts_with("cudaLaunchDevice")
                || other.starts_with("cudaGetParameterBuffer")
                || other.starts_with("cudaDeviceSynchronize")
                || other.starts_with("cudaCGGet") =>
        {
            Err("kernels launching kernels (dynamic parallelism) and grid-wide cooperative groups are \
                 not supported by the CPU emulator"
                .to_string())
        }
        (other, None) => Err(format!(
            "a call to the device function {other}, which the PTX declares but does not define, is \
             not supported by the CPU emulator"
        )),
    }
}

/// A load of 8 bytes from a local slot into a fresh register.
fn load_slot(decoder: &mut Decoder<'_>, offset: u64, size: u8) -> Decoded<Reg> {
    let d = decoder.new_register(0)?;
    decoder.emit(Op::Load {
        space: Space::Local,
        size,
        sign_to: 0,
        read_only: true,
        count: 1,
        d: [d, fixed::SINK, fixed::SINK, fixed::SINK],
        base: fixed::ZERO,
        offset: offset as i64,
    });
    Ok(d)
}

/// printf: vprintf(format, arguments) returns the count of arguments.
fn printf(decoder: &mut Decoder<'_>, returns: &[u64], arguments: &[u64]) -> Decoded<Op> {
    let [format, args] = arguments else {
        return Err("vprintf takes two arguments".to_string());
    };
    let format = load_slot(decoder, *format, 8)?;
    let args = load_slot(decoder, *args, 8)?;
    let d = decoder.new_register(0)?;
    decoder.emit(Op::Printf { d, format, args });
    Ok(store_result(returns, d, 4))
}

/// Stores `value` into the call's first result slot, if it has one.
fn store_result(returns: &[u64], value: Reg, size: u8) -> Op {
    match returns.first() {
        Some(&offset) => Op::Store {
            space: Space::Local,
            size,
            count: 1,
            s: [value, fixed::ZERO, fixed::ZERO, fixed::ZERO],
            base: fixed::ZERO,
            offset: offset as i64,
        },
        None => Op::Mov {
            d: fixed::SINK,
            a: fixed::ZERO,
        },
    }
}

/// A failed assert: __assertfail(message, file, line, function, char size).
fn assert_fail(decoder: &mut Decoder<'_>, arguments: &[u64]) -> Decoded<Op> {
    let [message, file, line, function, ..] = arguments else {
        return Err("__assertfail takes five arguments".to_string());
    };
    let message = load_slot(decoder, *message, 8)?;
    let file = load_slot(decoder, *file, 8)?;
    let line = load_slot(decoder, *line, 4)?;
    let function = load_slot(decoder, *function, 8)?;
    Ok(Op::AssertFail {
        message,
        file,
        line,
        function,
    })
}

/// Inlines the body of `name`: its parameters bound to the caller's
/// argument slots, its results to the caller's result slots (or scratch
/// slots when the caller ignores them), its `ret` a branch to the end.
fn inline(
    decoder: &mut Decoder<'_>,
    name: &str,
    returns: &[u64],
    arguments: &[u64],
    guard: (Reg, bool),
) -> Decoded<Op> {
    if decoder.frames.iter().any(|f| f.function == name) {
        let chain: Vec<&str> = decoder.frames[1..]
            .iter()
            .map(|f| f.function.as_str())
            .chain([name])
            .collect();
        return Err(format!(
            "recursive device functions ({} calls itself: {}) are not supported by the CPU emulator",
            name,
            chain.join(" -> ")
        ));
    }
    let module = decoder.module;
    let function = module
        .function(name)
        .ok_or_else(|| format!("no device function {name}"))?;
    let body = function.body.as_deref().unwrap_or_default();
    if function.params.len() != arguments.len() {
        return Err(format!(
            "{name} takes {} arguments, and the call passes {}",
            function.params.len(),
            arguments.len()
        ));
    }
    let mut scope = Scope::default();
    for (param, &offset) in function.params.iter().zip(arguments) {
        scope
            .symbols
            .insert(param.name.clone(), Symbol::Local(offset));
    }
    for (index, result) in function.returns.iter().enumerate() {
        let offset = match returns.get(index) {
            Some(&offset) => offset,
            None => {
                let offset = super::align_up(decoder.local_bytes, result.align);
                decoder.local_bytes = offset + result.size;
                offset
            }
        };
        scope
            .symbols
            .insert(result.name.clone(), Symbol::Local(offset));
    }
    // A predicated call skips the whole body when its guard is false.
    let instance = decoder.next_instance;
    decoder.next_instance += 1;
    if guard.0 != fixed::TRUE {
        decoder
            .pending
            .push((decoder.code.len(), instance, RETURN_LABEL.to_string()));
        decoder.code.push(Inst {
            op: Op::Branch { target: 0 },
            guard: guard.0,
            negate: !guard.1,
        });
    }
    decoder.frames.push(Frame {
        scopes: vec![scope],
        instance,
        function: name.to_string(),
    });
    let mut result = Ok(());
    for statement in body {
        result = decoder.statement(statement);
        if result.is_err() {
            break;
        }
    }
    decoder.frames.pop();
    if let Err(message) = result {
        decoder.fatal = Some(message.clone());
        return Err(message);
    }
    // The return point: this instruction, which does nothing.
    decoder.labels.insert(
        (instance, RETURN_LABEL.to_string()),
        decoder.code.len() as u32,
    );
    Ok(Op::Mov {
        d: fixed::SINK,
        a: fixed::ZERO,
    })
}
