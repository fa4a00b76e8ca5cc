//! What runs amount to. One run: a verdict for every way it can end
//! ([`verdict`]), the CPU emulator's findings ([`findings`]), what the trace
//! and the report must show ([`evidence`]), all together with the grader's
//! recheck ([`run`](mod@run)). One exercise: plan, jobs, outcomes, points
//! ([`exercise`]), with memory safety and speed ([`points`]).

pub mod evidence;
pub mod exercise;
pub mod findings;
pub mod points;
pub mod run;
pub mod verdict;
