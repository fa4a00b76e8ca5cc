//! `grader run`: a bundle graded `--jobs` exercises at a time on each GPU,
//! results.json rewritten after each student, some students regraded with
//! the others' records kept ([`grading`]); in shards ([`shard`]).
//! The commands: `grader run` ([`command`]) and `grader check`, a student's
//! exercise as a class of one ([`check`]).

pub mod check;
pub mod command;
pub mod grading;
pub mod shard;
