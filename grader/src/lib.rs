//! cuda-course's grader, the library: what each exercise is
//! ([`catalogue`]), where each student's exercises are ([`discovery`]), and
//! which of their files are taken and how they are laid over the course's
//! crate ([`overlay`]), how one binary is run, bounded in time and output
//! ([`runner`]), what its run amounts to ([`verdict`]), and which runs to
//! make of each exercise and how to recheck them ([`plan`]), the scratch
//! workspace the students' crates are built in ([`workspace`]) and the
//! build itself ([`compile`]). Judging a class and reporting follow (issue
//! 6); until then there is no `grader` command.

pub mod catalogue;
pub mod compile;
pub mod discovery;
pub mod overlay;
pub mod plan;
pub mod runner;
pub mod verdict;
pub mod workspace;
