//! What grading each exercise means, before anything runs: the runs of its
//! test plan, drawn from the class's seed, and the grader's own recheck of
//! what a run reports ([`runs`]); the plans capped for the CPU emulator
//! ([`emulated`]).

pub mod emulated;
pub mod runs;
