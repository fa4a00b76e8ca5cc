//! What the parser reads out of a PTX module: variables, kernels, and each
//! kernel's statements with their PTX and source lines.

/// A `.shared`, `.const`, `.global` or `.local` variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub space: String,
    pub name: String,
    pub align: u64,
    /// Bytes of one element (`.b8` -> 1, `.f32` -> 4).
    pub element: u64,
    /// Elements; None for `.extern` arrays sized at launch (`cache[]`).
    pub count: Option<u64>,
    /// Initial bytes, for `.const`/`.global` with `= { ... }`.
    pub init: Vec<u8>,
}

/// One `.param` of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub size: u64,
    pub align: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Reg(String),
    /// A symbol: a variable, a parameter or a label.
    Symbol(String),
    Int(i64),
    F32(u32),
    F64(u64),
    /// `[base+offset]`; base None for a bare `[8]`.
    Address(Option<String>, i64),
    Vector(Vec<Operand>),
    /// `%r1|%p1`: shfl's value and predicate outputs.
    Pair(String, String),
    /// `_`: an output nobody reads.
    Sink,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    /// `@%p1` or `@!%p1`: (register, negated).
    pub guard: Option<(String, bool)>,
    /// The whole opcode with modifiers: `ld.global.nc.v4.f32`.
    pub opcode: String,
    pub operands: Vec<Operand>,
    pub ptx_line: u32,
    /// (file number, line) from the last `.loc`.
    pub source: Option<(u32, u32)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `.reg .f32 %f<39>;` expands to one entry per register.
    Registers(String, Vec<String>),
    Variable(Variable),
    Label(String),
    Instruction(Instruction),
    /// `{`, `}` of a nested scope.
    Open,
    Close,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Statement>,
    pub ptx_line: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub variables: Vec<Variable>,
    pub kernels: Vec<Kernel>,
    /// `.file` number -> path.
    pub files: Vec<(u32, String)>,
    /// `.func` names: device functions the emulator does not call into.
    pub functions: Vec<String>,
}
