//! The points that are not a run's: memory safety (compute-sanitizer's four
//! tools over the kernel in the course's host code at the exercise's first
//! run, its smallest, and at an edge-shape run of moderate size, where a
//! read one past the end during a prefetch happens) and speed (the kernel's time at the timed run against the
//! course's own kernel, run right after it on the same GPU); what each
//! stands at before anything runs; and the sums.

use std::path::{Path, PathBuf};

use kernels::catalogue::ExerciseId;
use kernels::catalogue::points::{MEMORY_SAFETY, SPEED};
use serde_json::Value;

use crate::build::reference::Kept;
use crate::confine::runner::{Ended, Limits};
use crate::confine::sandbox::Isolation;
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::{CheckName, CheckOutcome, NotStarted, Tool, Verdict};
use crate::record::results::{Check, Run, Sanitized};
use crate::run::job::{self, Job};
use crate::run::lane::{ExerciseLane, Hangs, Lane, Use};
use crate::run::sanitizer;

/// Where the checks run: the sandbox and the limits of the grading, and
/// the GPU's lanes (the tools share it; the course's timed run has it
/// alone while it times, as the student's had).
pub struct Bench<'a> {
    pub isolation: &'a Isolation,
    pub limits: Limits,
    pub lane: &'a Lane,
    /// Whether a run of this exercise ran out of time alone.
    pub hangs: &'a Hangs,
    /// Whether the exercise's runs keep several work queues (its verdicts
    /// read how streams overlap: `judge::exercise::reads_overlap`); the
    /// course's timed run is made as the student's kernel's was.
    pub keeps_work_queues: bool,
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

/// The memory-safety point: compute-sanitizer's tools over the kernel in
/// the course's host code at each of `runs` (the first planned run and an
/// edge-shape one), each made once (the tools slow it down many times);
/// with the tools' records. Each comes with the kernel's plain run of it.
pub fn memory_safety(
    bench: &Bench,
    exercise: ExerciseId,
    kernel_host: &Result<(PathBuf, Kept), NotStarted>,
    runs: &[(&plan::Run, Option<&Run>)],
    counts: bool,
) -> (Check, Vec<Sanitized>) {
    let lost = |outcome| (check(CheckName::MemorySafety, true, false, outcome), vec![]);
    let Some((first, _)) = runs.first() else {
        return lost(CheckOutcome::NoKernel);
    };
    let (reference, ptx) = match kernel_host {
        Ok(host) => host,
        Err(reason) => {
            return lost(CheckOutcome::Unrunnable {
                reason: reason.clone(),
            });
        }
    };
    // The tools that can find nothing in it; where it cannot be read now
    // (it was when the kernel ran), every tool runs.
    let ptx_text = crate::build::ptx_check::read(&ptx.path).ok();
    let left_out: Vec<(Tool, &str)> = sanitizer::TOOLS
        .iter()
        .filter_map(|&tool| {
            let why = sanitizer::not_needed(tool, ptx_text.as_deref()?, exercise)?;
            Some((tool, why))
        })
        .collect();
    // A kernel that did not finish a run plain would not under the tools
    // either, which slow it down many times: 4 × 10 × the timeout of the
    // node's time for nothing.
    if let Some((run, _)) = runs
        .iter()
        .find(|(_, ran)| ran.is_some_and(|r| matches!(r.verdict, Verdict::TimedOut { .. })))
    {
        return lost(CheckOutcome::TimedOut { run: run.tag });
    }
    let tool_runs: Vec<sanitizer::ToolRun> = runs
        .iter()
        .map(|(run, _)| {
            // The run's command line with other parameters, made once.
            let args_with = |params| {
                made_once(
                    plan::Run {
                        params,
                        ..(*run).clone()
                    }
                    .args(),
                )
            };
            let (args, elements) = match run.params.sanitized() {
                Some((params, elements)) => (args_with(params), Some(elements)),
                None => (made_once(run.args()), None),
            };
            sanitizer::ToolRun {
                tag: run.tag,
                args,
                elements,
                racechecked: run
                    .params
                    .racechecked()
                    .map(|(params, blocks)| (args_with(params), blocks)),
            }
        })
        .collect();
    let sanitized = sanitizer::sanitize(
        bench.isolation,
        ExerciseLane {
            lane: bench.lane,
            hangs: bench.hangs,
        },
        reference,
        &tool_runs,
        &[(kernels::KERNEL_PTX_ENV, ptx.path.as_path())],
        &left_out,
        bench.limits,
    );
    let clean = sanitized.iter().all(|s| s.clean);
    let mut point = check(
        CheckName::MemorySafety,
        true,
        clean,
        CheckOutcome::Sanitized { run: first.tag },
    );
    point.points = u32::from(clean && counts) * MEMORY_SAFETY;
    (point, sanitized)
}

/// A run's arguments made once (`--runs 1`): the tools slow a run down
/// many times, and one launch shows what they look for.
fn made_once(mut args: Vec<String>) -> Vec<String> {
    if let Some(at) = args.iter().position(|a| a == "--runs") {
        if let Some(runs) = args.get_mut(at + 1) {
            *runs = "1".to_owned();
        }
    }
    args
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
/// own kernel at the same arguments (`course`: [`course_ms`], made right
/// after it on the same GPU wherever the kernel's run gave a time, None
/// otherwise); `asks` is the fraction of the course's speed the point needs
/// (`Exercise::speed_fraction`).
pub fn speed(
    runs: &[Run],
    kernel_host: &Result<(PathBuf, Kept), NotStarted>,
    timed: &plan::Run,
    course: Option<(Option<f64>, Ended)>,
    asks: f64,
    counts: bool,
) -> Check {
    let fail = |outcome| check(CheckName::Speed, true, false, outcome);
    if let Err(reason) = kernel_host {
        return fail(CheckOutcome::Unrunnable {
            reason: reason.clone(),
        });
    }
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

/// The course's own kernel's time at `timed` (None when it did not pass),
/// and how its run ended.
pub fn course_ms(bench: &Bench, reference: &Path, timed: &plan::Run) -> (Option<f64>, Ended) {
    // The course's binary with its own kernel, made as the student's
    // kernel's run was (`judge::exercise::using`): alone while it times,
    // with the exercise's work queues.
    let job = Job {
        run: timed,
        role: Role::KernelInCourseHost,
        binary: reference,
        ptx: None,
        tracer: None,
    };
    let made = bench
        .lane
        .run_as("the course's timed runs", Use::Gated, |gate| {
            job::make(
                &job,
                bench.isolation,
                bench.limits,
                None,
                gate,
                bench.keeps_work_queues,
            )
        });
    let outcome = made.outcome;
    let ms = serde_json::from_str::<Value>(outcome.stdout.trim())
        .ok()
        .filter(|r| r["check"]["passed"] == true)
        .and_then(|r| kernel_ms(&r));
    (ms, outcome.ended)
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

    /// A bench on `lane`, unsandboxed, with a timeout of `seconds`.
    fn bench<'a>(
        lane: &'a Lane,
        hangs: &'a Hangs,
        keeps_work_queues: bool,
        seconds: u64,
    ) -> Bench<'a> {
        static UNSANDBOXED: Isolation = Isolation::Unsandboxed;
        Bench {
            lane,
            hangs,
            keeps_work_queues,
            isolation: &UNSANDBOXED,
            limits: Limits {
                timeout: std::time::Duration::from_secs(seconds),
                max_output: 1 << 16,
            },
        }
    }

    #[test]
    fn a_kernel_that_timed_out_is_not_run_again_under_the_sanitizer() {
        let first = &planned(true)[0];
        let verdict = Verdict::TimedOut { seconds: 1.0 };
        let ran = Run::not_made(first, Some(Role::KernelInCourseHost), verdict, 1);
        // A reference binary that cannot exist: were it run, the record
        // would say the tool could not start it.
        let host = Ok((
            PathBuf::from("/nonexistent/reference"),
            Kept {
                path: PathBuf::from("/nonexistent/kernel.ptx"),
                digest: String::new(),
            },
        ));
        let (lane, hangs) = (Lane::new(1, None), Hangs::default());
        let bench = bench(&lane, &hangs, false, 1);
        let (point, tools) = memory_safety(
            &bench,
            ExerciseId::VecaddAnyN,
            &host,
            &[(first, Some(&ran))],
            true,
        );
        assert!(tools.is_empty());
        assert!(point.assessed && !point.passed && point.points == 0);
        assert_eq!(point.outcome, CheckOutcome::TimedOut { run: first.tag });
    }

    #[test]
    #[cfg(unix)]
    fn the_course_s_timed_run_has_the_work_queues_the_exercise_s_runs_have() {
        use std::os::unix::fs::PermissionsExt;
        // A course binary that reports a passing run whose kernel time says
        // whether its contexts were given one work queue: 1 ms with the
        // variable, 2 ms without.
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("reference");
        let (name, value) = crate::confine::sandbox::ONE_WORK_QUEUE;
        std::fs::write(
            &reference,
            format!(
                "#!/bin/sh\nms=2; [ \"${name}\" = {value} ] && ms=1\n\
                 echo \"{{\\\"check\\\": {{\\\"passed\\\": true}}, \\\"timings\\\": \
                 [{{\\\"step\\\": \\\"kernel\\\", \\\"ms\\\": $ms, \\\"median_of\\\": 1}}]}}\"\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&reference, std::fs::Permissions::from_mode(0o755)).unwrap();
        let timed = &planned(true)[0];
        let (lane, hangs) = (Lane::new(1, None), Hangs::default());
        for (keeps, ms) in [(false, 1.0), (true, 2.0)] {
            let bench = bench(&lane, &hangs, keeps, 10);
            let (got, ended) = course_ms(&bench, &reference, timed);
            assert_eq!(got, Some(ms), "keeps_work_queues {keeps}: {ended:?}");
        }
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
