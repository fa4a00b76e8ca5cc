//! PTX tokens. nvcc's output is regular enough that a generated lexer
//! (logos) turns it into tokens in one pass; the grammar lives in the
//! hand-written parser.

use logos::Logos;

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Token<'a> {
    /// `.reg`, `.entry`, `.loc`, `.b32` ...: a directive or a state space or
    /// type in a declaration.
    #[regex(r"\.[A-Za-z_][A-Za-z0-9_]*", |lex| &lex.slice()[1..])]
    Directive(&'a str),
    /// Opcodes with their modifiers (`ld.global.nc.v4.f32`), registers
    /// (`%r1`, `%tid.x`), labels (`$L__BB0_2`) and symbols.
    /// Cache hints carry `::` (`ld.global.nc.L1::no_allocate.f32`).
    #[regex(r"[A-Za-z_$%][A-Za-z0-9_$]*(\.[A-Za-z0-9_]+(::[A-Za-z0-9_]+)*)*", |lex| lex.slice())]
    Word(&'a str),
    /// An integer, decimal or `0x` hex, with an optional `U` suffix.
    #[regex(r"[0-9]+U?", |lex| lex.slice().trim_end_matches('U').parse::<u64>().ok())]
    #[regex(r"0[xX][0-9a-fA-F]+U?", |lex| u64::from_str_radix(lex.slice()[2..].trim_end_matches('U'), 16).ok())]
    Integer(u64),
    /// `0f3F800000`: the bits of an f32.
    #[regex(r"0[fF][0-9a-fA-F]{8}", |lex| u32::from_str_radix(&lex.slice()[2..], 16).ok())]
    F32Bits(u32),
    /// `0d3FF0000000000000`: the bits of an f64.
    #[regex(r"0[dD][0-9a-fA-F]{16}", |lex| u64::from_str_radix(&lex.slice()[2..], 16).ok())]
    F64Bits(u64),
    /// A decimal number with a point: `.version 7.8`, or a float literal.
    #[regex(r"[0-9]+\.[0-9]+", |lex| lex.slice())]
    Decimal(&'a str),
    #[regex(r#""[^"\n]*""#, |lex| { let s = lex.slice(); &s[1..s.len() - 1] })]
    Str(&'a str),
    #[token(",")]
    Comma,
    #[token(";")]
    Semicolon,
    #[token(":")]
    Colon,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("<")]
    Less,
    #[token(">")]
    Greater,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("|")]
    Pipe,
    #[token("!")]
    Bang,
    #[token("@")]
    At,
    #[token("=")]
    Equals,
}

/// Tokens with the 1-based PTX line each starts on, or the line of the first
/// text that is no token.
pub fn tokens(source: &str) -> Result<Vec<(Token<'_>, u32)>, u32> {
    let mut out = Vec::new();
    let mut lexer = Token::lexer(source);
    let mut line = 1u32;
    let mut counted = 0usize;
    while let Some(token) = lexer.next() {
        let start = lexer.span().start;
        line += source[counted..start]
            .bytes()
            .filter(|&b| b == b'\n')
            .count() as u32;
        counted = start;
        match token {
            Ok(token) => out.push((token, line)),
            Err(()) => return Err(line),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instruction_with_vector_and_address_operands() {
        let tokens = tokens("\n\tld.global.nc.v4.f32 \t{%f9, %f10}, [%rd31+-8]; // c\n").unwrap();
        let kinds: Vec<_> = tokens.iter().map(|(t, _)| t.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                Token::Word("ld.global.nc.v4.f32"),
                Token::LBrace,
                Token::Word("%f9"),
                Token::Comma,
                Token::Word("%f10"),
                Token::RBrace,
                Token::Comma,
                Token::LBracket,
                Token::Word("%rd31"),
                Token::Plus,
                Token::Minus,
                Token::Integer(8),
                Token::RBracket,
                Token::Semicolon,
            ]
        );
        assert!(tokens.iter().all(|(_, line)| *line == 2));
    }

    #[test]
    fn literals_directives_and_lines() {
        let tokens =
            tokens(".version 7.8\n.loc 1 24 25\nmov.f32 %f1, 0f3F800000;\n/* x\n */ 0xffU")
                .unwrap();
        assert_eq!(tokens[0], (Token::Directive("version"), 1));
        assert_eq!(tokens[1], (Token::Decimal("7.8"), 1));
        assert_eq!(tokens[3], (Token::Integer(1), 2));
        assert!(tokens.contains(&(Token::F32Bits(0x3F80_0000), 3)));
        assert_eq!(tokens.last().unwrap(), &(Token::Integer(255), 5));
    }

    #[test]
    fn a_stray_character_names_its_line() {
        assert_eq!(tokens("ret;\n#").unwrap_err(), 2);
    }
}
