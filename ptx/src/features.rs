//! What a kernel's PTX shows, read as instructions and by meaning: a block
//! barrier in whatever form nvcc or the student wrote it, an atomic of any
//! operation, type, width, scope or ordering, loads and stores by the state
//! space they reach (a generic address counted by where it came from), a
//! special register read, and where the values a kernel computes with come
//! from. Comments, strings and other entries do not count, so
//! `asm("// %nctaid.x")` shows nothing. The one checker of the course:
//! `cargo course check`, the exercises' own "done" test and the grader all
//! ask it, through the catalogue's needs.
//!
//! What counts, and why (the course's worst verdict is a correct kernel
//! that loses a point, so every spelling of a meaning counts):
//!
//! - A block barrier is one a thread waits at: `bar.sync`, `barrier.sync`
//!   (what `cg::this_thread_block().sync()` compiles to), `bar.red` and
//!   `barrier.red` (`__syncthreads_count/and/or`), with `.cta` or
//!   `.aligned`, with or without a thread count. A count that leaves some
//!   threads out is still a barrier here: PTX cannot say whether the count
//!   is the block's size, and a barrier that misses threads is a race the
//!   runs, the sanitizers and the emulator judge. `bar.arrive` alone waits
//!   for nothing and `bar.warp.sync` (`__syncwarp`) holds one warp, so
//!   neither is a block barrier.
//! - An atomic is any `atom` or `red` (`atomicAdd` of any type,
//!   `atomicAdd_block`/`_system`, a compare-and-swap loop, inline PTX with
//!   `.relaxed.gpu`), counted in the space its address is in.
//! - A load or store without a state space is generic: it is counted in
//!   the space its address was converted from (`cvta.shared`, `cvta.const`,
//!   `cvta.local`, or a variable of that space), else in global memory,
//!   where every pointer the course's host code passes points.

use std::collections::BTreeMap;
use std::fmt;

use crate::ast::{Instruction, Kernel, Module, Operand, Statement};

/// A state space a kernel's loads and stores reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Space {
    Global,
    Shared,
    Const,
    Local,
    Param,
}

impl Space {
    /// In a person's words: "constant memory".
    pub fn words(self) -> &'static str {
        match self {
            Space::Global => "global memory",
            Space::Shared => "shared memory",
            Space::Const => "constant memory",
            Space::Local => "local memory",
            Space::Param => "a kernel parameter",
        }
    }

    /// Its name in PTX's modifiers: "const".
    pub fn ptx(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Const => "const",
            Space::Local => "local",
            Space::Param => "param",
        }
    }

    fn from_modifier(modifier: &str) -> Option<Space> {
        // `shared::cta` and `shared::cluster` are shared memory too.
        Some(match modifier.split("::").next()? {
            "global" => Space::Global,
            "shared" => Space::Shared,
            "const" => Space::Const,
            "local" => Space::Local,
            "param" => Space::Param,
            _ => return None,
        })
    }
}

/// The spaces that hold an exercise's data; local memory (a thread's own
/// spills and arrays) and parameters are neither.
const DATA_SPACES: [Space; 3] = [Space::Global, Space::Shared, Space::Const];

/// What a kernel must show, as a meaning rather than an opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// An instruction reads this special register (`%nctaid.x`).
    SpecialRegister(&'static str),
    /// A barrier every thread of the block waits at, in any form.
    BlockBarrier,
    /// An atomic read-modify-write (`atom` or `red`) on this space.
    Atomic(Space),
    /// A load from this space (`ld`, `ldu`), of any width or cache hint.
    Loads(Space),
    /// A store to this space, of any width or cache hint.
    Stores(Space),
    /// The values the kernel computes with come from this space and from
    /// no other data space (global, shared or constant memory): it loads
    /// from this space, and a value it loads from another may only be
    /// moved into this one (the copy that fills a shared tile).
    DataFrom(Space),
}

impl fmt::Display for Meaning {
    /// The instructions that show it, for a student.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Meaning::SpecialRegister(register) => write!(f, "{register}"),
            Meaning::BlockBarrier => write!(f, "bar.sync, barrier.sync or bar.red"),
            Meaning::Atomic(space) => write!(f, "atom or red on {}", space.words()),
            Meaning::Loads(space) | Meaning::DataFrom(space) => write!(f, "ld.{}", space.ptx()),
            Meaning::Stores(space) => write!(f, "st.{}", space.ptx()),
        }
    }
}

/// Why a module does not show a meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lack {
    /// No entry of that name.
    NoKernel,
    /// The entry (or every entry) has no instruction that shows it.
    NoInstruction,
    /// It computes with a value loaded from another data space.
    OtherSpace {
        space: Space,
        /// The load's opcode, `ld.const.f32`.
        opcode: String,
        /// The load's line in the source (`kernel.cu`), when the PTX has
        /// line information.
        source_line: Option<u32>,
    },
}

/// Whether `module` shows `meaning` inside `kernel` (in any entry when
/// None): None when it does, else what it lacks.
pub fn lack(module: &Module, kernel: Option<&str>, meaning: Meaning) -> Option<Lack> {
    let kernels: Vec<&Kernel> = match kernel {
        Some(name) => match module.kernels.iter().find(|k| k.name == name) {
            Some(found) => vec![found],
            None => return Some(Lack::NoKernel),
        },
        None => module.kernels.iter().collect(),
    };
    let mut first = Some(Lack::NoInstruction);
    for kernel in kernels {
        match lack_in(module, kernel, meaning) {
            None => return None,
            Some(other @ Lack::OtherSpace { .. }) if first == Some(Lack::NoInstruction) => {
                first = Some(other);
            }
            Some(_) => {}
        }
    }
    first
}

fn lack_in(module: &Module, kernel: &Kernel, meaning: Meaning) -> Option<Lack> {
    // The kernel's own code and each device function it calls, each read
    // on its own: registers are a body's own.
    let bodies = bodies(module, kernel);
    let accesses = |body| accesses(module, body);
    let any_access = |kind: Kind, space: Space| {
        bodies.iter().any(|body| {
            let (_, found) = accesses(body);
            found
                .iter()
                .any(|(_, a)| a.kind == kind && a.space == space)
        })
    };
    let shown = match meaning {
        Meaning::SpecialRegister(register) => bodies
            .iter()
            .any(|body| instructions(body).any(|i| i.operands.iter().any(|o| names(o, register)))),
        Meaning::BlockBarrier => bodies
            .iter()
            .any(|body| instructions(body).any(|i| is_block_barrier(&i.opcode))),
        Meaning::Atomic(space) => any_access(Kind::Atomic, space),
        Meaning::Loads(space) => any_access(Kind::Load, space),
        Meaning::Stores(space) => any_access(Kind::Store, space),
        Meaning::DataFrom(space) => {
            if !any_access(Kind::Load, space) {
                return Some(Lack::NoInstruction);
            }
            return bodies.iter().find_map(|body| {
                let (code, found) = accesses(body);
                computed_from_another_space(&code, &found, space)
            });
        }
    };
    (!shown).then_some(Lack::NoInstruction)
}

/// A body's instructions, and the memory accesses among them.
type Accesses<'a> = (Vec<&'a Instruction>, Vec<(&'a Instruction, Access)>);

fn accesses<'a>(module: &'a Module, body: &'a [Statement]) -> Accesses<'a> {
    let code: Vec<&Instruction> = instructions(body).collect();
    let pointers = pointer_spaces(module, body, &code);
    let found = code
        .iter()
        .filter_map(|i| Some((*i, access(i, &pointers)?)))
        .collect();
    (code, found)
}

/// The kernel's body and the bodies of the device functions it calls,
/// directly or through another (nvcc inlines most; `__noinline__` ones and
/// recursive ones stay calls).
fn bodies<'a>(module: &'a Module, kernel: &'a Kernel) -> Vec<&'a [Statement]> {
    let mut bodies: Vec<&[Statement]> = vec![&kernel.body];
    let mut called: Vec<&str> = Vec::new();
    let mut at = 0;
    while let Some(body) = bodies.get(at) {
        for call in instructions(body).filter(|i| parts(&i.opcode).0 == "call") {
            for operand in &call.operands {
                let Operand::Symbol(name) = operand else {
                    continue;
                };
                let Some(function) = module.function(name) else {
                    continue;
                };
                if let (Some(body), false) = (&function.body, called.contains(&name.as_str())) {
                    called.push(name);
                    bodies.push(body);
                }
            }
        }
        at += 1;
    }
    bodies
}

fn instructions(body: &[Statement]) -> impl Iterator<Item = &Instruction> {
    body.iter().filter_map(|s| match s {
        Statement::Instruction(i) => Some(i),
        _ => None,
    })
}

/// The opcode split into its base and modifiers: `ld.global.nc.f32` ->
/// ("ld", ["global", "nc", "f32"]).
fn parts(opcode: &str) -> (&str, Vec<&str>) {
    let mut split = opcode.split('.');
    let base = split.next().unwrap_or_default();
    (base, split.collect())
}

/// `bar{.cta}.sync`, `bar{.cta}.red`, `barrier{.cta}.sync{.aligned}`,
/// `barrier{.cta}.red`: not `arrive` (it waits for nothing) nor
/// `bar.warp.sync` (one warp).
pub fn is_block_barrier(opcode: &str) -> bool {
    let (base, modifiers) = parts(opcode);
    if base != "bar" && base != "barrier" {
        return false;
    }
    let mut modifiers = modifiers.into_iter().skip_while(|m| *m == "cta");
    matches!(modifiers.next(), Some("sync" | "red"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Load,
    Store,
    Atomic,
}

#[derive(Debug, Clone, Copy)]
struct Access {
    kind: Kind,
    space: Space,
}

/// What `instruction` reads or writes, and where; None when it is no
/// memory access.
fn access(instruction: &Instruction, pointers: &BTreeMap<&str, Space>) -> Option<Access> {
    let (base, modifiers) = parts(&instruction.opcode);
    let kind = match base {
        "ld" | "ldu" => Kind::Load,
        "st" => Kind::Store,
        "atom" | "red" => Kind::Atomic,
        _ => return None,
    };
    let named = modifiers.iter().find_map(|m| Space::from_modifier(m));
    let space = named.unwrap_or_else(|| {
        // Generic: where the address came from.
        let address = match kind {
            Kind::Load | Kind::Atomic if base != "red" => instruction.operands.get(1),
            _ => instruction.operands.first(),
        };
        match address {
            Some(Operand::Address(Some(base), _)) => pointers
                .get(base.as_str())
                .copied()
                .unwrap_or(Space::Global),
            _ => Space::Global,
        }
    });
    Some(Access { kind, space })
}

/// The registers (and variables) holding an address into a space other
/// than global memory: converted to a generic address by `cvta.<space>`,
/// or a variable of that space, and anything computed from one.
fn pointer_spaces<'a>(
    module: &'a Module,
    body: &'a [Statement],
    code: &[&'a Instruction],
) -> BTreeMap<&'a str, Space> {
    let declared = module
        .variables
        .iter()
        .chain(body.iter().filter_map(|s| match s {
            Statement::Variable(v) => Some(v),
            _ => None,
        }));
    let mut spaces: BTreeMap<&str, Space> = declared
        .filter_map(|v| Some((v.name.as_str(), Space::from_modifier(&v.space)?)))
        .filter(|(_, space)| *space != Space::Global)
        .collect();
    // Loops carry addresses round, so until nothing changes.
    loop {
        let before = spaces.len();
        for instruction in code {
            let (base, modifiers) = parts(&instruction.opcode);
            if matches!(base, "ld" | "ldu" | "st" | "atom" | "red") {
                continue;
            }
            let Some(Operand::Reg(destination)) = instruction.operands.first() else {
                continue;
            };
            let converted = match (base, modifiers.first()) {
                // `cvta.to.global` leaves the generic world; `cvta.shared` enters it.
                ("cvta", Some(&"to")) => None,
                ("cvta", Some(space)) => Space::from_modifier(space),
                _ => None,
            };
            let from = converted.or_else(|| {
                instruction.operands[1..]
                    .iter()
                    .find_map(|o| operand_names(o).find_map(|n| spaces.get(n).copied()))
            });
            if let Some(space) = from {
                spaces.entry(destination.as_str()).or_insert(space);
            }
        }
        if spaces.len() == before {
            return spaces;
        }
    }
}

/// The registers and symbols an operand names.
fn operand_names(operand: &Operand) -> Box<dyn Iterator<Item = &str> + '_> {
    match operand {
        Operand::Reg(name) | Operand::Symbol(name) => Box::new(std::iter::once(name.as_str())),
        Operand::Address(Some(base), _) => Box::new(std::iter::once(base.as_str())),
        Operand::Vector(parts) => Box::new(parts.iter().flat_map(operand_names)),
        Operand::Pair(a, b) => Box::new([a.as_str(), b.as_str()].into_iter()),
        _ => Box::new(std::iter::empty()),
    }
}

/// None when every value loaded from a data space other than `space` is
/// only moved into `space`; else the first load whose value is computed
/// with.
fn computed_from_another_space(
    code: &[&Instruction],
    accesses: &[(&Instruction, Access)],
    space: Space,
) -> Option<Lack> {
    let foreign = |a: &Access| {
        matches!(a.kind, Kind::Load | Kind::Atomic)
            && a.space != space
            && DATA_SPACES.contains(&a.space)
    };
    // Each register holding a foreign value, and the load it came from.
    let mut carries: BTreeMap<&str, (&Instruction, Space)> = BTreeMap::new();
    for (load, access) in accesses.iter().filter(|(_, a)| foreign(a)) {
        if let Some(destination) = load.operands.first() {
            for register in operand_names(destination) {
                carries.entry(register).or_insert((load, access.space));
            }
        }
    }
    if carries.is_empty() {
        return None;
    }
    // Moves carry a value on: mov, cvt and selp (a bounds test's 0 or the
    // value), until nothing changes.
    loop {
        let before = carries.len();
        for instruction in code {
            let (base, _) = parts(&instruction.opcode);
            if !matches!(base, "mov" | "cvt" | "selp") {
                continue;
            }
            let Some((destination, sources)) = instruction.operands.split_first() else {
                continue;
            };
            let Some(load) = sources
                .iter()
                .find_map(|o| operand_names(o).find_map(|n| carries.get(n).copied()))
            else {
                continue;
            };
            for register in operand_names(destination) {
                carries.entry(register).or_insert(load);
            }
        }
        if carries.len() == before {
            break;
        }
    }
    let own_store = |i: &Instruction| {
        let (base, modifiers) = parts(&i.opcode);
        base == "st" && modifiers.iter().find_map(|m| Space::from_modifier(m)) == Some(space)
    };
    for instruction in code {
        let (base, _) = parts(&instruction.opcode);
        if matches!(base, "mov" | "cvt" | "selp") {
            continue;
        }
        let reads: &[Operand] = match base {
            "st" | "red" => &instruction.operands,
            _ => instruction.operands.get(1..).unwrap_or_default(),
        };
        for (at, operand) in reads.iter().enumerate() {
            // The value of a store into the kernel's own space; never its address.
            if own_store(instruction) && at > 0 {
                continue;
            }
            if let Some((load, space)) = operand_names(operand).find_map(|n| carries.get(n)) {
                return Some(Lack::OtherSpace {
                    space: *space,
                    opcode: load.opcode.clone(),
                    source_line: load.source.map(|(_, line)| line),
                });
            }
        }
    }
    None
}

fn names(operand: &Operand, register: &str) -> bool {
    match operand {
        Operand::Reg(name) => name == register,
        Operand::Vector(parts) => parts.iter().any(|p| names(p, register)),
        _ => false,
    }
}

#[cfg(all(test, feature = "parse"))]
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
                     \t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<8>;\n\
                     \t.reg .b64 %rd<8>;\n{body}\tret;\n}}\n"
                )
            })
            .collect();
        parse(&format!(
            ".version 7.8\n.target sm_75\n.address_size 64\n\n\
             .const .align 4 .b8 table[64];\n{text}"
        ))
        .unwrap()
    }

    fn shows(body: &str, meaning: Meaning) -> bool {
        lack(&module(&[("k", body)]), Some("k"), meaning).is_none()
    }

    #[test]
    fn a_special_register_read_by_an_instruction_shows() {
        let m = module(&[("vecadd", "\tmov.u32 %r1, %nctaid.x;\n")]);
        assert_eq!(
            lack(&m, Some("vecadd"), Meaning::SpecialRegister("%nctaid.x")),
            None
        );
    }

    #[test]
    fn a_comment_or_another_kernel_does_not_show_a_meaning() {
        // What `asm("// %nctaid.x")` leaves in the PTX.
        let comment = "\t// begin inline asm\n\t// %nctaid.x\n\t// end inline asm\n";
        let m = module(&[
            ("vecadd", comment),
            ("other", "\tmov.u32 %r1, %nctaid.x;\n"),
        ]);
        let grid = Meaning::SpecialRegister("%nctaid.x");
        assert_eq!(lack(&m, Some("vecadd"), grid), Some(Lack::NoInstruction));
        // Any kernel will do when none is named.
        assert_eq!(lack(&m, None, grid), None);
        assert_eq!(lack(&m, Some("dot"), grid), Some(Lack::NoKernel));
    }

    #[test]
    fn every_form_of_block_barrier_shows_and_warp_or_arrive_ones_do_not() {
        for form in [
            "bar.sync 0;",
            "bar.sync 1, 64;",
            "barrier.sync 0;",
            "barrier.sync.aligned 0;",
            "barrier.cta.sync.aligned 0;",
            "bar.cta.sync 0;",
            "bar.red.popc.u32 %r1, 0, %p1;",
            "bar.red.and.pred %p2, 0, %p1;",
            "barrier.red.or.pred %p2, 0, %p1;",
        ] {
            assert!(
                shows(&format!("\t{form}\n"), Meaning::BlockBarrier),
                "{form}"
            );
        }
        for form in [
            "bar.warp.sync -1;",
            "bar.arrive 1, 64;",
            "barrier.arrive 1, 64;",
            "membar.cta;",
        ] {
            assert!(
                !shows(&format!("\t{form}\n"), Meaning::BlockBarrier),
                "{form}"
            );
        }
    }

    #[test]
    fn atomics_of_any_type_scope_or_ordering_show_in_their_space() {
        let global = Meaning::Atomic(Space::Global);
        for form in [
            "red.global.add.f32 [%rd1], %f1;",
            "atom.global.add.f32 %f2, [%rd1], %f1;",
            "atom.global.add.f64 %rd2, [%rd1], %rd3;",
            "atom.global.add.u64 %rd2, [%rd1], 1;",
            "atom.global.cta.add.f32 %f2, [%rd1], %f1;",
            "atom.global.sys.add.f32 %f2, [%rd1], %f1;",
            "atom.global.cas.b32 %r1, [%rd1], %r2, %r3;",
            "red.relaxed.gpu.global.add.f32 [%rd1], %f1;",
            // Generic: a pointer the host passed.
            "atom.add.f32 %f2, [%rd1], %f1;",
        ] {
            assert!(shows(&format!("\t{form}\n"), global), "{form}");
        }
        let shared = "\tatom.shared.cta.add.f32 %f2, [%r1], %f1;\n";
        assert!(!shows(shared, global));
        assert!(shows(shared, Meaning::Atomic(Space::Shared)));
        // A generic address converted from shared memory is shared memory.
        let generic_shared = "\tcvta.shared.u64 %rd2, %rd1;\n\tadd.s64 %rd3, %rd2, 4;\n\
                              \tatom.add.f32 %f2, [%rd3], %f1;\n";
        assert!(!shows(generic_shared, global));
    }

    #[test]
    fn loads_and_stores_count_in_their_space_whatever_their_modifiers() {
        assert!(shows(
            "\tst.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};\n",
            Meaning::Stores(Space::Global)
        ));
        assert!(shows(
            "\tst.relaxed.gpu.global.f32 [%rd1], %f1;\n",
            Meaning::Stores(Space::Global)
        ));
        assert!(shows(
            "\tst.f32 [%rd1], %f1;\n",
            Meaning::Stores(Space::Global)
        ));
        assert!(!shows(
            "\tst.local.f32 [%rd1], %f1;\n",
            Meaning::Stores(Space::Global)
        ));
        assert!(shows(
            "\tst.shared::cta.f32 [%r1], %f1;\n",
            Meaning::Stores(Space::Shared)
        ));
        assert!(shows(
            "\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n",
            Meaning::Loads(Space::Global)
        ));
        assert!(shows(
            "\tld.volatile.shared.f32 %f1, [%r1];\n",
            Meaning::Loads(Space::Shared)
        ));
        assert!(shows(
            "\tmov.u64 %rd2, table;\n\tld.f32 %f1, [%rd2];\n",
            Meaning::Loads(Space::Const)
        ));
        assert!(shows(
            "\tld.f32 %f1, [table+4];\n",
            Meaning::Loads(Space::Const)
        ));
    }

    #[test]
    fn data_from_a_space_allows_only_copies_into_it_from_another() {
        let shared = Meaning::DataFrom(Space::Shared);
        // A tile filled from global memory, then summed from shared memory.
        let tile = "\tld.global.nc.f32 %f1, [%rd1];\n\tst.shared.f32 [%r1], %f1;\n\
                    \tld.shared.f32 %f2, [%r2];\n\tadd.f32 %f3, %f3, %f2;\n\
                    \tst.global.f32 [%rd2], %f3;\n";
        assert!(shows(tile, shared));
        // Through a bounds test's selp, and four at a time.
        let guarded = "\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n\
                       \tselp.f32 %f5, %f1, 0f00000000, %p1;\n\
                       \tst.shared.v4.f32 [%r1], {%f5, %f2, %f3, %f4};\n\
                       \tld.shared.f32 %f6, [%r2];\n\tst.global.f32 [%rd2], %f6;\n";
        assert!(shows(guarded, shared));
        // Summed from global memory after the copy: computed with.
        let cheat = format!("{tile}\tld.global.nc.f32 %f4, [%rd3];\n\tadd.f32 %f3, %f3, %f4;\n");
        assert!(matches!(
            lack(&module(&[("k", &cheat)]), Some("k"), shared),
            Some(Lack::OtherSpace {
                space: Space::Global,
                ..
            })
        ));
        // A global kernel that reads constant memory.
        let global = "\tld.global.f32 %f1, [%rd1];\n\tld.const.f32 %f2, [table];\n\
                      \tadd.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2], %f3;\n";
        assert!(matches!(
            lack(
                &module(&[("k", global)]),
                Some("k"),
                Meaning::DataFrom(Space::Global)
            ),
            Some(Lack::OtherSpace {
                space: Space::Const,
                ..
            })
        ));
        // A register kernel reads its parameter and no memory.
        let register = Meaning::DataFrom(Space::Param);
        let plain = "\tld.param.f32 %f1, [k_param_0];\n\tadd.f32 %f2, %f1, %f1;\n\
                     \tst.global.f32 [%rd1], %f2;\n";
        assert!(shows(plain, register));
        let reads = format!("{plain}\tld.global.f32 %f3, [%rd1];\n\tadd.f32 %f2, %f2, %f3;\n");
        assert!(!shows(&reads, register));
        // Loading nothing from its own space shows nothing.
        assert_eq!(
            lack(
                &module(&[("k", "\tst.global.f32 [%rd1], %f1;\n")]),
                Some("k"),
                shared
            ),
            Some(Lack::NoInstruction)
        );
    }
}
