//! One made run, judged: its verdict from how it ended and what it printed,
//! the CPU emulator's findings, then, for a report that passed, the
//! grader's own recheck of its result and, for the student's binary, what
//! its trace must show. Its points count only when the kernel's PTX shows
//! what the exercise is about (`counts`), so an answer computed on the host
//! earns nothing.

use kernels::catalogue::ExerciseId;
use serde_json::Value;

use crate::bounded;
use crate::confine::runner::Ended;
use crate::judge::{evidence, findings, verdict};
use crate::plan::exercise::{canary_agrees, recheck};
use crate::plan::runs::Role;
use crate::record::outcome::{Failure, NotStarted, Verdict};
use crate::record::results::Run;
use crate::run::job::{Job, Made};

/// The record of `job`, made as `made` says, worth `points` when it passes
/// and `counts`; `timeout_s` is the limit it ran under, `emulated` whether
/// the kernels ran on the CPU emulator. A run of the student's canary build
/// comes with `canary`, the course's host code's report on the same canary
/// PTX: its result is the one the student's host must report, or why the
/// course's host code did not report it: then a run that reports anything is
/// not assessed (the node's fault), and one that ended otherwise keeps its
/// verdict.
pub fn judge(
    exercise: ExerciseId,
    job: &Job,
    made: Made,
    points: u32,
    counts: bool,
    (timeout_s, emulated): (f64, bool),
    canary: Option<Result<&Value, NotStarted>>,
) -> Run {
    let Made {
        outcome,
        command,
        trace,
    } = made;
    let found = if emulated {
        findings::findings(&outcome.stderr)
    } else {
        vec![]
    };
    let mut verdict = verdict::judge(&outcome, timeout_s);
    let report: Option<Value> = serde_json::from_str(outcome.stdout.trim()).ok();
    let said = report.as_ref().unwrap_or(&Value::Null);
    if let Some(reference) = canary {
        verdict = against_canary(exercise, job, verdict, said, reference);
    } else if verdict.passed() {
        if let Err(disagreement) = recheck(exercise, job.run, said) {
            verdict = Verdict::Failed {
                failure: Failure::Disagrees { disagreement },
            };
        }
    }
    if verdict.passed() {
        let failure = match &trace {
            Some(Ok(trace)) => evidence::judge(exercise, job.run.tag, trace, emulated),
            Some(Err(why)) => Some(Failure::NoTrace { trace: why.clone() }),
            None => None,
        };
        if let Some(failure) = failure {
            verdict = Verdict::Failed { failure };
        }
    }
    Run {
        tag: job.run.tag,
        params: job.run.params.clone(),
        role: Some(job.role),
        command,
        ptx: match job.role {
            Role::KernelInCourseHost => job
                .ptx
                .and_then(|ptx| Some(ptx.path.file_name()?.to_string_lossy().into_owned())),
            Role::StudentHost => None,
        },
        exit_code: match outcome.ended {
            Ended::Exited(code) => Some(code),
            _ => None,
        },
        duration_ms: outcome.duration.as_secs_f64() * 1e3,
        points: if verdict.passed() && counts {
            points
        } else {
            0
        },
        max_points: points,
        // What is kept of the student's words, bounded (`bounded`).
        verdict: bounded::strings(verdict),
        findings: bounded::strings(bounded::first(found)),
        report: report.map(bounded::report),
        trace_calls: match trace {
            Some(Ok(trace)) => Some(trace.calls.len()),
            _ => None,
        },
    }
}

/// What the course's host code reported running the canary's PTX (`made`),
/// the result the student's host code must carry; else why there is
/// nothing to compare with: it did not report (the node's fault, not the
/// student's).
pub fn canary_report(made: &Made) -> Result<Value, NotStarted> {
    let outcome = &made.outcome;
    serde_json::from_str(outcome.stdout.trim())
        .ok()
        .filter(|r: &Value| r["results"].is_object())
        .ok_or_else(|| NotStarted::CanaryUnverified {
            ended: format!(
                "{:?}: {}",
                outcome.ended,
                outcome.stdout.trim().chars().take(300).collect::<String>()
            ),
        })
}

/// A run of the canary build, judged against the canary's result: a report
/// that carries it passes (the trace is judged after); one that carries the
/// exercise's exact answer, where the canary's differs from it, computed
/// that answer without the kernel (an integrity flag); any other report did
/// not return the kernel's result. How a run ended otherwise (a crash, a
/// CUDA error) stands.
fn against_canary(
    exercise: ExerciseId,
    job: &Job,
    verdict: Verdict,
    said: &Value,
    reference: Result<&Value, NotStarted>,
) -> Verdict {
    let reported = matches!(
        verdict,
        Verdict::Passed
            | Verdict::Failed {
                failure: Failure::WrongAnswer { .. }
            }
    );
    if !reported {
        return verdict;
    }
    let reference = match reference {
        Ok(reference) => reference,
        Err(reason) => return Verdict::DidNotStart { reason },
    };
    let Err(disagreement) = canary_agrees(exercise, job.run, said, reference) else {
        return Verdict::Passed;
    };
    // Where the canary's result is the exact answer (no output moved at
    // this size), reporting it is no evidence of anything.
    let canary_is_exact = reference["check"]["passed"] == Value::Bool(true);
    let failure = if !canary_is_exact && recheck(exercise, job.run, said).is_ok() {
        Failure::CpuAnswer
    } else {
        Failure::Canary { disagreement }
    };
    Verdict::Failed { failure }
}
