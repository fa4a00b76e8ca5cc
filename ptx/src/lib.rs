//! PTX text as nvcc writes it: tokens ([`lexer`]), grammar ([`parser`]) and
//! syntax tree ([`ast`]), and what a kernel's instructions show of the
//! features an exercise teaches ([`features`]). Its own crate so that the
//! CPU emulator, the grader, `cargo course` and the exercises' tests read a
//! kernel's instructions the same way, without depending on the emulator.

pub mod ast;
pub mod features;
pub mod lexer;
pub mod parser;
