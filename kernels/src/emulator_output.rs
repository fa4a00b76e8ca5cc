//! What the CPU emulator (`emulator/`, standing in for libcuda.so.1) tells
//! the process that runs it, one definition for both ends: the emulator
//! writes its findings on stderr after [`FINDING_PREFIX`], the grader reads
//! them back from a run's stderr.

/// How the emulator starts each line it prints on stderr: a finding that
/// failed a launch (a race, an out-of-bounds or misaligned access, a
/// barrier not every thread reaches), or why it could not load the PTX.
pub const FINDING_PREFIX: &str = "cuda-course emulator: ";

/// Set, the emulator also prints each launch's instruction counts and
/// times after [`FINDING_PREFIX`]: the grader clears it, so they never
/// read as findings.
pub const STATS_VARIABLE: &str = "CUDA_COURSE_EMULATOR_STATS";
