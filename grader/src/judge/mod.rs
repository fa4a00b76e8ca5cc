//! What runs amount to, starting nothing. One run: a verdict for every way
//! it can end ([`verdict`]), the CPU emulator's findings ([`findings`]),
//! what the trace and the report must show ([`evidence`]), all together
//! with the grader's recheck ([`run`](mod@run)). One exercise: the points
//! that are not a run's, memory safety and speed ([`points`]), and the
//! grade from the judged runs and the checks' records ([`score`]). The
//! runs are decided on and made elsewhere (`grade::exercise`, `run::bench`).

pub mod evidence;
pub mod findings;
pub mod lesson;
pub mod points;
pub mod run;
pub mod score;
pub mod timeline;
pub mod verdict;
