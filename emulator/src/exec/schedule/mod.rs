//! Threads over the memory model: the interpreter that runs one thread to
//! its next stop (`thread`, with `printf`), the warp-wide operations
//! (`warp`), and the block scheduler that runs every thread of a block to
//! its end, through barriers and warp operations (`block`), carrying on
//! past threads at different barriers where the grader asks (`carry_on`),
//! and, where a launch asks, counting what the hardware would (`counters`)
//! and recording what a profiler's pictures show (`accesses`).

pub mod accesses;
pub mod block;
pub mod carry_on;
pub mod counters;
pub mod printf;
pub mod thread;
pub mod warp;
