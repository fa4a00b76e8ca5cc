//! PTX text: tokens, grammar, syntax tree.

pub mod ast;
pub mod lexer;
pub mod parser;
