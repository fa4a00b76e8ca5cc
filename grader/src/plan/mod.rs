//! What grading each exercise means, before anything runs. A planned run is
//! a value ([`runs`]): a stable tag, typed parameters, its points. Each
//! family of exercises has one module with its plan, its description of
//! each run, the grader's recheck of a passing report and what the trace
//! must show ([`demands`]) ([`vecadd`], [`dot`], [`matmul`], [`memspace`],
//! [`streams`]), reached through the typed exercise id ([`exercise`]); what
//! a recheck can find is a [`disagreement`]. The plans capped for the CPU
//! emulator are [`emulated`]; [`draw`] holds what the families share; the
//! launch-shape classes each run covers are read by [`shapes`]; the
//! grader's answers to drawn inputs, computed once per grading, are kept
//! in a [`memo`].

pub mod demands;
pub mod disagreement;
pub mod dot;
pub mod draw;
pub mod emulated;
pub mod exercise;
pub mod matmul;
pub mod memo;
pub mod memspace;
pub mod runs;
pub mod shapes;
pub mod streams;
pub mod vecadd;
