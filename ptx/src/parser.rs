//! A recursive-descent parser for the PTX nvcc emits: module directives,
//! variables, kernels and their statements. Directives the emulator has no
//! use for (`.pragma`, `.section`, performance hints) are skipped; `.loc`
//! and `.file` are kept so faults can name `kernel.cu` lines.

use crate::ast::*;
use crate::lexer::{self, Token};

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
    let tokens = lexer::tokens(source).map_err(|line| ParseError {
        line,
        message: "text that is not PTX".to_string(),
    })?;
    let mut parser = Parser {
        tokens,
        at: 0,
        source: None,
    };
    parser.module()
}

struct Parser<'a> {
    tokens: Vec<(Token<'a>, u32)>,
    at: usize,
    /// The last `.loc`: (file, line).
    source: Option<(u32, u32)>,
}

type Parsed<T> = Result<T, ParseError>;

/// Bytes of a PTX type name (`b32` -> 4).
pub fn type_size(name: &str) -> Option<u64> {
    Some(match name {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Token<'a>> {
        self.tokens.get(self.at).map(|(t, _)| t)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Token<'a>> {
        self.tokens.get(self.at + ahead).map(|(t, _)| t)
    }

    fn line(&self) -> u32 {
        self.tokens
            .get(self.at)
            .or(self.tokens.last())
            .map_or(1, |(_, l)| *l)
    }

    fn next(&mut self) -> Parsed<Token<'a>> {
        let token = self
            .peek()
            .cloned()
            .ok_or_else(|| self.error("the PTX ends early"))?;
        self.at += 1;
        Ok(token)
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
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
            self.at += 1;
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

    /// Skips to just past the next `;` (directives the emulator ignores).
    fn skip_statement(&mut self) -> Parsed<()> {
        while self.next()? != Token::Semicolon {}
        Ok(())
    }

    /// Skips a balanced `{ ... }` (`.section` bodies).
    fn skip_braces(&mut self) -> Parsed<()> {
        self.expect(Token::LBrace)?;
        let mut depth = 1;
        while depth > 0 {
            match self.next()? {
                Token::LBrace => depth += 1,
                Token::RBrace => depth -= 1,
                _ => {}
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
                    self.at += 1;
                    self.skip_to_line_end_or_semicolon()?;
                }
                "file" => {
                    self.at += 1;
                    let number = self.integer()? as u32;
                    let Token::Str(path) = self.next()? else {
                        return Err(self.error(".file needs a path"));
                    };
                    module.files.push((number, path.to_string()));
                    // Optional timestamp and size.
                    while self.peek() == Some(&Token::Comma) {
                        self.at += 2;
                    }
                }
                "section" => {
                    self.at += 2;
                    self.skip_braces()?;
                }
                "visible" | "extern" | "weak" | "common" => {
                    self.at += 1;
                    linkage.push(name);
                }
                "entry" => {
                    self.at += 1;
                    module.kernels.push(self.kernel()?);
                    linkage.clear();
                }
                "func" => {
                    self.at += 1;
                    module.functions.push(self.function()?);
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
        Ok(module)
    }

    /// `.version`/`.target` lists end at the next directive; nvcc puts them
    /// on their own line.
    fn skip_to_line_end_or_semicolon(&mut self) -> Parsed<()> {
        let line = self.line();
        while let Some(token) = self.peek() {
            if *token == Token::Semicolon {
                self.at += 1;
                break;
            }
            if self.line() != line {
                break;
            }
            self.at += 1;
        }
        Ok(())
    }

    /// `.func` declarations and definitions: the name, body skipped.
    fn function(&mut self) -> Parsed<String> {
        if self.peek() == Some(&Token::LParen) {
            self.skip_parens()?;
        }
        let name = self.word()?.to_string();
        if self.peek() == Some(&Token::LParen) {
            self.skip_parens()?;
        }
        loop {
            match self.peek() {
                Some(Token::Semicolon) => {
                    self.at += 1;
                    break;
                }
                Some(Token::LBrace) => {
                    self.skip_braces()?;
                    break;
                }
                Some(_) => self.at += 1,
                None => break,
            }
        }
        Ok(name)
    }

    fn skip_parens(&mut self) -> Parsed<()> {
        self.expect(Token::LParen)?;
        let mut depth = 1;
        while depth > 0 {
            match self.next()? {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ => {}
            }
        }
        Ok(())
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
                        count = count.map(|c| c * n);
                        self.expect(Token::RBracket)?;
                    }
                    let mut init = Vec::new();
                    if self.eat(&Token::Equals) {
                        init = self.initializer(element)?;
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

    fn initializer(&mut self, element: u64) -> Parsed<Vec<u8>> {
        let mut bytes = Vec::new();
        let braced = self.eat(&Token::LBrace);
        loop {
            let value = match self.next()? {
                Token::Integer(v) => v,
                Token::Minus => (self.integer()?).wrapping_neg() as u64,
                Token::F32Bits(bits) => u64::from(bits),
                Token::F64Bits(bits) => bits,
                Token::LBrace | Token::Comma => continue,
                Token::RBrace => break,
                other => return Err(self.error(format!("unexpected {other:?} in an initialiser"))),
            };
            bytes.extend_from_slice(&value.to_le_bytes()[..element as usize]);
            if !braced {
                break;
            }
        }
        Ok(bytes)
    }

    fn kernel(&mut self) -> Parsed<Kernel> {
        let ptx_line = self.line();
        let name = self.word()?.to_string();
        let mut params = Vec::new();
        if self.eat(&Token::LParen) {
            while !self.eat(&Token::RParen) {
                self.eat(&Token::Comma);
                params.push(self.param()?);
            }
        }
        // Performance directives (.maxntid 256, 1, 1 ...) up to the body.
        while self.peek() != Some(&Token::LBrace) {
            self.next()?;
        }
        self.expect(Token::LBrace)?;
        let mut body = Vec::new();
        let mut depth = 1;
        while depth > 0 {
            match self.peek().cloned() {
                Some(Token::LBrace) => {
                    self.at += 1;
                    depth += 1;
                    body.push(Statement::Open);
                }
                Some(Token::RBrace) => {
                    self.at += 1;
                    depth -= 1;
                    if depth > 0 {
                        body.push(Statement::Close);
                    }
                }
                Some(_) => {
                    if let Some(statement) = self.statement()? {
                        body.push(statement);
                    }
                }
                None => return Err(self.error(format!("kernel {name} has no closing brace"))),
            }
        }
        Ok(Kernel {
            name,
            params,
            body,
            ptx_line,
        })
    }

    fn param(&mut self) -> Parsed<Param> {
        let mut align = 0;
        let mut size = 0;
        loop {
            match self.next()? {
                Token::Directive("param") => {}
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
                        size: size * count,
                        align: align.max(size).max(1),
                    });
                }
                other => return Err(self.error(format!("unexpected {other:?} in a parameter"))),
            }
        }
    }

    fn statement(&mut self) -> Parsed<Option<Statement>> {
        match self.peek().cloned() {
            Some(Token::Directive("loc")) => {
                self.at += 1;
                let file = self.integer()? as u32;
                let line = self.integer()? as u32;
                self.integer()?;
                // `, function_name $L__info_string0, inlined_at 1 41 25`: the
                // line is the inlined function's own, which is what to show.
                while self.eat(&Token::Comma) {
                    match self.word()? {
                        "function_name" => {
                            self.word()?;
                        }
                        "inlined_at" => {
                            for _ in 0..3 {
                                self.integer()?;
                            }
                        }
                        other => return Err(self.error(format!("unknown .loc attribute {other}"))),
                    }
                }
                self.source = Some((file, line));
                Ok(None)
            }
            Some(Token::Directive("reg")) => {
                self.at += 1;
                self.registers().map(Some)
            }
            Some(Token::Directive("pragma")) => {
                self.skip_statement()?;
                Ok(None)
            }
            Some(Token::Directive("shared" | "local" | "const" | "global" | "param")) => {
                Ok(Some(Statement::Variable(self.variable(false)?)))
            }
            Some(Token::Directive(other)) => Err(self.error(format!("unknown directive .{other}"))),
            Some(Token::Word(label)) if self.peek_at(1) == Some(&Token::Colon) => {
                self.at += 2;
                Ok(Some(Statement::Label(label.to_string())))
            }
            _ => self.instruction().map(|i| Some(Statement::Instruction(i))),
        }
    }

    /// `.reg .b32 %r<14>;` or `.reg .b32 %r1, %r2;` (after `.reg`).
    fn registers(&mut self) -> Parsed<Statement> {
        let ty = match self.next()? {
            Token::Directive(ty) => ty.to_string(),
            other => return Err(self.error(format!("expected a register type, found {other:?}"))),
        };
        let mut names = Vec::new();
        loop {
            let name = self.word()?;
            if self.eat(&Token::Less) {
                let count = self.integer()?;
                self.expect(Token::Greater)?;
                names.extend((0..count).map(|i| format!("{name}{i}")));
            } else {
                names.push(name.to_string());
            }
            if !self.eat(&Token::Comma) {
                break;
            }
        }
        self.expect(Token::Semicolon)?;
        Ok(Statement::Registers(ty, names))
    }

    fn instruction(&mut self) -> Parsed<Instruction> {
        let ptx_line = self.line();
        let mut guard = None;
        if self.eat(&Token::At) {
            let negated = self.eat(&Token::Bang);
            guard = Some((self.word()?.to_string(), negated));
        }
        let opcode = self.word()?.to_string();
        let mut operands = Vec::new();
        if !self.eat(&Token::Semicolon) {
            loop {
                operands.push(self.operand()?);
                if self.eat(&Token::Semicolon) {
                    break;
                }
                self.expect(Token::Comma)?;
            }
        }
        Ok(Instruction {
            guard,
            opcode,
            operands,
            ptx_line,
            source: self.source,
        })
    }

    fn operand(&mut self) -> Parsed<Operand> {
        match self.next()? {
            Token::Word("_") => Ok(Operand::Sink),
            Token::Word(name) if name.starts_with('%') => {
                if self.eat(&Token::Pipe) {
                    Ok(Operand::Pair(name.to_string(), self.word()?.to_string()))
                } else {
                    Ok(Operand::Reg(name.to_string()))
                }
            }
            Token::Bang => match self.operand()? {
                Operand::Reg(name) => Ok(Operand::Reg(format!("!{name}"))),
                _ => Err(self.error("`!` must precede a predicate register")),
            },
            Token::Word(name) => Ok(Operand::Symbol(name.to_string())),
            Token::Integer(v) => Ok(Operand::Int(v as i64)),
            Token::Minus => Ok(Operand::Int(self.integer_after_minus()?)),
            Token::F32Bits(bits) => Ok(Operand::F32(bits)),
            Token::F64Bits(bits) => Ok(Operand::F64(bits)),
            // `{%f1, %f2}` vectors; `(param0, param1)` call argument lists.
            open @ (Token::LBrace | Token::LParen) => {
                let close = if open == Token::LBrace {
                    Token::RBrace
                } else {
                    Token::RParen
                };
                let mut parts = Vec::new();
                if self.eat(&close) {
                    return Ok(Operand::Vector(parts));
                }
                loop {
                    parts.push(self.operand()?);
                    if self.eat(&close) {
                        break;
                    }
                    self.expect(Token::Comma)?;
                }
                Ok(Operand::Vector(parts))
            }
            Token::LBracket => {
                let mut base = None;
                let mut offset = 0i64;
                if let Some(Token::Word(name)) = self.peek().cloned() {
                    self.at += 1;
                    base = Some(name.to_string());
                    if self.eat(&Token::Plus) {
                        offset = self.integer()?;
                    } else if self.eat(&Token::Minus) {
                        offset = self.integer()?.wrapping_neg();
                    }
                } else {
                    offset = self.integer()?;
                }
                self.expect(Token::RBracket)?;
                Ok(Operand::Address(base, offset))
            }
            other => Err(self.error(format!("unexpected {other:?} as an operand"))),
        }
    }

    fn integer_after_minus(&mut self) -> Parsed<i64> {
        match self.next()? {
            Token::Integer(v) => Ok((v as i64).wrapping_neg()),
            other => Err(self.error(format!("expected a number after `-`, found {other:?}"))),
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
    fn errors_name_the_line() {
        let err = parse(".version 7.8\n.entry k()\n{\n\tadd.s32 %r1, %r2 %r3;\n}").unwrap_err();
        assert_eq!(err.line, 4, "{err}");
    }
}
