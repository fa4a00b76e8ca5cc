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

/// Set to `1`, the emulator carries on past what a GPU without a sanitizer
/// carries on past, as the grader's runs need: it prints each finding
/// after [`FINDING_PREFIX`] and lets the launch go on, so the run's answer
/// is judged as a GPU's would be and the finding costs the memory-safety
/// point, as compute-sanitizer's does. Unset (a student's own runs), the
/// first finding fails the launch, as it does under compute-sanitizer.
pub const CARRY_ON_VARIABLE: &str = "CUDA_COURSE_EMULATOR_CARRY_ON";
