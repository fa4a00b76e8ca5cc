//! What a kernel's PTX shows of what its exercise is about, in the
//! feedback's words: each of the exercise's needs (`PtxNeed`) asked of the
//! `ptx` crate's one checker, which reads instructions, so a comment
//! (`asm("// %nctaid.x")`) or another entry shows nothing. It also compares
//! a kernel's parameters with the course's, so a kernel the reference host
//! code cannot launch is said to be so before it runs.
//!
//! Threat model: the PTX is the student's (nvcc copies inline asm into it
//! unread, and a few lines of CUDA can make it hundreds of MB), and it is
//! parsed in the grader's own process. So it is bounded before it is
//! parsed: its size before it is read, and how deep its brackets nest
//! before the parser starts; a panic in the parser is a verdict on that
//! kernel, not the end of the class.

use std::io::Read;
use std::path::Path;

use kernels::catalogue::Exercise;
use ptx::ast::{Kernel, Module};
use ptx::parser;

/// The largest PTX the grader reads: the course's kernels are a few KiB
/// to 25 KiB, and parsing costs about 23 bytes of memory per byte.
pub const MAX_PTX_BYTES: u64 = 2 << 20;

/// The deepest nesting of braces, brackets and parentheses read: nvcc
/// writes a handful (a body, a scoped call, a vector operand).
pub const MAX_PTX_NESTING: usize = 64;

/// The PTX file at `path`, read only if it is within [`MAX_PTX_BYTES`];
/// else why not, naming the limit, for the student.
pub fn read(path: &Path) -> Result<String, String> {
    let unreadable = |err: std::io::Error| format!("the kernel's PTX could not be read: {err}");
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let bytes = file.metadata().map_err(unreadable)?.len();
    if bytes > MAX_PTX_BYTES {
        return Err(too_large(bytes));
    }
    let mut text = String::new();
    file.take(MAX_PTX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(unreadable)?;
    if text.len() as u64 > MAX_PTX_BYTES {
        return Err(too_large(text.len() as u64));
    }
    Ok(text)
}

fn too_large(bytes: u64) -> String {
    format!(
        "the kernel's PTX is {bytes} bytes, over the {MAX_PTX_BYTES}-byte limit the grader \
         reads (a large initialised __device__ or __constant__ array?)"
    )
}

/// `ptx` parsed, within the bounds above; else why not.
fn parse(ptx: &str) -> Result<Module, String> {
    if ptx.len() as u64 > MAX_PTX_BYTES {
        return Err(too_large(ptx.len() as u64));
    }
    let depth = nesting(ptx);
    if depth > MAX_PTX_NESTING {
        return Err(format!(
            "the kernel's PTX nests braces, brackets or parentheses {depth} deep, over the \
             {MAX_PTX_NESTING} levels the grader reads (inline asm?)"
        ));
    }
    match std::panic::catch_unwind(|| parser::parse(ptx)) {
        Ok(Ok(module)) => Ok(module),
        Ok(Err(err)) => Err(format!("the kernel's PTX could not be read ({err})")),
        Err(_) => Err("the kernel's PTX could not be read (the parser failed on it)".to_owned()),
    }
}

/// The deepest nesting of `{`, `[` and `(` in `ptx`, outside comments and
/// strings: one pass, no recursion.
fn nesting(ptx: &str) -> usize {
    let bytes = ptx.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while at < bytes.len() {
        match (bytes[at], bytes.get(at + 1)) {
            (b'/', Some(b'/')) => {
                at = ptx[at..].find('\n').map_or(bytes.len(), |end| at + end);
            }
            (b'/', Some(b'*')) => {
                at = ptx[at + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| at + 2 + end + 2);
                continue;
            }
            (b'"', _) => {
                at = ptx[at + 1..]
                    .find('"')
                    .map_or(bytes.len(), |end| at + 1 + end);
            }
            (b'{' | b'[' | b'(', _) => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (b'}' | b']' | b')', _) => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    deepest
}

/// The needs of `exercise` that `ptx` does not meet, for the feedback;
/// empty when it meets them all.
pub fn missing(exercise: &Exercise, ptx: &str) -> Vec<String> {
    let module = match parse(ptx) {
        Ok(module) => module,
        // The parser reads what nvcc emits for the course; a PTX it cannot
        // read is no evidence of a feature, and a student must hear why.
        Err(why) => {
            return vec![format!(
                "{why}, so what the exercise is about could not be found in it"
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
    let course = parse(course).ok()?;
    let student = match parse(student) {
        Ok(module) => module,
        Err(why) => return Some(why),
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
    fn ptx_over_its_limits_is_refused_before_it_is_parsed_or_read() {
        let vecadd = find("vecadd-anyN").unwrap();
        // 25,000 nested braces in an operand, as an unreachable inline asm
        // statement leaves them: the parser's recursion is never entered.
        let deep = "{".repeat(25_000) + "%r1" + &"}".repeat(25_000);
        let ptx = module(&[entry("vecadd", &format!("\tmov.u32 %r1, {deep};\n"))]);
        let said = missing(vecadd, &ptx);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("25001 deep, over the 64 levels"),
            "{said:?}"
        );
        assert!(signature_mismatch(&ptx, &module(&[entry("vecadd", "")])).is_some());
        // Brackets in comments and strings do not count.
        let commented = module(&[entry(
            "vecadd",
            &format!(
                "\t// {}\n\t/* {} */\n\tmov.u32 %r1, %nctaid.x;\n",
                "{".repeat(99),
                "(".repeat(99)
            ),
        )]);
        assert!(missing(vecadd, &commented).is_empty());
        assert_eq!(nesting(".file 1 \"{{{{.cu\"\n{ [ ( ) ] }"), 3);

        let dir = tempfile::tempdir().unwrap();
        let huge = dir.path().join("kernel.ptx");
        let file = std::fs::File::create(&huge).unwrap();
        // Sparse: 192 MB on paper, nothing on disk, and never read.
        file.set_len(192 << 20).unwrap();
        let why = read(&huge).unwrap_err();
        assert!(
            why.contains("201326592 bytes, over the 2097152-byte limit"),
            "{why}"
        );
        std::fs::write(&huge, &ptx).unwrap();
        assert_eq!(read(&huge).unwrap(), ptx);
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
