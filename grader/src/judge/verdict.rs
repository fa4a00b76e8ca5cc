//! What one run of an exercise binary amounts to: a verdict for every way it
//! can end, each with a reason a student can act on. Reads the run's JSON
//! with the course's own protocol types.
//!
//! This trusts the binary's own check; the grader's test plans (next) also
//! recompute the expected values themselves, since a student's src/main.rs
//! could print anything.

use std::fmt;

use kernels::protocol::{ErrorKind, Output, parse_output};
use serde_json::Value;

use crate::confine::runner::{Ended, Outcome};

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Exit 0 and a report whose check passed.
    Passed,
    /// A report whose check failed: what was wrong, and the binary's hint.
    Failed {
        summary: String,
        hint: Option<String>,
    },
    /// A `TODO(step N)` still in place.
    Unfinished {
        message: String,
    },
    /// CUDA reported an error (exit 3): the error's name and message.
    CudaError {
        name: Option<String>,
        message: String,
    },
    /// The binary refused the grader's arguments (exit 2): a grader bug or a
    /// changed argument parser.
    RefusedArguments {
        message: String,
    },
    Crashed {
        signal: i32,
    },
    TimedOut {
        seconds: f64,
    },
    /// Killed at the memory cap of its cell (bytes).
    OutOfMemory {
        limit: u64,
    },
    /// More output than the cap.
    Flooded,
    /// Output that is not the course's JSON report.
    Garbage {
        reason: String,
    },
    /// Exit code and report disagree (exit 0 with a failed check, say).
    Inconsistent {
        code: i32,
        passed: bool,
    },
    DidNotStart {
        reason: String,
    },
}

impl Verdict {
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Passed)
    }

    /// The kind of a run stopped at its timeout.
    pub const TIMED_OUT: &'static str = "timed-out";

    /// One word for the kind of verdict, to sort and count by.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed { .. } => "failed",
            Verdict::Unfinished { .. } => "unfinished",
            Verdict::CudaError { .. } => "cuda-error",
            Verdict::RefusedArguments { .. } => "refused-arguments",
            Verdict::Crashed { .. } => "crashed",
            Verdict::TimedOut { .. } => Verdict::TIMED_OUT,
            Verdict::OutOfMemory { .. } => "out-of-memory",
            Verdict::Flooded => "flooded",
            Verdict::Garbage { .. } => "garbage",
            Verdict::Inconsistent { .. } => "inconsistent",
            Verdict::DidNotStart { .. } => "did-not-start",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Passed => f.write_str("passed"),
            Verdict::Failed { summary, hint } => {
                write!(f, "wrong answer: {summary}")?;
                if let Some(hint) = hint {
                    write!(f, " (hint: {hint})")?;
                }
                Ok(())
            }
            Verdict::Unfinished { message } => write!(f, "not finished: {message}"),
            Verdict::CudaError { name, message } => match name {
                Some(name) => write!(f, "CUDA error {name}: {message}"),
                None => write!(f, "CUDA error: {message}"),
            },
            Verdict::RefusedArguments { message } => {
                write!(f, "the binary refused the grader's arguments: {message}")
            }
            Verdict::Crashed { signal } => write!(
                f,
                "crashed with signal {signal} ({}): a panic or a fault in the host code",
                signal_name(*signal)
            ),
            Verdict::TimedOut { seconds } => write!(
                f,
                "did not finish within {seconds:.0} s: a kernel or host loop that never ends?"
            ),
            Verdict::OutOfMemory { limit } => write!(
                f,
                "used more than the {} MiB of memory a run may have, and was stopped: does it \
                 allocate more than the exercise needs?",
                limit >> 20
            ),
            Verdict::Flooded => {
                f.write_str("printed more than the grader keeps: remove debug printing")
            }
            Verdict::Garbage { reason } => {
                write!(f, "output is not the course's JSON report: {reason}")
            }
            Verdict::Inconsistent { code, passed } => write!(
                f,
                "exit code {code} disagrees with the report's check (passed = {passed})"
            ),
            Verdict::DidNotStart { reason } => write!(f, "could not be started: {reason}"),
        }
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// The verdict on one run, `timeout_s` being the limit it ran under.
pub fn judge(outcome: &Outcome, timeout_s: f64) -> Verdict {
    // A flood first: one that never stops also times out, and the flood
    // is the cause.
    if outcome.flooded {
        return Verdict::Flooded;
    }
    // The cap killed one of its processes: whatever it printed after, the
    // cap is the cause (a run that still passed keeps its pass).
    if let Some(limit) = outcome.out_of_memory {
        if outcome.ended != Ended::Exited(0) {
            return Verdict::OutOfMemory { limit };
        }
    }
    let code = match &outcome.ended {
        Ended::DidNotStart(reason) => {
            return Verdict::DidNotStart {
                reason: reason.clone(),
            };
        }
        Ended::TimedOut => return Verdict::TimedOut { seconds: timeout_s },
        Ended::Signalled(signal) => return Verdict::Crashed { signal: *signal },
        Ended::Exited(code) => *code,
    };
    if outcome.stdout.trim().is_empty() {
        let said = outcome
            .stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("nothing");
        return Verdict::Garbage {
            reason: format!("stdout is empty (exit code {code}); stderr says: {said}"),
        };
    }
    match parse_output::<Value, Value>(outcome.stdout.trim()) {
        Err(err) => Verdict::Garbage {
            reason: err.to_string(),
        },
        Ok(Output::Error(report)) => {
            let message = report.error.message;
            match report.error.kind {
                ErrorKind::Unfinished => Verdict::Unfinished { message },
                ErrorKind::BadArguments => Verdict::RefusedArguments { message },
                ErrorKind::NoGpu | ErrorKind::PtxRejected | ErrorKind::Cuda => Verdict::CudaError {
                    name: report.error.cuda_error,
                    message,
                },
            }
        }
        Ok(Output::Report(report)) => {
            let passed = report.check.passed;
            if code != report.exit().code() {
                return Verdict::Inconsistent { code, passed };
            }
            if passed {
                return Verdict::Passed;
            }
            let first = report
                .check
                .failures
                .first()
                .map(|f| format!("; first {}: expected {}, got {}", f.at, f.expected, f.got))
                .unwrap_or_default();
            let error = report
                .check
                .tolerance
                .map(|t| {
                    format!(
                        "; relative error {:.2e}, tolerance {:.2e}",
                        t.relative_error.0, t.limit
                    )
                })
                .unwrap_or_default();
            Verdict::Failed {
                summary: format!(
                    "{} of {} wrong{first}{error}",
                    report.check.wrong, report.check.compared
                ),
                hint: report.check.hint,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confine::runner::{Limits, run};
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    const LIMITS: Limits = Limits {
        timeout: Duration::from_millis(500),
        max_output: 64 * 1024,
    };

    /// A fake exercise binary that prints `stdout` and exits with `code`.
    fn fake(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    const REPORT: &str = r#"{"schema_version":1,"exercise":"dot-sm","device":{"name":"GPU","compute_capability":"9.0","multiprocessors":132,"memory_bytes":1,"driver_cuda_version":"13.0"},"parameters":{"n":10},"results":{},"check":{"passed":PASSED,"criterion":"c","compared":1,"wrong":WRONG,"failures":FAILURES,"hint":"a hint"},"timings":[]}"#;

    fn report(passed: bool) -> String {
        let failures = if passed {
            "[]"
        } else {
            r#"[{"at":"dot","expected":90.0,"got":"NaN"}]"#
        };
        REPORT
            .replace("PASSED", &passed.to_string())
            .replace("WRONG", if passed { "0" } else { "1" })
            .replace("FAILURES", failures)
    }

    fn verdict(body: &str) -> Verdict {
        let dir = tempfile::tempdir().unwrap();
        let bin = fake(dir.path(), "fake", body);
        judge(&run(&bin, &["--json"], &[], LIMITS), 0.5)
    }

    #[test]
    fn a_right_answer_passes() {
        assert_eq!(
            verdict(&format!("echo '{}'; exit 0", report(true))),
            Verdict::Passed
        );
    }

    #[test]
    fn a_wrong_answer_says_where_and_hints() {
        let v = verdict(&format!("echo '{}'; exit 1", report(false)));
        let text = v.to_string();
        assert!(
            text.contains("1 of 1 wrong; first dot: expected 90, got NaN"),
            "{text}"
        );
        assert!(text.contains("hint: a hint"), "{text}");
    }

    #[test]
    fn a_wrong_answer_within_a_tolerance_check_gives_both() {
        let with_tolerance = report(false).replace(
            r#""hint":"a hint""#,
            r#""hint":"a hint","tolerance":{"relative_error":0.031,"limit":1e-6}"#,
        );
        let text = verdict(&format!("echo '{with_tolerance}'; exit 1")).to_string();
        assert!(
            text.contains("got NaN; relative error 3.10e-2, tolerance 1.00e-6"),
            "{text}"
        );
    }

    #[test]
    fn a_hang_a_flood_and_a_crash_are_told_apart() {
        assert_eq!(verdict("sleep 30"), Verdict::TimedOut { seconds: 0.5 });
        assert_eq!(verdict("yes"), Verdict::Flooded);
        assert_eq!(
            verdict("kill -ABRT $$"),
            Verdict::Crashed {
                signal: libc::SIGABRT
            }
        );
    }

    #[test]
    fn a_cuda_error_keeps_its_name() {
        let json = r#"{"schema_version":1,"exercise":"dot-sm","error":{"kind":"cuda","message":"boom","cuda_error":"CUDA_ERROR_ILLEGAL_ADDRESS"}}"#;
        let v = verdict(&format!("echo '{json}'; exit 3"));
        assert_eq!(
            v,
            Verdict::CudaError {
                name: Some("CUDA_ERROR_ILLEGAL_ADDRESS".into()),
                message: "boom".into()
            }
        );
        assert_eq!(ErrorKind::Cuda.exit().code(), 3);
    }

    #[test]
    fn an_unfinished_stub_is_not_a_crash() {
        let json = r#"{"schema_version":1,"exercise":"dot-sm","error":{"kind":"unfinished","message":"step 4 is not written yet"}}"#;
        assert!(matches!(
            verdict(&format!("echo '{json}'; exit 1")),
            Verdict::Unfinished { .. }
        ));
    }

    #[test]
    fn garbage_and_silence_are_explained() {
        let text = verdict("echo PASS; exit 0").to_string();
        assert!(text.contains("not the course's JSON report"), "{text}");
        let text = verdict("echo 'thread main panicked' >&2; exit 101").to_string();
        assert!(
            text.contains("stdout is empty (exit code 101)") && text.contains("panicked"),
            "{text}"
        );
    }

    #[test]
    fn an_exit_code_that_contradicts_the_report_is_not_believed() {
        let v = verdict(&format!("echo '{}'; exit 0", report(false)));
        assert_eq!(
            v,
            Verdict::Inconsistent {
                code: 0,
                passed: false
            }
        );
        assert!(!v.passed());
    }
}
