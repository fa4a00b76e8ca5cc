//! cuda-course's grader, the library behind the `grader` command: what each
//! exercise is ([`catalogue`]), where each student's exercises are
//! ([`discovery`]), which files are taken ([`overlay`]), the scratch
//! workspace and its build ([`workspace`], [`compile`]), the bundle a GPU
//! node grades ([`bundle`]), each exercise's seeded runs and the grader's
//! own recheck ([`plan`]), running one binary ([`runner`]) and judging its
//! run ([`verdict`]), compute-sanitizer's checks ([`sanitizer`]), grading
//! on the CPU emulator ([`emulate`], [`emulator_library`]), grading a
//! bundle ([`grading`]), results.json
//! ([`results`]), the reports ([`reports`]), and the grader's own test class
//! of mutants ([`mutants`]); student code builds and runs in a [`sandbox`].
//! At scale: a run over several GPUs ([`gpus`], [`pool`]), shards of a
//! class ([`shard`]) joined by [`merge`], and Slurm job scripts ([`slurm`]).

pub mod bundle;
pub mod catalogue;
pub mod compile;
pub mod course;
pub mod digest;
pub mod discovery;
pub mod emulate;
pub mod emulator_library;
pub mod export;
pub mod gpus;
pub mod grading;
pub mod memory;
pub mod merge;
pub mod mutants;
pub mod overlay;
pub mod plan;
pub mod pool;
pub mod ptx_check;
pub mod quote;
pub mod reference;
pub mod regrade;
pub mod reports;
pub mod results;
pub mod runner;
pub mod sandbox;
pub mod sanitizer;
pub mod shard;
pub mod similarity;
pub mod slurm;
pub mod student_id;
pub mod trace;
pub mod traced;
pub mod verdict;
pub mod workspace;
