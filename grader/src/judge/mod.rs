//! What a run amounts to: a verdict for every way it can end ([`verdict`]),
//! and the CPU emulator's findings added to it ([`findings`]).

pub mod findings;
pub mod verdict;
