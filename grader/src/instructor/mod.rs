//! For the instructor and the course's maintainers, never a grade: the
//! grader's own test class ([`mutants`]), identical code between students
//! ([`similarity`]), and Slurm job scripts ([`slurm`]).

pub mod mutants;
pub mod similarity;
pub mod slurm;
