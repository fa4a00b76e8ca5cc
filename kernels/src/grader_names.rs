//! Names the course's own binaries and the grader share, one definition for
//! both ends (standard library only: the grader builds this crate without
//! the GPU runtime): the variable that makes a binary load another PTX
//! (read by `gpu`), the variable that marks a run of the grader's canary
//! (read by `fresh_inputs`), the flag for inputs made on the GPU (`inputs_on_gpu`),
//! and the course's poison kernel (`fresh_launch`), which the grader leaves
//! out of compute-sanitizer's checks.

/// The course's own kernel launched before each of a student's launches on
/// a GPU, filling shared memory with poison (`fresh_launch`): the grader
/// leaves it out of compute-sanitizer's checks, which are of the student's
/// kernel (the name is exact, and no exercise's kernel has it).
pub const POISON_KERNEL: &str = "course_poison_shared";

/// The variable naming a PTX file that `Gpu::load_module` loads instead
/// of the PTX the binary embeds. The grader sets it when it runs a
/// student's kernel through the course's own host code (the solution
/// binary), so a kernel's points come from host code the student did not
/// write. It gives a student's own binary nothing: the student already
/// chooses what PTX their binary loads, and the grader never sets it for
/// their runs (a sandboxed run's environment is cleared).
pub const KERNEL_PTX_ENV: &str = "CUDA_COURSE_KERNEL_PTX";

/// The variable the grader sets to `1` in every run whose kernel is its
/// canary (the course's binary given the canary's PTX, and a student's own
/// binary, whose broker loads the canary in place of its module). The
/// canary's answers are off the exercise's by design, so the course's
/// harness then times its launches without judging their outputs
/// (`fresh_inputs`): judged, a marked answer could pass one launch's
/// bound and miss the next, and a correct host would lose its run. It tells
/// a student's binary nothing it could use: at grading, every run of its
/// own binary has the canary, and the mark stays with the broker.
pub const CANARY_RUN_ENV: &str = "CUDA_COURSE_CANARY_RUN";

/// The flag (without its dashes) of vecadd-anyN's and dot-gm's binaries
/// that makes a and b on the GPU (`inputs_on_gpu`), and the name of the
/// step its report times: the grader passes it to the course's binary at
/// the runs above 2^31 elements. One name for the binary, its report and
/// the grader's plan.
pub const INPUTS_ON_GPU: &str = "inputs-on-gpu";
