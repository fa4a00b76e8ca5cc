//! `grader run`: a bundle graded student by student, results.json rewritten
//! after each ([`grading`]); over several GPUs ([`pool`]) or in shards
//! ([`shard`]); and regrading some students under the class's seed
//! ([`regrade`]).

pub mod grading;
pub mod pool;
pub mod regrade;
pub mod shard;
