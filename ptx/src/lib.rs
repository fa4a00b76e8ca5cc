//! PTX text as nvcc writes it: tokens ([`lexer`]), grammar ([`parser`]) and
//! syntax tree ([`ast`]), and what a kernel's instructions mean of the
//! features an exercise teaches ([`features`]). Its own crate so that the
//! CPU emulator, the grader, `cargo course` and the exercises' tests read a
//! kernel's instructions the same way, without depending on the emulator.
//! The syntax tree and the checker are standard library only, so the
//! course's catalogue can name what each exercise's PTX must mean without
//! the lexer (the `parse` feature, on by default).

pub mod ast;
pub mod features;
#[cfg(feature = "parse")]
pub mod lexer;
#[cfg(feature = "parse")]
pub mod parser;
