//! Statements inside a kernel's or function's body: nested scopes,
//! register and variable declarations, labels, `.loc` lines and
//! instructions with their operands, none of them parsed by recursion.

use super::{MAX_SCOPE_DEPTH, Parsed, Parser};
use crate::ast::*;
use crate::lexer::Token;

impl Parser<'_> {
    /// A kernel's or function's `{ ... }`: its statements, nested scopes as
    /// `Open` and `Close`.
    pub(super) fn body(&mut self, name: &str) -> Parsed<Vec<Statement>> {
        self.expect(Token::LBrace)?;
        let mut body = Vec::new();
        let mut depth = 1usize;
        while depth > 0 {
            match self.peek().cloned() {
                Some(Token::LBrace) => {
                    self.skip();
                    depth += 1;
                    if depth > MAX_SCOPE_DEPTH {
                        return Err(self.error(format!(
                            "{name} nests scopes ({{ ... }}) more than {MAX_SCOPE_DEPTH} deep"
                        )));
                    }
                    body.push(Statement::Open);
                }
                Some(Token::RBrace) => {
                    self.skip();
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
                None if self.at_end() => {
                    return Err(self.error(format!("{name} has no closing brace")));
                }
                None => {
                    self.next()?;
                }
            }
        }
        Ok(body)
    }

    fn statement(&mut self) -> Parsed<Option<Statement>> {
        match self.peek().cloned() {
            Some(Token::Directive("loc")) => {
                self.skip();
                let file = self.integer()? as u32;
                let line = self.integer()? as u32;
                self.integer()?;
                // `, function_name $L__info_string0, inlined_at 1 41 25`: the
                // line is the inlined function's own; where it was inlined
                // is kept beside it.
                let mut inlined_at = None;
                while self.eat(&Token::Comma) {
                    match self.word()? {
                        "function_name" => {
                            self.word()?;
                        }
                        "inlined_at" => {
                            let file = self.integer()? as u32;
                            let line = self.integer()? as u32;
                            self.integer()?;
                            inlined_at = Some((file, line));
                        }
                        other => return Err(self.error(format!("unknown .loc attribute {other}"))),
                    }
                }
                self.source_line = Some((file, line));
                self.inlined_at = inlined_at.map(|mut caller| {
                    self.callers.insert((file, line), caller);
                    // The caller's own caller, if it was inlined too, up to
                    // the code nothing was inlined into.
                    for _ in 0..64 {
                        match self.callers.get(&caller) {
                            Some(&next) if next != caller && next != (file, line) => caller = next,
                            _ => break,
                        }
                    }
                    caller
                });
                Ok(None)
            }
            Some(Token::Directive("reg")) => {
                self.skip();
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
                self.skip();
                self.skip();
                Ok(Some(Statement::Label(label.to_string())))
            }
            _ => self.instruction().map(|i| Some(Statement::Instruction(i))),
        }
    }

    /// `.reg .b32 %r<14>;` or `.reg .b32 %r1, %r2;` (after `.reg`).
    fn registers(&mut self) -> Parsed<Statement> {
        let ty = match self.next()? {
            Token::Directive("v2" | "v4") => match self.next()? {
                Token::Directive(ty) => ty.to_string(),
                other => {
                    return Err(self.error(format!("expected a register type, found {other:?}")));
                }
            },
            Token::Directive(ty) => ty.to_string(),
            other => return Err(self.error(format!("expected a register type, found {other:?}"))),
        };
        let mut names = Vec::new();
        loop {
            let name = self.word()?;
            if self.eat(&Token::Less) {
                let count = self.integer()?;
                self.expect(Token::Greater)?;
                let count = u32::try_from(count)
                    .map_err(|_| self.error(format!("{count} registers in one declaration")))?;
                names.push(Declared::Range(name.to_string(), count));
            } else {
                names.push(Declared::One(name.to_string()));
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
            source: self.source_line,
            inlined_at: self.inlined_at,
        })
    }

    /// An operand; `{a, b}` vectors and `(a, b)` call lists hold plain
    /// operands only, so operands never nest.
    fn operand(&mut self) -> Parsed<Operand> {
        let close = match self.peek() {
            Some(Token::LBrace) => Token::RBrace,
            Some(Token::LParen) => Token::RParen,
            _ => return self.plain_operand(),
        };
        self.skip();
        let mut parts = Vec::new();
        if self.eat(&close) {
            return Ok(Operand::Vector(parts));
        }
        loop {
            parts.push(self.plain_operand()?);
            if self.eat(&close) {
                break;
            }
            self.expect(Token::Comma)?;
        }
        Ok(Operand::Vector(parts))
    }

    fn plain_operand(&mut self) -> Parsed<Operand> {
        match self.next()? {
            Token::Word("_") => Ok(Operand::Sink),
            Token::Word(name) if name.starts_with('%') => {
                if self.eat(&Token::Pipe) {
                    Ok(Operand::Pair(name.to_string(), self.word()?.to_string()))
                } else {
                    Ok(Operand::Reg(name.to_string()))
                }
            }
            Token::Bang => match self.next()? {
                Token::Word(name) => Ok(Operand::Reg(format!("!{name}"))),
                _ => Err(self.error("`!` must precede a predicate register")),
            },
            Token::Word(name) => Ok(Operand::Symbol(name.to_string())),
            Token::Integer(v) => Ok(Operand::Int(v as i64)),
            Token::Minus => Ok(Operand::Int(self.integer_after_minus()?)),
            Token::F32Bits(bits) => Ok(Operand::F32(bits)),
            Token::F64Bits(bits) => Ok(Operand::F64(bits)),
            Token::LBracket => {
                let mut base = None;
                let mut offset = 0i64;
                if let Some(Token::Word(name)) = self.peek().cloned() {
                    self.skip();
                    base = Some(name.to_string());
                    if self.eat(&Token::Plus) {
                        offset = self.integer()?;
                    } else if self.eat(&Token::Minus) {
                        offset = self.integer()?.wrapping_neg();
                    } else if self.peek() == Some(&Token::Comma) {
                        return self.texture_operand(name);
                    }
                } else {
                    offset = self.integer()?;
                }
                self.expect(Token::RBracket)?;
                Ok(Operand::Address(base, offset))
            }
            open @ (Token::LBrace | Token::LParen) => Err(self.error(format!(
                "{open:?} inside a vector or argument list: operands do not nest"
            ))),
            other => Err(self.error(format!("unexpected {other:?} as an operand"))),
        }
    }

    /// A texture or surface operand after its first name, `[tex, {x, y}]`
    /// or `[tex, sampler, {x}]`: its parts, flattened into a vector.
    fn texture_operand(&mut self, first: &str) -> Parsed<Operand> {
        let first = if first.starts_with('%') {
            Operand::Reg(first.to_string())
        } else {
            Operand::Symbol(first.to_string())
        };
        let mut parts = vec![first];
        while self.eat(&Token::Comma) {
            if self.eat(&Token::LBrace) {
                loop {
                    parts.push(self.plain_operand()?);
                    if self.eat(&Token::RBrace) {
                        break;
                    }
                    self.expect(Token::Comma)?;
                }
            } else {
                parts.push(self.plain_operand()?);
            }
        }
        self.expect(Token::RBracket)?;
        Ok(Operand::Vector(parts))
    }

    fn integer_after_minus(&mut self) -> Parsed<i64> {
        match self.next()? {
            Token::Integer(v) => Ok((v as i64).wrapping_neg()),
            other => Err(self.error(format!("expected a number after `-`, found {other:?}"))),
        }
    }
}
