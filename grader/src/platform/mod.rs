//! Grading where instructors grade: a Gradescope autograder and a
//! PrairieLearn external grader (`grader autograder ...`), which take an
//! upload as students make it, grade it with the grader's own commands on
//! the CPU emulator (or a GPU the container has), keep the course's
//! solutions and the grader's plans from the student's code, and write
//! each platform's results.json.

pub mod command;
pub mod gradescope;
pub mod grading;
pub mod layout;
pub mod package;
pub mod prairielearn;
pub mod prepare;
pub mod public;
pub mod report;
pub mod settings;
pub mod stages;
pub mod upload;
