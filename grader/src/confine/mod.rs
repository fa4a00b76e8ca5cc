//! How student code is started, for a build or a run: one child process
//! with a timeout, an output cap and only the descriptors it is given
//! ([`runner`], [`descriptors`]), inside the bubblewrap sandbox
//! ([`sandbox`]) that shows it only the folders it needs ([`binds`]), in a
//! cell of its own that bounds its processes and memory ([`cell`]), seeing
//! one GPU where the grading is spread over several ([`gpus`]); where
//! bubblewrap cannot run, as an unprivileged user the platform names
//! ([`run_as`]).

pub mod binds;
pub mod cell;
pub mod descriptors;
pub mod gpus;
pub mod run_as;
pub mod runner;
pub mod sandbox;
