//! `grader run`: a bundle graded `--jobs` exercises at a time on each GPU,
//! results.json rewritten after each student, some students regraded with
//! the others' records kept ([`grading`]); in shards ([`shard`]). Each
//! exercise dispatched ([`exercise`]): what its runs run ([`hosts`]), what
//! every stage shares and how each run uses the GPU ([`dispatch`]), the
//! runs made first in one process ([`batches`]), each planned run made in
//! its roles and judged ([`runs`]), the memory-safety point's tools
//! ([`tools`]). The commands: `grader run` ([`command`]) and `grader
//! check`, a student's exercise as a class of one ([`check`]).

pub mod batches;
pub mod check;
pub mod command;
pub mod dispatch;
pub mod exercise;
pub mod grading;
pub mod hosts;
pub mod lesson;
pub mod preflight;
pub mod runs;
pub mod shard;
pub mod tools;
