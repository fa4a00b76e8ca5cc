//! `grader build`: the bundle a GPU node grades without cargo. Each
//! student's scratch workspace ([`workspace`]) built in the sandbox
//! ([`compile`]) with its messages shown relative to it ([`relative`]), the
//! course's trusted host code, the broker and its client
//! ([`reference`](mod@reference)), each build's canary kernel, compiled by
//! the grader ([`canary`]), the CPU emulator's
//! library ([`emulator_library`]), each
//! kernel's PTX inspected ([`ptx_check`]), what a build may leave bounded
//! ([`sizes`]), digests of all of it ([`digest`]), and bundle.json
//! ([`bundle`]); the command itself, with its seed ([`command`]).

pub mod bundle;
pub mod canary;
pub mod command;
pub mod compile;
pub mod digest;
pub mod emulator_library;
pub mod ptx_check;
pub mod reference;
pub mod relative;
pub mod sizes;
pub mod workspace;
