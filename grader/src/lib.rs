//! cuda-course's grader, the library behind the `grader` command. Its rooms
//! follow the pipeline; each may use the rooms above it in this list and
//! never one below (`tests/layers.rs` checks it):
//!
//! - [`atomic_file`]: a file written whole or not at all; [`error`]: the
//!   grader's own failures, which stop a command (a student's never do);
//!   [`bounded`]: what is kept of a student's text and JSON, cut with a
//!   note.
//! - [`plan`]: what grading each exercise means: its seeded runs, the
//!   grader's own recheck of their reports, the plans capped for the CPU
//!   emulator.
//! - [`discover`]: where the course and each student's exercises are, which
//!   files are taken, each student's id, which students are graded.
//! - [`confine`]: how student code starts: a child process with limits, in
//!   the bubblewrap sandbox, on one GPU.
//! - [`build`]: the bundle a GPU node grades: scratch workspaces, their
//!   builds, the course's trusted host code, the emulator library, each
//!   kernel's PTX inspected, digests.
//! - [`record`]: results.json, what is rendered from it (grades.csv,
//!   feedback, the terminal summary, LMS exports) and shards joined.
//! - [`run`]: making runs: GPU or emulator, memory for the largest runs,
//!   the driver-call trace, compute-sanitizer.
//! - [`judge`]: what a run amounts to: its verdict, the emulator's findings.
//! - [`grade`]: grading a bundle student by student, over GPUs or in
//!   shards, rewriting results.json after each.
//! - [`platform`]: grading where instructors grade: a Gradescope
//!   autograder and a PrairieLearn external grader, their packages and
//!   their results.json.
//! - [`instructor`]: the grader's own test class, similarity, Slurm jobs.

pub mod atomic_file;
pub mod bounded;
pub mod build;
pub mod confine;
pub mod discover;
pub mod error;
pub mod grade;
pub mod instructor;
pub mod judge;
pub mod plan;
pub mod platform;
pub mod record;
pub mod run;
