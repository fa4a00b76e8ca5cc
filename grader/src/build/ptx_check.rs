//! What a kernel's PTX shows of what its exercise is about, in the
//! feedback's words: each of the exercise's needs (`PtxNeed`) asked of the
//! `ptx` crate's one checker, which reads instructions, so a comment
//! (`asm("// %nctaid.x")`) or another entry shows nothing. It also compares
//! a kernel's parameters with the course's, so a kernel the reference host
//! code cannot launch is said to be so before it runs.

use kernels::catalogue::Exercise;
use ptx::ast::Kernel;
use ptx::parser;

/// The needs of `exercise` that `ptx` does not meet, for the feedback;
/// empty when it meets them all.
pub fn missing(exercise: &Exercise, ptx: &str) -> Vec<String> {
    let module = match parser::parse(ptx) {
        Ok(module) => module,
        // The parser reads what nvcc emits for the course; a PTX it cannot
        // read is no evidence of a feature, and a student must hear why.
        Err(err) => {
            return vec![format!(
                "the kernel's PTX could not be read as instructions ({err}), so what the \
                 exercise is about could not be found in it"
            )];
        }
    };
    exercise
        .ptx
        .iter()
        .filter_map(|need| need.missing_in(&module))
        .collect()
}

/// Why the course's host code cannot launch the kernels in `student`: each
/// kernel of `course` (the solution's PTX) must be there under its name
/// with parameters of the same sizes. None when it can.
pub fn signature_mismatch(student: &str, course: &str) -> Option<String> {
    let course = parser::parse(course).ok()?;
    let student = match parser::parse(student) {
        Ok(module) => module,
        Err(err) => return Some(format!("the kernel's PTX could not be read ({err})")),
    };
    for wanted in &course.kernels {
        let sizes = |k: &Kernel| k.params.iter().map(|p| p.size).collect::<Vec<_>>();
        let Some(found) = student.kernels.iter().find(|k| k.name == wanted.name) else {
            return Some(format!(
                "the course's host code launches a kernel named {}, and the PTX has none: \
                 keep the kernel's name and extern \"C\"",
                wanted.name
            ));
        };
        if sizes(found) != sizes(wanted) {
            return Some(format!(
                "the kernel {} takes parameters of {:?} bytes, the course's host code passes \
                 {:?}: keep the kernel's parameters as the exercise gives them",
                wanted.name,
                sizes(found),
                sizes(wanted)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue::find;

    /// A kernel entry with `body` and one pointer and one int parameter.
    fn entry(name: &str, body: &str) -> String {
        format!(
            ".visible .entry {name}(\n\t.param .u64 {name}_param_0,\n\t.param .u32 {name}_param_1\n)\n{{\n\
             \t.reg .b32 %r<4>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n{body}\tret;\n}}\n"
        )
    }

    fn module(entries: &[String]) -> String {
        format!(
            ".version 7.8\n.target sm_75\n.address_size 64\n\n{}",
            entries.join("\n")
        )
    }

    #[test]
    fn a_special_register_read_by_an_instruction_shows() {
        let ptx = module(&[entry("vecadd", "\tmov.u32 %r1, %nctaid.x;\n")]);
        assert_eq!(
            missing(find("vecadd-anyN").unwrap(), &ptx),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_comment_or_another_kernel_does_not_show_a_feature() {
        let vecadd = find("vecadd-anyN").unwrap();
        // What `asm("// %nctaid.x")` leaves in the PTX.
        let comment = "\t// begin inline asm\n\t// %nctaid.x\n\t// end inline asm\n";
        let ptx = module(&[
            entry("vecadd", comment),
            entry("other", "\tmov.u32 %r1, %nctaid.x;\n"),
        ]);
        let missing = missing(vecadd, &ptx);
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(missing[0].contains("never reads gridDim.x"), "{missing:?}");
    }

    #[test]
    fn needs_are_meanings_whatever_the_instructions_spelling() {
        let atomic = find("dot-atomic").unwrap();
        let red = module(&[entry("dot", "\tred.global.add.f32 [%rd1], %f1;\n")]);
        assert!(missing(atomic, &red).is_empty());
        let sm = find("dot-sm").unwrap();
        let shared = module(&[entry(
            "dot",
            "\tst.shared.f32 [%rd1], %f1;\n\tbar.sync 0;\n\tld.shared.f32 %f2, [%rd1];\n",
        )]);
        assert!(missing(sm, &shared).is_empty());
        let local = module(&[entry("dot", "\tst.local.f32 [%rd1], %f1;\n\tbar.sync 0;\n")]);
        assert_eq!(missing(sm, &local).len(), 2);
        // Cooperative groups' block.sync() is barrier.sync.
        let cg = shared.replace("bar.sync 0", "barrier.sync 0");
        assert!(missing(sm, &cg).is_empty());
    }

    #[test]
    fn the_solutions_ptx_from_nvcc_13_meets_every_need() {
        // Brought back from the GPU machine (scripts/emulated-nvcc13.sh's).
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../emulator/tests/ptx/nvcc13");
        for exercise in kernels::catalogue::EXERCISES {
            let path = format!("{folder}/{}.ptx", exercise.name);
            let ptx = std::fs::read_to_string(&path).unwrap();
            assert_eq!(missing(&exercise, &ptx), Vec::<String>::new(), "{path}");
        }
    }

    #[test]
    fn a_missing_kernel_or_unreadable_ptx_is_said() {
        let vecadd = find("vecadd-anyN").unwrap();
        let renamed = module(&[entry("add", "\tmov.u32 %r1, %nctaid.x;\n")]);
        assert!(missing(vecadd, &renamed)[0].contains("no kernel named vecadd"));
        assert!(missing(vecadd, "not ptx at all {")[0].contains("could not be read"));
    }

    #[test]
    fn signatures_are_compared_by_name_and_parameter_sizes() {
        let course = module(&[entry("vecadd", "")]);
        assert_eq!(signature_mismatch(&course, &course), None);
        let renamed = module(&[entry("add", "")]);
        let why = signature_mismatch(&renamed, &course).unwrap();
        assert!(why.contains("named vecadd"), "{why}");
        let wider = course.replace(".param .u32", ".param .u64");
        let why = signature_mismatch(&wider, &course).unwrap();
        assert!(why.contains("[8, 8]") && why.contains("[8, 4]"), "{why}");
    }
}
