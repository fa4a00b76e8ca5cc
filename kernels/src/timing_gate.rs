//! The timing gate: how the course's host code tells the grader when it
//! times, so that a run whose time a verdict reads holds the GPU alone only
//! while it times. One definition for both ends: the wire format (standard
//! library only, the grader's side) and, with the `runtime` feature, the
//! guard the course's timed sections take.
//!
//! The grader names a descriptor in [`FD_VARIABLE`]: one end of a Unix
//! socket pair. [`enter`] waits for the process's own GPU work to finish,
//! writes [`REQUEST`] and blocks until the grader answers [`GO`], which it
//! does once every other run on the GPU has ended or waits at its own gate
//! (so with nothing running: it synchronized first); new runs wait.
//! Dropping the guard waits for the process's GPU work to finish, writes
//! [`DONE`] and blocks until the grader answers [`SHARED`]: the grader may
//! let every run then waiting to be alone go first, so the process holds
//! nothing of the GPU between the two and must not use it. Entering
//! again while a guard lives asks nothing (the depth is counted), so nested
//! timed sections cannot deadlock. Without the variable `enter` does
//! nothing: a student's `cargo run`, and every run the grader does not
//! time, see no change.
//!
//! Which sections enter it: every timed span a verdict reads, warm-up
//! launches included (the GPU's clocks ramp up with it alone): the kernel's
//! median ([`crate::median_ms`], [`crate::median_ms_checked`], which the
//! speed point reads as the report's `kernel` step, in the student's run
//! and in the course's own run after it) and streams-overlap's two
//! pipelines (`streams::driver::measure_pipelines`). The other times a
//! report carries (the copies' laps, the copy-bandwidth probe) are shown to
//! the student and judged by nobody, so they are taken with the GPU shared.
//!
//! Threat model: the grader gives the gate only to the course's own binary
//! running a student's PTX (`Role::KernelInCourseHost`): host code the
//! course wrote, which synchronizes before it asks and before it says done
//! and does nothing between done and [`SHARED`], since the grader holds no
//! share of the GPU for it meanwhile. The student's kernel runs on the GPU
//! and cannot reach a descriptor; it has finished before either word. The
//! student's own binary (their host code) never gets it: it could leave
//! work on the GPU while it waits. What the holder of the descriptor can
//! do is ask for the GPU alone and keep it until it says done or exits:
//! the power a run with the GPU alone for its whole process already had,
//! bounded by the same timeout. It can also never ask (its times are then
//! taken beside others: only its own verdict can suffer) or write anything
//! else (the grader then closes the gate and holds the run as shared until
//! it exits). The grader's side is `grader::run::gate`.

/// The environment variable naming the gate's descriptor.
pub const FD_VARIABLE: &str = "CUDA_COURSE_TIMING_GATE";

/// Written by the process: it is about to time, and waits for [`GO`].
pub const REQUEST: u8 = b'?';
/// Written by the grader: the GPU is the process's alone.
pub const GO: u8 = b'!';
/// Written by the process: it has stopped timing, and has no work left on
/// the GPU; it uses the GPU again only once answered [`SHARED`].
pub const DONE: u8 = b'.';
/// Written by the grader after [`DONE`]: the process shares the GPU again.
pub const SHARED: u8 = b'=';

const _: () = assert!(
    REQUEST != GO
        && GO != DONE
        && DONE != REQUEST
        && SHARED != REQUEST
        && SHARED != GO
        && SHARED != DONE
);

/// The descriptor `value` (the variable's) names, or why it names none:
/// a decimal number from 3 up (0, 1 and 2 are stdin, stdout and stderr).
pub fn parse(value: &str) -> Result<i32, String> {
    let fd = value
        .parse::<u32>()
        .ok()
        .and_then(|fd| i32::try_from(fd).ok())
        .ok_or_else(|| "not a descriptor number".to_owned())?;
    if fd < 3 {
        return Err(format!("descriptor {fd} is stdin, stdout or stderr"));
    }
    Ok(fd)
}

#[cfg(feature = "runtime")]
pub use guard::{Alone, enter};

#[cfg(feature = "runtime")]
mod guard;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_is_a_descriptor_number_from_3() {
        assert_eq!(parse("7"), Ok(7));
        assert_eq!(parse("1023"), Ok(1023));
        for bad in ["", " 7", "7 ", "seven", "-4", "0x7", "99999999999"] {
            assert!(
                parse(bad).unwrap_err().contains("not a descriptor"),
                "{bad:?}"
            );
        }
        for standard in ["0", "1", "2"] {
            assert!(parse(standard).unwrap_err().contains("stdin"), "{standard}");
        }
    }
}
