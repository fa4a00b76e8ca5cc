//! cuda-course's grader, the library: what each exercise is
//! ([`catalogue`]), where each student's exercises are ([`discovery`]), and
//! which of their files are taken and how they are laid over the course's
//! crate ([`overlay`]), how one binary is run, bounded in time and output
//! ([`runner`]), and what its run amounts to ([`verdict`]). Test plans,
//! building and reporting follow (issue 6); until then there is no
//! `grader` command.

pub mod catalogue;
pub mod discovery;
pub mod overlay;
pub mod runner;
pub mod verdict;
