//! What one run of an exercise binary amounts to: a verdict for every way it
//! can end, each with a reason a student can act on (`record::render` words
//! it). Reads the run's JSON with the course's own protocol types.
//!
//! This trusts the binary's own check; the grader's recheck (`plan`) also
//! recomputes the expected values itself, since a student's src/main.rs
//! could print anything.

use kernels::protocol::{ErrorKind, Output, parse_output};
use serde_json::Value;

use crate::confine::runner::{Ended, Outcome};
use crate::record::outcome::{Failure, Garbage, NotStarted, Verdict};

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
                reason: NotStarted::Spawn {
                    error: reason.clone(),
                },
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
            garbage: Garbage::Empty {
                code,
                stderr: said.to_owned(),
            },
        };
    }
    match parse_output::<Value, Value>(outcome.stdout.trim()) {
        Err(err) => Verdict::Garbage {
            garbage: Garbage::NotReport {
                error: err.to_string(),
            },
        },
        Ok(Output::Error(report)) => {
            let message = report.error.message;
            match report.error.kind {
                ErrorKind::Unfinished => Verdict::Unfinished { message },
                ErrorKind::StaleLaunch => Verdict::Failed {
                    failure: Failure::StaleLaunch { message },
                },
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
            let check = report.check;
            Verdict::Failed {
                failure: Failure::WrongAnswer {
                    wrong: check.wrong,
                    compared: check.compared,
                    first: check.failures.into_iter().next(),
                    tolerance: check.tolerance,
                    hint: check.hint,
                },
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

    /// What a student reads of `verdict`.
    fn text(verdict: &Verdict) -> String {
        crate::record::render::verdict(verdict, &[])
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
        let text = self::text(&v);
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
        let text = text(&verdict(&format!("echo '{with_tolerance}'; exit 1")));
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
        let said = text(&verdict("echo PASS; exit 0"));
        assert!(said.contains("not the course's JSON report"), "{said}");
        let said = text(&verdict("echo 'thread main panicked' >&2; exit 101"));
        assert!(
            said.contains("stdout is empty (exit code 101)") && said.contains("panicked"),
            "{said}"
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
