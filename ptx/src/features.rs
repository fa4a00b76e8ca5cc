//! What a kernel's PTX shows, read as instructions: whether an entry (or
//! any, when none is named) holds an instruction that is a feature (an
//! opcode and its leading modifiers, `st.global`) or reads it (a special
//! register, `%nctaid.x`). Comments, strings and other entries do not
//! count, so `asm("// %nctaid.x")` shows nothing. The one checker of the
//! course: `cargo course check`, the exercises' own "done" test and the
//! grader all ask it.

use crate::ast::{Instruction, Kernel, Module, Operand, Statement};

/// Why a module does not show a feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lack {
    /// No entry of that name.
    NoKernel,
    /// The entry (or every entry) has no such instruction.
    NoInstruction,
}

/// Whether `module` shows any one of `any_of` inside `kernel` (anywhere
/// when None): None when it does, else what it lacks.
pub fn lack(module: &Module, kernel: Option<&str>, any_of: &[&str]) -> Option<Lack> {
    let kernels: Vec<&Kernel> = match kernel {
        Some(name) => match module.kernels.iter().find(|k| k.name == name) {
            Some(found) => vec![found],
            None => return Some(Lack::NoKernel),
        },
        None => module.kernels.iter().collect(),
    };
    let shown = kernels
        .iter()
        .flat_map(|k| instructions(k))
        .any(|i| any_of.iter().any(|feature| shows(i, feature)));
    (!shown).then_some(Lack::NoInstruction)
}

fn instructions(kernel: &Kernel) -> impl Iterator<Item = &Instruction> {
    kernel.body.iter().filter_map(|s| match s {
        Statement::Instruction(i) => Some(i),
        _ => None,
    })
}

/// Whether `instruction` is `feature` (an opcode and leading modifiers,
/// `st.global`) or reads the special register `feature` (`%nctaid.x`).
pub fn shows(instruction: &Instruction, feature: &str) -> bool {
    if feature.starts_with('%') {
        return instruction.operands.iter().any(|o| names(o, feature));
    }
    let opcode = instruction.opcode.as_str();
    opcode == feature
        || opcode
            .strip_prefix(feature)
            .is_some_and(|rest| rest.starts_with('.'))
}

fn names(operand: &Operand, register: &str) -> bool {
    match operand {
        Operand::Reg(name) => name == register,
        Operand::Vector(parts) => parts.iter().any(|p| names(p, register)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;

    /// A module of entries, each `(name, body)`.
    fn module(entries: &[(&str, &str)]) -> Module {
        let text: String = entries
            .iter()
            .map(|(name, body)| {
                format!(
                    ".visible .entry {name}(\n\t.param .u64 {name}_param_0\n)\n{{\n\
                     \t.reg .b32 %r<4>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n{body}\tret;\n}}\n"
                )
            })
            .collect();
        parse(&format!(
            ".version 7.8\n.target sm_75\n.address_size 64\n\n{text}"
        ))
        .unwrap()
    }

    #[test]
    fn a_special_register_read_by_an_instruction_shows() {
        let m = module(&[("vecadd", "\tmov.u32 %r1, %nctaid.x;\n")]);
        assert_eq!(lack(&m, Some("vecadd"), &["%nctaid.x"]), None);
    }

    #[test]
    fn a_comment_or_another_kernel_does_not_show_a_feature() {
        // What `asm("// %nctaid.x")` leaves in the PTX.
        let comment = "\t// begin inline asm\n\t// %nctaid.x\n\t// end inline asm\n";
        let m = module(&[
            ("vecadd", comment),
            ("other", "\tmov.u32 %r1, %nctaid.x;\n"),
        ]);
        assert_eq!(
            lack(&m, Some("vecadd"), &["%nctaid.x"]),
            Some(Lack::NoInstruction)
        );
        // Any kernel will do when none is named.
        assert_eq!(lack(&m, None, &["%nctaid.x"]), None);
        assert_eq!(lack(&m, Some("dot"), &["%nctaid.x"]), Some(Lack::NoKernel));
    }

    #[test]
    fn opcodes_match_on_whole_modifiers_and_any_alternative_is_enough() {
        let m = module(&[("dot", "\tred.global.add.f32 [%rd1], %f1;\n")]);
        let atomic = ["atom.global.add.f32", "red.global.add.f32"];
        assert_eq!(lack(&m, Some("dot"), &atomic), None);
        // `st.shared` is not `st.sh`, and a local store is not a shared one.
        let m = module(&[("dot", "\tst.local.f32 [%rd1], %f1;\n\tbar.sync 0;\n")]);
        assert_eq!(lack(&m, Some("dot"), &["st.sh"]), Some(Lack::NoInstruction));
        assert_eq!(
            lack(&m, Some("dot"), &["st.shared"]),
            Some(Lack::NoInstruction)
        );
        assert_eq!(lack(&m, Some("dot"), &["bar.sync"]), None);
    }
}
