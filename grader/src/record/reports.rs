//! Renders a batch's results for people: grades.csv for an LMS, a markdown
//! feedback file per student, and the terminal summary. Renders only what
//! results.json holds, so `grader report` can redo them at any time.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use crate::atomic_file;
use crate::build::reference::PTX_DIR;
use crate::plan::runs::Role;
use crate::record::outcome::{IntegrityEvidence, Verdict};
use crate::record::quote;
use crate::record::render;
use crate::record::results::{self, Results, Student};
use kernels::catalogue::EXERCISES;

/// One row per student: points per exercise (blank where not submitted),
/// total, maximum, where it was graded (on the emulator), and the integrity
/// flags (blank for none).
pub fn grades_csv(results: &Results) -> String {
    let graded: Vec<&str> = graded_exercises(results);
    // On the emulator, a last column says so on every row an LMS imports.
    let (column, cell) = if results.emulated {
        (",graded_on", ",cpu-emulator")
    } else {
        ("", "")
    };
    let mut out = format!("student,{},total,max{column},integrity\n", graded.join(","));
    for (name, student) in &results.students {
        let cells: Vec<String> = graded.iter().map(|e| points_cell(student, e)).collect();
        let (got, max) = student.points();
        let _ = writeln!(
            out,
            "{},{},{got},{max}{cell},{}",
            csv_field(name),
            cells.join(","),
            csv_field(&integrity_cell(student))
        );
    }
    out
}

/// A student's integrity flags, `exercise: kind` in course order, `; `
/// between; empty for none.
pub fn integrity_cell(student: &Student) -> String {
    flags(student)
        .iter()
        .map(|(exercise, evidence, _)| format!("{exercise}: {}", evidence.kind()))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A student's integrity flags in course order, one per exercise and kind
/// of evidence, with the runs it showed in.
fn flags(student: &Student) -> Vec<(&'static str, &IntegrityEvidence, Vec<String>)> {
    let mut out: Vec<(&'static str, &IntegrityEvidence, Vec<String>)> = Vec::new();
    for exercise in EXERCISES {
        for flag in student
            .exercises
            .get(exercise.name)
            .map_or(&[][..], |graded| &graded.integrity[..])
        {
            match out.iter_mut().find(|(e, evidence, _)| {
                *e == exercise.name && evidence.kind() == flag.evidence.kind()
            }) {
                Some((_, _, runs)) => runs.push(flag.tag.to_string()),
                None => out.push((exercise.name, &flag.evidence, vec![flag.tag.to_string()])),
            }
        }
    }
    out
}

/// A student's points for `exercise`, blank when they did not submit it.
pub fn points_cell(student: &Student, exercise: &str) -> String {
    student
        .exercises
        .get(exercise)
        .filter(|x| x.absent.is_none())
        .map(|x| x.points.to_string())
        .unwrap_or_default()
}

/// The exercises any student was graded on, in course order.
pub fn graded_exercises(results: &Results) -> Vec<&'static str> {
    EXERCISES
        .iter()
        .map(|e| e.name)
        .filter(|name| {
            results
                .students
                .values()
                .any(|s| s.exercises.contains_key(*name))
        })
        .collect()
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// What a student reads: per exercise, the points, what went wrong and how
/// each run ended, with the commands to reproduce it.
pub fn feedback(name: &str, student: &Student, seed: u64) -> String {
    let (got, max) = student.points();
    let mut out =
        format!("# Feedback for {name}\n\n{got} of {max} points (test plan seed {seed}).\n");
    if !student.problems.is_empty() {
        out.push_str("\n## About the submission\n\n");
        for problem in &student.problems {
            let _ = writeln!(out, "- {}", quote::inline(problem));
        }
    }
    // In course order, as the student met them.
    let in_order = EXERCISES
        .iter()
        .filter_map(|e| student.exercises.get(e.name).map(|graded| (e.name, graded)));
    for (exercise, graded) in in_order {
        let _ = write!(
            out,
            "\n## {exercise}: {} of {} points\n\n",
            graded.points, graded.max_points
        );
        for refused in &graded.refused {
            let _ = writeln!(out, "- Not taken: {}", quote::inline(refused));
        }
        if let Some(errors) = &graded.build_errors {
            let _ = write!(
                out,
                "It did not build:\n\n{}",
                quote::fenced(&quote::errors_first(errors), "text")
            );
            continue;
        }
        if let Some(refused) = &graded.refused_binary {
            let _ = writeln!(out, "Not graded: {refused}.");
            continue;
        }
        if let Some(absent) = &graded.absent {
            let _ = writeln!(out, "Not graded: {absent}.");
            continue;
        }
        if graded.runs.is_empty() {
            out.push_str("Not graded: it was not found in the submission.\n");
            continue;
        }
        for (_, evidence, runs) in flags(student).iter().filter(|(e, ..)| *e == exercise) {
            let _ = writeln!(
                out,
                "- Integrity: {} (runs {}). This exercise's host points are 0, and the instructor \
                 is told.",
                render::integrity(evidence),
                runs.join(", ")
            );
        }
        let lost_run = graded.kernel_lost.map(|tag| {
            graded
                .runs
                .iter()
                .find(|r| r.tag == tag)
                .map_or_else(|| tag.to_string(), results::Run::about)
        });
        if let (true, Some(run)) = (graded.ptx_missing.is_empty(), &lost_run) {
            let _ = writeln!(
                out,
                "- The kernel shows what the exercise is about, but it did not pass the run \
                 \"{run}\": the PTX, memory-safety and speed points go only to a kernel that \
                 passes every planned run (0 of 1 point)."
            );
        } else if graded.ptx_missing.is_empty() {
            out.push_str("- The kernel shows what the exercise is about (1 point).\n");
        } else {
            out.push_str("- The kernel does not show what the exercise is about, so its runs earn no points:\n");
            for missing in &graded.ptx_missing {
                let _ = writeln!(out, "  - {}", quote::inline(missing));
            }
        }
        // Memory safety and speed: what was found, or why not assessed.
        for check in &graded.checks {
            let said = render::check(check, &graded.runs, &graded.sanitizer);
            let _ = if check.assessed {
                writeln!(
                    out,
                    "- {} of {}, {}: {}",
                    check.points,
                    check.max_points,
                    check.name,
                    quote::inline(&said)
                )
            } else {
                writeln!(out, "- {}: {}", check.name, quote::inline(&said))
            };
        }
        for run in &graded.runs {
            run_feedback(&mut out, exercise, run);
        }
    }
    out
}

/// One run's lines of the feedback on `exercise`: its points, how it
/// ended, and the command that makes it again.
fn run_feedback(out: &mut String, exercise: &str, run: &results::Run) {
    // The message may quote the run's own output: fenced.
    let message = render::verdict(&run.verdict, &run.findings);
    let passed = run.verdict.passed();
    let outcome = if passed && run.findings.is_empty() {
        "passed".to_owned()
    } else if matches!(run.verdict, Verdict::Skipped { .. }) {
        message
    } else {
        let quoted = quote::fenced(&message, "text");
        let indented: Vec<String> = quoted.lines().map(|l| format!("  {l}")).collect();
        // Passed with the emulator's findings: they cost the
        // memory-safety point, which names this run.
        let head = if passed { "passed, but" } else { "FAILED" };
        format!("{head}:\n\n{}\n", indented.join("\n"))
    };
    // The same run on the student's own machine.
    // Without --json: the student wants the report for people.
    let args: Vec<&str> = run
        .command
        .get(1..)
        .unwrap_or_default()
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--json")
        .collect();
    let args = args.join(" ");
    let about = run.about();
    let _ = match run.role {
        Some(Role::KernelInCourseHost) if run.command.is_empty() => writeln!(
            out,
            "- {} of {}, {about}, your kernel in the course's host code: {outcome}",
            run.points, run.max_points
        ),
        Some(Role::KernelInCourseHost) => writeln!(
            out,
            "- {} of {}, {about}, your kernel in the course's host code: {outcome}\n  \
             `{}={PTX_DIR}/{} {} {args}` (in the grader's bundle)",
            run.points,
            run.max_points,
            kernels::KERNEL_PTX_ENV,
            run.ptx.as_deref().unwrap_or_default(),
            run.command.first().map_or("", String::as_str),
        ),
        // The student's binary, or a planned run left out: what
        // it would have run.
        Some(Role::StudentHost) | None => writeln!(
            out,
            "- {} of {}, {about}, your binary: {outcome}\n  `cargo run -p {exercise} -- {args}`",
            run.points, run.max_points
        ),
    };

    if let Some(timings) = run.report.as_ref().and_then(timings) {
        let _ = writeln!(out, "  {timings}");
    }
}

/// The timed steps of an exercise's JSON report, as the course writes them.
pub fn report_timings(report: &serde_json::Value) -> Option<Vec<kernels::protocol::Timing>> {
    serde_json::from_value(report.get("timings")?.clone()).ok()
}

/// A report's timings on one line, e.g. "kernel 0.412 ms, median of 10;
/// 0.98 of device copy bandwidth": for a student comparing versions.
fn timings(report: &serde_json::Value) -> Option<String> {
    let timings = report_timings(report)?;
    let first = timings.first()?;
    let steps: Vec<String> = timings
        .iter()
        // A step's name is the report's: the student's program may say anything.
        .map(|t| (quote::inline(&t.step), t.ms))
        .map(|(step, ms)| match ms {
            ms if ms < 1.0 => format!("{step} {:.1} µs", ms * 1e3),
            ms => format!("{step} {ms:.2} ms"),
        })
        .collect();
    let mut line = format!("{}, median of {}", steps.join(", "), first.median_of);
    if let Some(ratio) = report
        .pointer("/throughput/ratio_to_copy")
        .and_then(|r| r.as_f64())
    {
        let _ = write!(line, "; {ratio:.2} of device copy bandwidth");
    }
    Some(line)
}

/// The terminal table: a row per student, sorted, a column per exercise
/// (blank where not submitted, "no build" where it did not build), their
/// totals, then how many runs ended in each verdict and how many
/// exercises were submitted, did not build, or were not submitted.
pub fn summary(results: &Results) -> String {
    let graded = graded_exercises(results);
    let width = results
        .students
        .keys()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    let mut out = format!("{:<width$}", "student");
    for exercise in &graded {
        let _ = write!(out, " {exercise:>14}");
    }
    out.push_str("      total\n");
    let mut verdicts: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut submitted, mut unbuilt, mut absent, mut refused) = (0, 0, 0, 0);
    for (name, student) in &results.students {
        let _ = write!(out, "{name:<width$}");
        for exercise in &graded {
            let cell = match student.exercises.get(*exercise) {
                Some(e) if e.absent.is_some() => String::new(),
                Some(e) if e.build_errors.is_some() => "no build".to_owned(),
                Some(e) if e.refused_binary.is_some() => "refused".to_owned(),
                Some(e) => format!("{}/{}", e.points, e.max_points),
                None => String::new(),
            };
            let _ = write!(out, " {cell:>14}");
        }
        let (got, max) = student.points();
        let _ = writeln!(out, " {:>10}", format!("{got}/{max}"));
        for e in student.exercises.values() {
            match (&e.absent, &e.build_errors) {
                (Some(_), _) => absent += 1,
                (None, Some(_)) => (submitted, unbuilt) = (submitted + 1, unbuilt + 1),
                (None, None) => submitted += 1,
            }
            refused += usize::from(e.refused_binary.is_some());
            for run in &e.runs {
                *verdicts.entry(run.verdict.kind()).or_default() += 1;
            }
        }
    }
    let counted: Vec<String> = verdicts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let _ = writeln!(
        out,
        "{} students; {submitted} exercises submitted, {unbuilt} did not build, {absent} not submitted{}; runs: {}",
        results.students.len(),
        // A binary not as built: the bundle's doing, rare, said only then.
        if refused > 0 {
            format!(", {refused} binaries refused (not as built)")
        } else {
            String::new()
        },
        if counted.is_empty() {
            "none".to_owned()
        } else {
            counted.join(", ")
        }
    );
    out + &integrity_section(results) + &emulated(results) + &unsandboxed(results)
}

/// The instructor's section on integrity flags: each student, exercise and
/// run whose reports the evidence contradicts, and the evidence; empty
/// when there are none.
pub fn integrity_section(results: &Results) -> String {
    let mut out = String::new();
    for (name, student) in &results.students {
        for (exercise, evidence, runs) in flags(student) {
            let _ = writeln!(
                out,
                "  {name}: {exercise}: {} (runs {})",
                render::integrity(evidence),
                runs.join(", ")
            );
        }
    }
    if out.is_empty() {
        return out;
    }
    format!(
        "integrity flags (the exercise's host points are 0; see each student's results.json runs):\n{out}"
    )
}

/// A student id as a file name: letters, digits, '.', '_' and '-' kept.
fn file_name(student: &str) -> String {
    let name: String = student
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with('.') || name.is_empty() {
        format!("_{name}")
    } else {
        name
    }
}

/// `grader report`: grades.csv and feedback/ written again from
/// DIR/results.json.
pub fn rewrite(dir: &Path) -> crate::error::Result<Results> {
    let path = dir.join("results.json");
    eprintln!("grader: reports from {}", path.display());
    let results = Results::load(&path)?;
    write(&results, dir).map_err(crate::error::Error::io(dir))?;
    Ok(results)
}

/// Writes grades.csv and `feedback/<student>.md` into `out`, each atomically.
pub fn write(results: &Results, out: &Path) -> std::io::Result<()> {
    atomic_file::write(&out.join("grades.csv"), grades_csv(results).as_bytes())?;
    for (name, student) in &results.students {
        let path = out.join("feedback").join(format!("{}.md", file_name(name)));
        let text =
            feedback(name, student, results.seed) + &emulated(results) + &unsandboxed(results);
        atomic_file::write(&path, text.as_bytes())?;
    }
    Ok(())
}

/// What every report says when the kernels ran on the CPU emulator.
pub fn emulated(results: &Results) -> String {
    if results.emulated {
        "\nGraded on the CPU emulator (--emulate): sizes capped for a CPU, times not judged, \
         runs that need a GPU's speed skipped and marked so.\n"
            .to_owned()
    } else {
        String::new()
    }
}

/// What every report says when student code ran without the sandbox.
pub fn unsandboxed(results: &Results) -> String {
    match results.sandbox {
        Some(_) => String::new(),
        None => "\nWARNING: graded with --no-sandbox: student code was built and run \
                 with the instructor's rights, unconfined.\n"
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::runs::{Params, Tag};
    use crate::plan::vecadd;
    use crate::record::outcome::{CheckName, CheckOutcome, Failure, Finding, FindingKind, Tool};
    use crate::record::results::{Check, Exercise, Run, Sanitized};
    use kernels::protocol::{Failure as WrongValue, Real};

    fn run(passed: bool) -> Run {
        let verdict = if passed {
            Verdict::Passed
        } else {
            Verdict::Failed {
                failure: Failure::WrongAnswer {
                    wrong: 745,
                    compared: 1001,
                    first: Some(WrongValue {
                        at: "c[256]".into(),
                        expected: Real(768.0),
                        got: Real(f64::NAN),
                    }),
                    tolerance: None,
                    hint: None,
                },
            }
        };
        Run {
            tag: Tag::GridSmallerThanN,
            params: Params::Vecadd(vecadd::Params {
                n: 1001,
                threads: Some(128),
                blocks: Some(2),
                seed: None,
                inputs_on_gpu: false,
                runs: 2,
            }),
            role: Some(Role::StudentHost),
            command: vec![
                "vecadd-anyN--ann".into(),
                "--n".into(),
                "1001".into(),
                "--json".into(),
            ],
            ptx: None,
            exit_code: Some(if passed { 0 } else { 1 }),
            duration_ms: 10.0,
            verdict,
            findings: vec![],
            // A passing run's report, as far as the feedback reads it.
            report: passed.then(|| {
                serde_json::json!({
                    "timings": [
                        {"step": "h2d", "ms": 1.25, "median_of": 10},
                        {"step": "kernel", "ms": 0.0412, "median_of": 10},
                    ],
                    "throughput": {"ratio_to_copy": 0.981},
                })
            }),
            points: if passed { 2 } else { 0 },
            max_points: 2,
            trace_calls: None,
        }
    }

    /// `run` made through the course's reference binary with the
    /// student's PTX.
    fn kernel_run(mut run: Run) -> Run {
        run.command[0] = "reference/vecadd-anyN".into();
        run.role = Some(Role::KernelInCourseHost);
        run.ptx = Some("vecadd-anyN--ann.ptx".into());
        run.points = run.points.min(1);
        run.max_points = 1;
        run
    }

    fn results() -> Results {
        let mut results = Results::new(7);
        results.sandbox = Some("bubblewrap, as nobody".into());
        let vecadd = Exercise {
            refused: vec![
                "src/main.rs is a symbolic link: submissions must hold the files themselves".into(),
            ],
            build_errors: None,
            refused_binary: None,
            ptx_missing: vec![],
            runs: vec![kernel_run(run(true)), run(true), run(false)],
            points: 5,
            max_points: 8,
            sanitizer: vec![
                Sanitized {
                    tool: Tool::Memcheck,
                    clean: false,
                    summary: "ERROR SUMMARY: 1 error".into(),
                    finding: Some("Invalid __global__ write of size 4 bytes (kernel.cu:27)".into()),
                    run: None,
                    blocks: None,
                    elements: None,
                    not_run: None,
                    in_one_process: false,
                    out_of_time: false,
                    seconds: 0.0,
                },
                Sanitized {
                    tool: Tool::Racecheck,
                    clean: true,
                    summary: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".into(),
                    finding: None,
                    run: None,
                    blocks: None,
                    elements: None,
                    not_run: None,
                    in_one_process: false,
                    out_of_time: false,
                    seconds: 0.0,
                },
            ],
            checks: vec![
                Check {
                    name: CheckName::MemorySafety,
                    assessed: true,
                    passed: false,
                    points: 0,
                    max_points: 1,
                    outcome: CheckOutcome::Sanitized {
                        run: Tag::GridSmallerThanN,
                    },
                },
                Check {
                    name: CheckName::Speed,
                    assessed: true,
                    passed: true,
                    points: 1,
                    max_points: 1,
                    outcome: CheckOutcome::Measured {
                        run: Tag::GridSmallerThanN,
                        theirs_ms: 0.171,
                        course_ms: 0.168,
                        fraction: 0.98,
                        asks: 0.5,
                    },
                },
            ],
            inputs: None,
            absent: None,
            integrity: vec![],
            kernel_lost: None,
        };
        let broken = Exercise {
            refused: vec![],
            build_errors: Some("src/kernel.cu(12): error: identifier \"x\" is undefined".into()),
            refused_binary: None,
            ptx_missing: vec![],
            runs: vec![],
            points: 0,
            max_points: 7,
            sanitizer: vec![],
            checks: vec![],
            inputs: None,
            absent: None,
            integrity: vec![],
            kernel_lost: None,
        };
        results.students.insert(
            "ann".into(),
            Student {
                problems: vec![],
                exercises: BTreeMap::from([
                    ("vecadd-anyN".into(), vecadd),
                    ("dot-sm".into(), broken),
                ]),
            },
        );
        results.students.insert(
            "Bo, the \"second\"".into(),
            Student {
                problems: vec![
                    "dot-sm was found in 2 places (a, b); keep one and resubmit, none was graded"
                        .into(),
                ],
                exercises: BTreeMap::new(),
            },
        );
        results
    }

    #[test]
    fn grades_are_one_row_per_student() {
        insta::assert_snapshot!(grades_csv(&results()));
    }

    #[test]
    fn feedback_says_what_each_run_did() {
        let results = results();
        insta::assert_snapshot!(feedback("ann", &results.students["ann"], results.seed));
    }

    #[test]
    fn the_summary_is_a_table() {
        insta::assert_snapshot!(summary(&results()));
    }

    #[test]
    fn an_emulated_grading_says_so_in_every_report_and_shows_skips_and_findings() {
        let mut results = results();
        results.emulated = true;
        let ann = results.students.get_mut("ann").unwrap();
        let vecadd = ann.exercises.get_mut("vecadd-anyN").unwrap();
        // The failed run: a CUDA error, with the emulator's finding.
        let failed = vecadd
            .runs
            .iter_mut()
            .find(|r| !r.verdict.passed())
            .unwrap();
        failed.verdict = Verdict::CudaError {
            name: Some("CUDA_ERROR_LAUNCH_FAILED".into()),
            message: "unspecified launch failure".into(),
        };
        failed.findings = vec![Finding {
            kind: FindingKind::GlobalMemoryConflict,
            line: Some(31),
            text: "global-memory conflict in kernel `vecadd` at global address 0x7f0000000010: \
                   block (0,0,0) thread (0,0,0) wrote it (`st.global.f32` at kernel.cu:31 (PTX \
                   line 70)), then block (1,0,0) thread (0,0,0) wrote it (`st.global.f32` at \
                   kernel.cu:31 (PTX line 70)) with no barrier between; give each thread its \
                   own element or use an atomic"
                .into(),
        }];
        let streams =
            crate::plan::emulated::plan(kernels::catalogue::ExerciseId::StreamsOverlap, 7, true);
        vecadd.runs.extend(streams.skipped.iter().map(|s| {
            let reason = crate::record::outcome::Skip::Emulator {
                too_slow: s.too_slow.into(),
            };
            crate::record::results::skipped("streams-overlap", &s.run, reason)
        }));
        let ann = &results.students["ann"];
        insta::assert_snapshot!(format!(
            "{}\n{}\n{}{}",
            grades_csv(&results),
            summary(&results),
            feedback("ann", ann, results.seed),
            emulated(&results)
        ));
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_name("ann"), "ann");
        assert_eq!(file_name("../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_name("a b/c"), "a_b_c");
    }
}
