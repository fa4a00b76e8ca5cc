//! `grader run`: a bundle graded student by student, results.json rewritten
//! after each, some students regraded with the others' records kept
//! ([`grading`]); over several GPUs ([`pool`]) or in shards ([`shard`]).
//! The commands: `grader run` ([`command`]) and `grader check`, a student's
//! exercise as a class of one ([`check`]).

pub mod check;
pub mod command;
pub mod grading;
pub mod pool;
pub mod shard;
