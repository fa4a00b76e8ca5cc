//! How student code is started, for a build or a run: one child process
//! with a timeout and an output cap ([`runner`]), inside the bubblewrap
//! sandbox ([`sandbox`]), seeing one GPU where the grading is spread over
//! several ([`gpus`]).

pub mod gpus;
pub mod runner;
pub mod sandbox;
