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

/// Registers one `.reg` names.
#[derive(Clone, Debug, PartialEq)]
pub enum Declared {
    /// `%x`.
    One(String),
    /// `%f<39>`: `%f0` to `%f38`, kept as the prefix and the count.
    Range(String, u32),
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
    /// Where that code was inlined into, when it was (a function from a
    /// header, inlined into the kernel): the outermost caller's (file
    /// number, line).
    pub inlined_at: Option<(u32, u32)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `.reg .f32 %f<39>, %x;`: the type and what it declares.
    Registers(String, Vec<Declared>),
    Variable(Variable),
    Label(String),
    Instruction(Instruction),
    /// `{`, `}` of a nested scope.
    Open,
    Close,
}

/// A kernel's performance directives, which bound its launches
/// (`__launch_bounds__` writes `.maxntid` and `.minnctapersm`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchDirectives {
    /// `.maxntid x, y, z`: at most x*y*z threads per block.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid x, y, z`: exactly this block shape.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxnreg n`: registers per thread, at most.
    pub maxnreg: Option<u32>,
    /// `.minnctapersm n`: blocks per multiprocessor, at least.
    pub minnctapersm: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Statement>,
    pub ptx_line: u32,
    pub directives: LaunchDirectives,
}

/// A `.func`: a device function nvcc did not inline (`__noinline__`), or
/// one the runtime provides (`.extern .func vprintf`), which has no body.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// `(.param .b32 func_retval0)`: what it returns, if anything.
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    /// None for a declaration (`.extern .func`, or one defined later).
    pub body: Option<Vec<Statement>>,
    pub ptx_line: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub variables: Vec<Variable>,
    pub kernels: Vec<Kernel>,
    /// `.file` number -> path.
    pub files: Vec<(u32, String)>,
    /// `.func` names, declarations and definitions, in order.
    pub functions: Vec<String>,
    /// Each `.func` with its parameters and, where defined, its body.
    pub device_functions: Vec<Function>,
}

impl Module {
    /// The definition of device function `name`, or its declaration when
    /// the module has no definition.
    pub fn function(&self, name: &str) -> Option<&Function> {
        let mut found = None;
        for function in self.device_functions.iter().filter(|f| f.name == name) {
            if function.body.is_some() {
                return Some(function);
            }
            found = Some(function);
        }
        found
    }
}
