//! The points that are not a run's, from what their runs gave: memory
//! safety (compute-sanitizer's four tools over the kernel in the course's
//! host code at the exercise's first run, its smallest, and at an
//! edge-shape run of moderate size, where a read one past the end during a
//! prefetch happens; on the CPU emulator, its findings) and speed (the
//! kernel's time at the timed run against the course's own kernel, run
//! right after it on the same GPU); what each stands at before anything
//! runs; and the sums. Nothing here starts a process: the runs are made by
//! `run::bench`, as the dispatcher (`grade::exercise`) asks.

use kernels::catalogue::points::{MEMORY_SAFETY, SPEED};
use serde_json::Value;

use crate::confine::runner::{Ended, Outcome};
use crate::plan::runs::{self as plan, Role, Tag};
use crate::record::outcome::{CheckName, CheckOutcome, NotStarted};
use crate::record::results::{Check, Run, Sanitized};

/// What became of compute-sanitizer's tools over an exercise's kernel, as
/// the dispatcher made them (`grade::tools`).
#[derive(Debug, Clone, PartialEq)]
pub enum Tools {
    /// There was no run to go over.
    NoRun,
    /// The kernel cannot be run in the course's host code.
    Unrunnable(NotStarted),
    /// The kernel did not finish this run plain, so it was not run again
    /// under the tools, which slow it down many times.
    TimedOut(Tag),
    /// The tools' records, over the runs from `first` on.
    Ran { first: Tag, records: Vec<Sanitized> },
}

fn check(name: CheckName, assessed: bool, passed: bool, outcome: CheckOutcome) -> Check {
    Check {
        name,
        assessed,
        passed,
        points: 0,
        max_points: match name {
            CheckName::MemorySafety => MEMORY_SAFETY,
            CheckName::Speed => SPEED,
            CheckName::Lesson => kernels::catalogue::points::LESSON,
        },
        outcome,
    }
}

/// The checks `plan` has, as they stand before anything runs: the grading
/// replaces those it assesses; those left say why they earned nothing, or
/// why they were not assessed.
pub fn not_assessed(plan: &[plan::Run], sanitize: bool, emulate: bool) -> Vec<Check> {
    let mut checks = vec![];
    if !plan.is_empty() {
        let why = if sanitize {
            CheckOutcome::NoKernel
        } else {
            CheckOutcome::NoSanitize
        };
        checks.push(check(CheckName::MemorySafety, sanitize, false, why));
    }
    if plan.iter().any(|r| r.timed) {
        let why = if emulate {
            CheckOutcome::Emulated
        } else {
            CheckOutcome::NoKernel
        };
        checks.push(check(CheckName::Speed, !emulate, false, why));
    }
    checks
}

/// The points the assessed checks could earn; the others count in no maximum.
pub fn assessed_max(checks: &[Check]) -> u32 {
    checks
        .iter()
        .filter(|c| c.assessed)
        .map(|c| c.max_points)
        .sum()
}

/// Puts `check` in place of the one of its name.
pub fn set(checks: &mut Vec<Check>, check: Check) {
    match checks.iter_mut().find(|c| c.name == check.name) {
        Some(slot) => *slot = check,
        None => checks.push(check),
    }
}

/// The memory-safety point from compute-sanitizer's tools over the kernel
/// in the course's host code at the first planned run and an edge-shape
/// one (`tools`): clean where every tool's record is; its points where the
/// kernel `counts`.
pub fn memory_safety(tools: &Tools, counts: bool) -> Check {
    let lost = |outcome| check(CheckName::MemorySafety, true, false, outcome);
    match tools {
        Tools::NoRun => lost(CheckOutcome::NoKernel),
        Tools::Unrunnable(reason) => lost(CheckOutcome::Unrunnable {
            reason: reason.clone(),
        }),
        Tools::TimedOut(run) => lost(CheckOutcome::TimedOut { run: *run }),
        Tools::Ran { first, records } => {
            let clean = records.iter().all(|s| s.clean);
            let mut point = check(
                CheckName::MemorySafety,
                true,
                clean,
                CheckOutcome::Sanitized { run: *first },
            );
            point.points = u32::from(clean && counts) * MEMORY_SAFETY;
            point
        }
    }
}

/// The memory-safety point on the CPU emulator: its own checks of every
/// access, in every run of the kernel in the course's host code (`runs`,
/// the exercise's), found nothing. Only those runs count: the emulator's
/// words there come from the course's process, and a student's own binary
/// could print or hide lines that look like them. Threat model: a kernel
/// cannot reach the emulator's stderr (its `printf` goes to stdout), so it
/// can neither forge nor hide a finding.
pub fn emulator_safety(runs: &[Run], counts: bool) -> Check {
    let found_in = runs
        .iter()
        .find(|r| r.role == Some(Role::KernelInCourseHost) && !r.findings.is_empty())
        .map(|r| r.tag);
    let clean = found_in.is_none();
    let mut point = check(
        CheckName::MemorySafety,
        true,
        clean,
        CheckOutcome::EmulatorChecked { found_in },
    );
    point.points = u32::from(clean && counts) * MEMORY_SAFETY;
    point
}

/// The speed point: the kernel's time at the timed run (its kernel run in
/// the course's host code, already made, among `runs`) against the course's
/// own kernel at the same arguments (`course`: its run's outcome, made
/// right after it on the same GPU wherever the kernel's run gave a time,
/// None otherwise); `unrunnable` why the kernel could not be run in the
/// course's host code, if it could not; `asks` is the fraction of the
/// course's speed the point needs (`Exercise::speed_fraction`).
pub fn speed(
    runs: &[Run],
    unrunnable: Option<&NotStarted>,
    timed: &plan::Run,
    course: Option<&Outcome>,
    asks: f64,
    counts: bool,
) -> Check {
    let fail = |outcome| check(CheckName::Speed, true, false, outcome);
    if let Some(reason) = unrunnable {
        return fail(CheckOutcome::Unrunnable {
            reason: reason.clone(),
        });
    }
    let course = course.map(course_ms);
    let theirs = runs
        .iter()
        .find(|r| r.role == Some(Role::KernelInCourseHost) && r.tag == timed.tag);
    let (Some(theirs_ms), Some((course_ms, ended))) = (theirs.and_then(theirs_ms), course) else {
        return fail(CheckOutcome::NotMeasured { run: timed.tag });
    };
    let Some(course_ms) = course_ms else {
        // The course's own kernel failed: the node's fault, not the student's.
        return check(
            CheckName::Speed,
            false,
            false,
            CheckOutcome::CourseFailed {
                run: timed.tag,
                ended: format!("{ended:?}"),
            },
        );
    };
    let fraction = course_ms / theirs_ms;
    let passed = fraction >= asks;
    let mut point = check(
        CheckName::Speed,
        true,
        passed,
        CheckOutcome::Measured {
            run: timed.tag,
            theirs_ms,
            course_ms,
            fraction,
            asks,
        },
    );
    point.points = u32::from(passed && counts) * SPEED;
    point
}

/// The kernel's time in its run in the course's host code, where the run
/// passed and its report gives one: what the speed point compares.
pub fn theirs_ms(run: &Run) -> Option<f64> {
    Some(run)
        .filter(|r| r.verdict.passed())
        .and_then(|r| kernel_ms(r.report.as_ref()?))
}

/// The course's own kernel's time in its run's `outcome` (None when it did
/// not pass), and how its run ended.
fn course_ms(outcome: &Outcome) -> (Option<f64>, Ended) {
    let ms = serde_json::from_str::<Value>(outcome.stdout.trim())
        .ok()
        .filter(|r| r["check"]["passed"] == true)
        .and_then(|r| kernel_ms(&r));
    (ms, outcome.ended.clone())
}

/// The median kernel time a report gives, in ms.
fn kernel_ms(report: &Value) -> Option<f64> {
    crate::record::reports::report_timings(report)?
        .into_iter()
        .find(|t| t.step == "kernel")
        .map(|t| t.ms)
        .filter(|ms| *ms > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::outcome::Verdict;
    use kernels::catalogue::ExerciseId;

    fn planned(timed: bool) -> Vec<plan::Run> {
        let mut runs = crate::plan::exercise::plan(ExerciseId::VecaddAnyN, 1);
        for run in &mut runs {
            run.timed &= timed;
        }
        runs
    }

    #[test]
    fn on_the_emulator_a_finding_in_a_kernel_run_costs_memory_safety_and_one_in_the_student_s_binary_does_not()
     {
        let finding = || crate::record::outcome::Finding {
            kind: crate::record::outcome::FindingKind::SharedMemoryRace,
            line: Some(41),
            text: "shared-memory race in kernel `dot`".into(),
        };
        let runs: Vec<Run> = planned(false)
            .iter()
            .flat_map(|r| {
                [Role::KernelInCourseHost, Role::StudentHost].map(|role| Run {
                    tag: r.tag,
                    params: r.params.clone(),
                    role: Some(role),
                    command: vec![],
                    ptx: None,
                    exit_code: Some(0),
                    duration_ms: 1.0,
                    verdict: Verdict::Passed,
                    findings: vec![],
                    report: None,
                    points: 1,
                    max_points: 1,
                    trace_calls: None,
                })
            })
            .collect();
        let clean = emulator_safety(&runs, true);
        assert!(clean.assessed && clean.passed && clean.points == MEMORY_SAFETY);
        assert_eq!(
            emulator_safety(&runs, false).points,
            0,
            "the kernel earns it"
        );
        // The student's own process could print such a line: it counts for
        // nothing.
        let mut printed = runs.clone();
        printed[1].findings.push(finding());
        assert!(emulator_safety(&printed, true).passed);
        let mut found = runs.clone();
        found[2].findings.push(finding());
        let lost = emulator_safety(&found, true);
        assert!(lost.assessed && !lost.passed && lost.points == 0);
        assert_eq!(
            lost.outcome,
            CheckOutcome::EmulatorChecked {
                found_in: Some(found[2].tag)
            }
        );
    }

    #[test]
    fn points_not_assessed_say_why_and_count_in_no_maximum() {
        let checks = not_assessed(&planned(true), true, false);
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|c| c.assessed && c.points == 0));
        assert!(checks.iter().all(|c| c.outcome == CheckOutcome::NoKernel));
        let checks = not_assessed(&planned(true), false, false);
        assert!(!checks[0].assessed && checks[0].outcome == CheckOutcome::NoSanitize);
        assert!(checks[1].assessed);
        // On the emulator its findings assess memory safety; speed is not.
        let checks = not_assessed(&planned(true), true, true);
        assert!(checks[0].assessed && checks[0].outcome == CheckOutcome::NoKernel);
        assert!(!checks[1].assessed && checks[1].outcome == CheckOutcome::Emulated);
        assert_eq!(assessed_max(&checks), MEMORY_SAFETY);
        // No timed run, no speed point.
        assert_eq!(not_assessed(&planned(false), true, false).len(), 1);
    }

    /// A tool's record over `run`, clean or not.
    fn record(run: Tag, clean: bool) -> Sanitized {
        Sanitized {
            tool: crate::record::outcome::Tool::Memcheck,
            clean,
            summary: String::new(),
            finding: None,
            run: Some(run),
            blocks: None,
            elements: None,
            not_run: None,
            in_one_process: false,
            out_of_time: false,
            seconds: 0.0,
        }
    }

    #[test]
    fn memory_safety_is_every_tool_clean_and_a_kernel_not_checked_earns_nothing() {
        let plan = planned(false);
        let (first, second) = (plan[0].tag, plan[1].tag);
        let ran = |clean: [bool; 2]| Tools::Ran {
            first,
            records: vec![record(first, clean[0]), record(second, clean[1])],
        };
        let clean = memory_safety(&ran([true, true]), true);
        assert!(clean.assessed && clean.passed && clean.points == MEMORY_SAFETY);
        assert_eq!(clean.outcome, CheckOutcome::Sanitized { run: first });
        assert_eq!(
            memory_safety(&ran([true, true]), false).points,
            0,
            "the kernel earns it"
        );
        let found = memory_safety(&ran([true, false]), true);
        assert!(found.assessed && !found.passed && found.points == 0);
        // Not checked: assessed, lost, and why.
        for (tools, why) in [
            (Tools::NoRun, CheckOutcome::NoKernel),
            (
                Tools::TimedOut(second),
                CheckOutcome::TimedOut { run: second },
            ),
            (
                Tools::Unrunnable(NotStarted::NoPtx),
                CheckOutcome::Unrunnable {
                    reason: NotStarted::NoPtx,
                },
            ),
        ] {
            let point = memory_safety(&tools, true);
            assert!(point.assessed && !point.passed && point.points == 0);
            assert_eq!(point.outcome, why);
        }
    }

    #[test]
    fn speed_is_the_course_s_time_over_the_kernel_s_where_both_passed() {
        let plan = planned(true);
        let timed = plan.iter().find(|r| r.timed).unwrap();
        let report = |passed: bool, ms: f64| {
            serde_json::json!({
                "check": {"passed": passed},
                "timings": [{"step": "kernel", "ms": ms, "median_of": 5}],
            })
        };
        let theirs = |ms: f64| Run {
            report: Some(report(true, ms)),
            ..Run::not_made(timed, Some(Role::KernelInCourseHost), Verdict::Passed, 1)
        };
        let course = |passed: bool, ms: f64| Outcome {
            ended: Ended::Exited(if passed { 0 } else { 1 }),
            stdout: report(passed, ms).to_string(),
            stderr: String::new(),
            flooded: false,
            duration: std::time::Duration::ZERO,
            peak_memory: None,
            out_of_memory: None,
        };
        // Twice as slow as the course's, where the point asks a half.
        let runs = [theirs(2.0)];
        let point = speed(&runs, None, timed, Some(&course(true, 1.0)), 0.5, true);
        assert!(
            point.assessed && point.passed && point.points == SPEED,
            "{point:?}"
        );
        assert!(
            matches!(point.outcome, CheckOutcome::Measured { fraction, .. } if fraction == 0.5)
        );
        let slower = [theirs(2.5)];
        let point = speed(&slower, None, timed, Some(&course(true, 1.0)), 0.5, true);
        assert!(point.assessed && !point.passed && point.points == 0);
        // The course's own kernel failed here: the node's, not assessed.
        let point = speed(&runs, None, timed, Some(&course(false, 1.0)), 0.5, true);
        assert!(!point.assessed && point.points == 0);
        assert!(matches!(point.outcome, CheckOutcome::CourseFailed { .. }));
        // No course run (the kernel gave no time), or no kernel to run.
        let point = speed(&runs, None, timed, None, 0.5, true);
        assert_eq!(point.outcome, CheckOutcome::NotMeasured { run: timed.tag });
        let why = NotStarted::NoPtx;
        let point = speed(
            &runs,
            Some(&why),
            timed,
            Some(&course(true, 1.0)),
            0.5,
            true,
        );
        assert_eq!(point.outcome, CheckOutcome::Unrunnable { reason: why });
    }

    #[test]
    fn the_kernel_time_is_the_kernel_step_of_the_report() {
        let report = serde_json::json!({"timings": [
            {"step": "h2d", "ms": 2.0, "median_of": 1},
            {"step": "kernel", "ms": 0.25, "median_of": 5},
        ]});
        assert_eq!(kernel_ms(&report), Some(0.25));
        assert_eq!(kernel_ms(&serde_json::json!({"timings": []})), None);
        assert_eq!(
            kernel_ms(&serde_json::json!({"timings": [
                {"step": "kernel", "ms": 0.0, "median_of": 5}
            ]})),
            None
        );
    }
}
