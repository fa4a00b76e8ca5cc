//! A parser for the PTX nvcc emits: module directives, variables, kernels,
//! device functions and their statements. Directives no reader needs
//! (`.pragma`, `.section`, most performance hints) are skipped; `.loc` and
//! `.file` are kept so faults can name `kernel.cu` lines.
//!
//! Its input is untrusted (a student's kernel, copied into the PTX by nvcc
//! with any inline assembly unread), so its costs are bounded by the input:
//!
//! - **No recursion.** Nested scopes (`{ { ... } }`) are counted, not
//!   recursed into, and at most [`MAX_SCOPE_DEPTH`] deep; an operand is
//!   never nested (a vector holds plain operands), so no input can exhaust
//!   the stack.
//! - **Memory in proportion to the input.** Tokens are read from the lexer
//!   as the parser needs them, with two of lookahead, never all at once.
//!   What is kept is the syntax tree: dense instructions take about 15
//!   bytes of it per byte of text (`tests/hostile.rs` holds it under 20); a
//!   variable's initialiser is kept as its bytes (at most
//!   [`MAX_INITIALISER_BYTES`], and never more than the variable holds),
//!   about one byte per byte of text or less; a register range (`%r<N>`)
//!   is kept as its size; skipped sections (`.section .debug_str { ... }`)
//!   keep nothing.
//! - **Time linear in the input**: every token is looked at a fixed number
//!   of times.

use std::collections::VecDeque;

use logos::Logos;

use crate::ast::*;
use crate::lexer::Token;

mod statements;

/// How deep `{ ... }` scopes may nest inside a kernel or function. nvcc
/// nests a few levels (a call sequence, inline assembly); deeper nesting
/// is refused with a [`ParseError`] rather than followed.
pub const MAX_SCOPE_DEPTH: usize = 256;

/// The most initialised bytes one variable may have: 1 GiB, more than any
/// device could load from PTX text.
pub const MAX_INITIALISER_BYTES: u64 = 1 << 30;

/// Why a PTX text could not be read, with its PTX line.
#[derive(Debug, PartialEq)]
pub struct ParseError {
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PTX line {}: {}", self.line, self.message)
    }
}

pub fn parse(source: &str) -> Result<Module, ParseError> {
    let mut parser = Parser {
        lexer: Token::lexer(source),
        source,
        counted: 0,
        line: 1,
        ahead: VecDeque::new(),
        last_line: 1,
        source_line: None,
        inlined_at: None,
        callers: std::collections::HashMap::new(),
    };
    parser.module()
}

/// Bytes of a PTX type name (`b32` -> 4).
pub fn type_size(name: &str) -> Option<u64> {
    Some(match name {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        _ => return None,
    })
}

/// A token the lexer could not make: text that is no PTX.
const NOT_PTX: &str = "text that is not PTX";

struct Parser<'a> {
    lexer: logos::Lexer<'a, Token<'a>>,
    source: &'a str,
    /// Bytes of `source` whose newlines are counted into `line`.
    counted: usize,
    line: u32,
    /// Tokens read from the lexer and not yet consumed, with their lines;
    /// None marks text the lexer rejected.
    ahead: VecDeque<(Option<Token<'a>>, u32)>,
    /// The line of the last token consumed, for errors at the end.
    last_line: u32,
    /// The last `.loc`: (file, line), and its `inlined_at` (file, line).
    source_line: Option<(u32, u32)>,
    inlined_at: Option<(u32, u32)>,
    /// Each inlined `.loc` position seen, and where it was inlined: chained
    /// to find the outermost caller (a kernel's own line).
    callers: std::collections::HashMap<(u32, u32), (u32, u32)>,
}

type Parsed<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    /// Reads tokens from the lexer until `n` are waiting (or the text ends).
    fn fill(&mut self, n: usize) {
        while self.ahead.len() < n {
            let Some(token) = self.lexer.next() else {
                return;
            };
            let start = self.lexer.span().start;
            self.line += self.source.as_bytes()[self.counted..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u32;
            self.counted = start;
            self.ahead.push_back((token.ok(), self.line));
        }
    }

    fn peek(&mut self) -> Option<&Token<'a>> {
        self.peek_at(0)
    }

    fn peek_at(&mut self, ahead: usize) -> Option<&Token<'a>> {
        self.fill(ahead + 1);
        self.ahead.get(ahead).and_then(|(t, _)| t.as_ref())
    }

    fn at_end(&mut self) -> bool {
        self.fill(1);
        self.ahead.is_empty()
    }

    fn line(&mut self) -> u32 {
        self.fill(1);
        self.ahead.front().map_or(self.last_line, |(_, l)| *l)
    }

    fn next(&mut self) -> Parsed<Token<'a>> {
        self.fill(1);
        match self.ahead.pop_front() {
            Some((Some(token), line)) => {
                self.last_line = line;
                Ok(token)
            }
            Some((None, line)) => Err(ParseError {
                line,
                message: NOT_PTX.to_string(),
            }),
            None => Err(self.error("the PTX ends early")),
        }
    }

    /// Drops the next token (one already peeked).
    fn skip(&mut self) {
        if let Some((_, line)) = self.ahead.pop_front() {
            self.last_line = line;
        }
    }

    fn error(&mut self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line(),
            message: message.into(),
        }
    }

    fn expect(&mut self, want: Token<'a>) -> Parsed<()> {
        let line = self.line();
        let got = self.next()?;
        if got == want {
            Ok(())
        } else {
            Err(ParseError {
                line,
                message: format!("expected {want:?}, found {got:?}"),
            })
        }
    }

    fn eat(&mut self, want: &Token<'a>) -> bool {
        if self.peek() == Some(want) {
            self.skip();
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> Parsed<&'a str> {
        match self.next()? {
            Token::Word(w) => Ok(w),
            other => Err(self.error(format!("expected a name, found {other:?}"))),
        }
    }

    fn integer(&mut self) -> Parsed<i64> {
        let negative = self.eat(&Token::Minus);
        match self.next()? {
            Token::Integer(v) => Ok(if negative {
                (v as i64).wrapping_neg()
            } else {
                v as i64
            }),
            other => Err(self.error(format!("expected a number, found {other:?}"))),
        }
    }

    /// Skips to just past the next `;` (directives no reader needs).
    fn skip_statement(&mut self) -> Parsed<()> {
        while self.next()? != Token::Semicolon {}
        Ok(())
    }

    /// Skips a balanced `open ... close` (`.section` bodies, parameter
    /// lists of declarations), counting depth rather than recursing.
    fn skip_balanced(&mut self, open: Token<'a>, close: Token<'a>) -> Parsed<()> {
        self.expect(open.clone())?;
        let mut depth = 1usize;
        while depth > 0 {
            let token = self.next()?;
            if token == open {
                depth += 1;
            } else if token == close {
                depth -= 1;
            }
        }
        Ok(())
    }

    fn module(&mut self) -> Parsed<Module> {
        let mut module = Module::default();
        let mut linkage: Vec<&str> = Vec::new();
        while let Some(token) = self.peek().cloned() {
            let Token::Directive(name) = token else {
                return Err(self.error(format!("unexpected {token:?} at module level")));
            };
            match name {
                "version" | "target" | "address_size" | "pragma" => {
                    self.skip();
                    self.skip_to_line_end_or_semicolon()?;
                }
                "file" => {
                    self.skip();
                    let number = self.integer()? as u32;
                    let Token::Str(path) = self.next()? else {
                        return Err(self.error(".file needs a path"));
                    };
                    module.files.push((number, path.to_string()));
                    // Optional timestamp and size.
                    while self.eat(&Token::Comma) {
                        self.next()?;
                    }
                }
                "section" => {
                    self.skip();
                    self.next()?;
                    self.skip_balanced(Token::LBrace, Token::RBrace)?;
                }
                "visible" | "extern" | "weak" | "common" => {
                    self.skip();
                    linkage.push(name);
                }
                "entry" => {
                    self.skip();
                    module.kernels.push(self.kernel()?);
                    linkage.clear();
                }
                "func" => {
                    self.skip();
                    let function = self.function()?;
                    module.functions.push(function.name.clone());
                    module.device_functions.push(function);
                    linkage.clear();
                }
                "shared" | "const" | "global" | "local" => {
                    let extern_ = linkage.contains(&"extern");
                    module.variables.push(self.variable(extern_)?);
                    linkage.clear();
                }
                other => return Err(self.error(format!("unknown module directive .{other}"))),
            }
        }
        if !self.at_end() {
            // The loop ends at the end or at text that is no token.
            self.next()?;
        }
        Ok(module)
    }

    /// `.version`/`.target` lists end at the next directive; nvcc puts them
    /// on their own line.
    fn skip_to_line_end_or_semicolon(&mut self) -> Parsed<()> {
        let line = self.line();
        while let Some(token) = self.peek() {
            if *token == Token::Semicolon {
                self.skip();
                break;
            }
            if self.line() != line {
                break;
            }
            self.skip();
        }
        Ok(())
    }

    /// A parameter list `( .param ..., .param ... )`, empty allowed.
    fn params(&mut self) -> Parsed<Vec<Param>> {
        let mut params = Vec::new();
        self.expect(Token::LParen)?;
        while !self.eat(&Token::RParen) {
            self.eat(&Token::Comma);
            params.push(self.param()?);
        }
        Ok(params)
    }

    /// `.func (.param .b32 r) name (.param .b32 a, ...) [directives] { body }`
    /// or the same ending in `;` (a declaration).
    fn function(&mut self) -> Parsed<Function> {
        let ptx_line = self.line();
        let returns = if self.peek() == Some(&Token::LParen) {
            self.params()?
        } else {
            Vec::new()
        };
        let name = self.word()?.to_string();
        let params = if self.peek() == Some(&Token::LParen) {
            self.params()?
        } else {
            Vec::new()
        };
        // `.noreturn`, `.maxntid` ... up to the body or the `;`.
        loop {
            match self.peek() {
                Some(Token::Semicolon) => {
                    self.skip();
                    return Ok(Function {
                        name,
                        returns,
                        params,
                        body: None,
                        ptx_line,
                    });
                }
                Some(Token::LBrace) => break,
                Some(_) => {
                    self.next()?;
                }
                None => return Err(self.error(format!("function {name} has no body or `;`"))),
            }
        }
        let body = self.body(&name)?;
        Ok(Function {
            name,
            returns,
            params,
            body: Some(body),
            ptx_line,
        })
    }

    /// `.shared .align 16 .b8 cache[];` and friends, with an optional
    /// `= { ... }` initialiser.
    fn variable(&mut self, extern_: bool) -> Parsed<Variable> {
        let Token::Directive(space) = self.next()? else {
            unreachable!("checked by caller")
        };
        let mut align = 0;
        let mut element = 0;
        loop {
            match self.next()? {
                Token::Directive("align") => align = self.integer()? as u64,
                Token::Directive(ty) => {
                    element = type_size(ty)
                        .ok_or_else(|| self.error(format!("unknown variable type .{ty}")))?
                }
                Token::Word(name) => {
                    let name = name.to_string();
                    let mut count = Some(1u64);
                    while self.eat(&Token::LBracket) {
                        if self.eat(&Token::RBracket) {
                            count = None;
                            continue;
                        }
                        let n = self.integer()? as u64;
                        count = count.and_then(|c| c.checked_mul(n));
                        if count.is_none() {
                            return Err(self.error(format!("the array {name} is too large")));
                        }
                        self.expect(Token::RBracket)?;
                    }
                    let mut init = Vec::new();
                    if self.eat(&Token::Equals) {
                        let capacity = count
                            .and_then(|c| c.checked_mul(element))
                            .unwrap_or(u64::MAX)
                            .min(MAX_INITIALISER_BYTES);
                        init = self.initializer(&name, element, capacity)?;
                    }
                    self.expect(Token::Semicolon)?;
                    if extern_ && count == Some(1) && space == "shared" {
                        count = None;
                    }
                    return Ok(Variable {
                        space: space.to_string(),
                        name,
                        align: align.max(element).max(1),
                        element,
                        count,
                        init,
                    });
                }
                other => return Err(self.error(format!("unexpected {other:?} in a variable"))),
            }
        }
    }

    /// `{1, 2, {3, 4}}`, or one value: little-endian bytes of `element` each,
    /// no more than `capacity` of them. Braces of nested arrays are counted,
    /// not recursed into.
    fn initializer(&mut self, name: &str, element: u64, capacity: u64) -> Parsed<Vec<u8>> {
        let mut bytes = Vec::new();
        let mut depth = 0usize;
        loop {
            let value = match self.next()? {
                Token::Integer(v) => v,
                Token::Minus => (self.integer()?).wrapping_neg() as u64,
                Token::F32Bits(bits) => u64::from(bits),
                Token::F64Bits(bits) => bits,
                Token::LBrace => {
                    depth += 1;
                    if depth > MAX_SCOPE_DEPTH {
                        return Err(self.error(format!(
                            "the initialiser of {name} nests more than {MAX_SCOPE_DEPTH} braces deep"
                        )));
                    }
                    continue;
                }
                Token::Comma => continue,
                Token::RBrace if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                other => return Err(self.error(format!("unexpected {other:?} in an initialiser"))),
            };
            if bytes.len() as u64 + element > capacity {
                return Err(self.error(format!(
                    "the initialiser of {name} has more than the {capacity} bytes it may hold"
                )));
            }
            bytes.extend_from_slice(&value.to_le_bytes()[..element as usize]);
            if depth == 0 {
                break;
            }
        }
        Ok(bytes)
    }

    fn kernel(&mut self) -> Parsed<Kernel> {
        let ptx_line = self.line();
        let name = self.word()?.to_string();
        let params = if self.peek() == Some(&Token::LParen) {
            self.params()?
        } else {
            Vec::new()
        };
        let directives = self.launch_directives()?;
        let body = self.body(&name)?;
        Ok(Kernel {
            name,
            params,
            body,
            ptx_line,
            directives,
        })
    }

    /// Performance directives between a kernel's parameters and its body:
    /// `.maxntid 256, 1, 1`, `.reqntid 64`, `.maxnreg 32`, `.minnctapersm 2`
    /// (dimensions left out are 1); others (`.pragma`, `.noreturn`) are
    /// skipped.
    fn launch_directives(&mut self) -> Parsed<LaunchDirectives> {
        let mut directives = LaunchDirectives::default();
        while self.peek() != Some(&Token::LBrace) {
            match self.next()? {
                Token::Directive(name @ ("maxntid" | "reqntid")) => {
                    let mut shape = [1u32; 3];
                    for (axis, slot) in shape.iter_mut().enumerate() {
                        if axis > 0 && !self.eat(&Token::Comma) {
                            break;
                        }
                        *slot = self.count()?;
                    }
                    if name == "maxntid" {
                        directives.maxntid = Some(shape);
                    } else {
                        directives.reqntid = Some(shape);
                    }
                }
                Token::Directive("maxnreg") => directives.maxnreg = Some(self.count()?),
                Token::Directive("minnctapersm") => directives.minnctapersm = Some(self.count()?),
                _ => {}
            }
        }
        Ok(directives)
    }

    /// A count in a directive: a positive 32-bit number.
    fn count(&mut self) -> Parsed<u32> {
        let value = self.integer()?;
        u32::try_from(value)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| self.error(format!("{value} is not a count from 1 to 2^32-1")))
    }

    fn param(&mut self) -> Parsed<Param> {
        let mut align = 0;
        let mut size = 0;
        loop {
            match self.next()? {
                Token::Directive("param" | "reg") => {}
                Token::Directive("align") => align = self.integer()? as u64,
                Token::Directive("ptr" | "global" | "const" | "shared" | "local") => {}
                Token::Directive(ty) => {
                    size = type_size(ty)
                        .ok_or_else(|| self.error(format!("unknown parameter type .{ty}")))?
                }
                Token::Word(name) => {
                    let mut count = 1;
                    if self.eat(&Token::LBracket) {
                        count = self.integer()? as u64;
                        self.expect(Token::RBracket)?;
                    }
                    return Ok(Param {
                        name: name.to_string(),
                        size: size.saturating_mul(count),
                        align: align.max(size).max(1),
                    });
                }
                other => return Err(self.error(format!("unexpected {other:?} in a parameter"))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOT: &str = r#"
.version 7.8
.target sm_75
.address_size 64

	// .globl	dot
.extern .shared .align 16 .b8 cache[];
.const .align 4 .b8 table[4] = {1, 0, 0, 0};

.visible .entry dot(
	.param .u64 dot_param_0,
	.param .u32 dot_param_1
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<3>;
	.loc	1 12 0
	ld.param.u64 	%rd14, [dot_param_0];
	.loc	1 26 5, function_name $L__info_string0, inlined_at 1 41 25
	@!%p1 bra 	$L__BB0_3;
$L__BB0_3:
	shfl.sync.down.b32 	%r1|%p1, %r2, 16, 31, -1;
	ld.shared.f32 	%f31, [%r3+-4];
	ret;
}
	.file	1 "/x/kernel.cu"
	.section	.debug_str
	{
$L__info_string0:
.b8 95,90,0
	}
"#;

    #[test]
    fn a_kernel_with_its_parameters_lines_and_variables() {
        let module = parse(DOT).unwrap();
        assert_eq!(module.files, vec![(1, "/x/kernel.cu".to_string())]);
        assert_eq!(module.variables.len(), 2);
        assert_eq!(module.variables[0].count, None);
        assert_eq!(module.variables[0].align, 16);
        assert_eq!(module.variables[1].init, vec![1, 0, 0, 0]);
        let kernel = &module.kernels[0];
        assert_eq!(kernel.name, "dot");
        assert_eq!(kernel.params.len(), 2);
        assert_eq!(kernel.params[1].size, 4);
        let instructions: Vec<&Instruction> = kernel
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Instruction(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(instructions.len(), 5);
        assert_eq!(instructions[0].source, Some((1, 12)));
        assert_eq!(instructions[1].source, Some((1, 26)));
        assert_eq!(instructions[1].guard, Some(("%p1".to_string(), true)));
        assert_eq!(
            instructions[2].operands[0],
            Operand::Pair("%r1".to_string(), "%p1".to_string())
        );
        assert_eq!(instructions[2].operands[4], Operand::Int(-1));
        assert_eq!(
            instructions[3].operands[1],
            Operand::Address(Some("%r3".to_string()), -4)
        );
        assert_eq!(instructions[3].ptx_line, 24);
    }

    #[test]
    fn functions_directives_ranges_and_inlined_lines() {
        let text = r#"
.version 7.8
.target sm_75
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.func (.param .b32 func_retval0) add(.param .b32 add_param_0)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [add_param_0];
	st.param.b32 [func_retval0+0], %r1;
	ret;
}
.visible .entry k(.param .u64 k_param_0)
.maxntid 64, 2, 1
.minnctapersm 2
{
	.reg .b32 %r<100>, %x;
	.loc 2 10 1, function_name $L__info_string0, inlined_at 2 20 3
	.loc 2 20 1, function_name $L__info_string1, inlined_at 1 7 5
	.loc 2 10 1, function_name $L__info_string0, inlined_at 2 20 3
	tex.1d.v4.f32.s32 {%r1, %r2, %r3, %r4}, [%rd1, {%r5}];
	ret;
}
	.file 1 "kernel.cu"
"#;
        let module = parse(text).unwrap();
        assert_eq!(module.functions, vec!["vprintf", "add"]);
        let vprintf = module.function("vprintf").unwrap();
        assert!(vprintf.body.is_none() && vprintf.params.len() == 2);
        let add = module.function("add").unwrap();
        assert_eq!(add.returns[0].name, "func_retval0");
        assert_eq!(add.body.as_ref().unwrap().len(), 4);
        let kernel = &module.kernels[0];
        assert_eq!(kernel.directives.maxntid, Some([64, 2, 1]));
        assert_eq!(kernel.directives.minnctapersm, Some(2));
        assert_eq!(kernel.directives.reqntid, None);
        assert_eq!(
            kernel.body[0],
            Statement::Registers(
                "b32".into(),
                vec![
                    Declared::Range("%r".into(), 100),
                    Declared::One("%x".into())
                ]
            )
        );
        let Statement::Instruction(tex) = &kernel.body[1] else {
            panic!("an instruction");
        };
        assert_eq!(tex.source, Some((2, 10)));
        assert_eq!(tex.inlined_at, Some((1, 7)), "the outermost caller");
        assert_eq!(
            tex.operands[1],
            Operand::Vector(vec![
                Operand::Reg("%rd1".into()),
                Operand::Reg("%r5".into())
            ])
        );
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse(".version 7.8\n.entry k()\n{\n\tadd.s32 %r1, %r2 %r3;\n}").unwrap_err();
        assert_eq!(err.line, 4, "{err}");
    }
}
