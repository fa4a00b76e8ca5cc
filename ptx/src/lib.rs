//! PTX text as nvcc writes it: tokens ([`lexer`]), grammar ([`parser`]) and
//! syntax tree ([`ast`]). Its own crate so that the CPU emulator, the grader
//! and `cargo course` read a kernel's instructions the same way, without the
//! grader or the course depending on the emulator.

pub mod ast;
pub mod lexer;
pub mod parser;
