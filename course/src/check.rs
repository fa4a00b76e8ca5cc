//! `check`: build the exercise, look at its PTX, run it once at its default
//! size, and say plainly whether it is done on this machine.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use kernels::catalogue::{Exercise, Progress, StepFile};
use kernels::exit_code::ToolExit;
use kernels::protocol::{ErrorKind, Output, parse_output};
use kernels::units::{counted, listed};
use serde_json::Value;

use crate::text::{labelled, wrap};
use crate::workspace::{Checked, Problem, Workspace};

/// What a check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every step written, the PTX as the exercise teaches, and it passes.
    Done,
    NotDone,
}

impl Verdict {
    pub fn exit_code(self) -> ExitCode {
        match self {
            Verdict::Done => ToolExit::Done.into(),
            Verdict::NotDone => ToolExit::Short.into(),
        }
    }
}

/// What `cargo build` produced for the exercise.
struct Built {
    ptx: Option<PathBuf>,
}

/// Checks `exercise` in `workspace`. With `prebuilt`, an exercise binary
/// built elsewhere is checked instead of building and running through cargo
/// (for a GPU machine without Rust; its PTX is read from the binary, which
/// embeds it). With `counters`, or for an exercise with a speed point, the
/// run shows the hardware counters the CPU emulator counts (`--counters`).
pub fn check(
    workspace: &Workspace,
    exercise: &Exercise,
    prebuilt: Option<&Path>,
    counters: bool,
    flags: &[String],
) -> Result<Verdict, Problem> {
    println!("== {}: {}", exercise.name, exercise.title);
    let progress = workspace.progress(exercise);
    let left = &progress.left;
    match left.first() {
        Some(&first) => {
            let step = exercise.step(first).expect("a step of the exercise");
            let list: Vec<String> = left.iter().map(u32::to_string).collect();
            let text = format!(
                "{} of {} left ({}); next, step {first} in {}: {}",
                left.len(),
                counted(exercise.steps.len(), "step", "steps"),
                list.join(", "),
                step.file.path(),
                step.task
            );
            print!("{}", labelled("steps", &text));
        }
        None => println!("steps      all {} written", exercise.steps.len()),
    }

    let ptx = match prebuilt {
        Some(binary) => {
            print!(
                "{}",
                labelled("build", &format!("prebuilt: {}", binary.display()))
            );
            let bytes = std::fs::read(binary).map_err(|err| {
                Problem::BadInput(format!("cannot read {}: {err}", binary.display()))
            })?;
            embedded_ptx(&bytes)
        }
        None => {
            let Some(built) = build(workspace, exercise)? else {
                workspace.record_check(exercise, Checked::DoesNotBuild);
                println!("build      fails: the errors above say where");
                return Ok(conclude(
                    exercise,
                    &progress,
                    false,
                    false,
                    "it does not build",
                ));
            };
            println!("build      ok");
            built.ptx.and_then(|p| std::fs::read_to_string(p).ok())
        }
    };

    let ptx_ok = report_ptx(exercise, ptx.as_deref());
    let speed = exercise.runs.iter().any(|run| run.timed);
    let (passes, why) = run(workspace, exercise, prebuilt, counters || speed, flags)?;
    let verdict = conclude(exercise, &progress, ptx_ok, passes, &why);
    // What `list` and `next` say until the sources change: this verdict.
    workspace.record_check(
        exercise,
        match verdict {
            Verdict::Done => Checked::Done,
            Verdict::NotDone => Checked::NotDone,
        },
    );
    Ok(verdict)
}

/// Builds the exercise; None when the build fails (cargo has shown why).
fn build(workspace: &Workspace, exercise: &Exercise) -> Result<Option<Built>, Problem> {
    let output = Command::new(cargo())
        .current_dir(&workspace.root)
        .args([
            "build",
            "--quiet",
            "--message-format=json-render-diagnostics",
        ])
        .args(["-p", exercise.name])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| Problem::Failed(format!("could not run cargo: {err}")))?;
    if !output.status.success() {
        return Ok(None);
    }
    let mut built = Built { ptx: None };
    let folder = format!("exercises/{}", exercise.name);
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let ours = message["package_id"]
            .as_str()
            .is_some_and(|id| id.contains(&folder));
        if ours && message["reason"] == "build-script-executed" {
            built.ptx = message["out_dir"]
                .as_str()
                .map(|dir| PathBuf::from(dir).join("kernel.ptx"));
        }
    }
    Ok(Some(built))
}

/// Prints which PTX features the kernel has; true if it has them all.
fn report_ptx(exercise: &Exercise, ptx: Option<&str>) -> bool {
    let Some(ptx) = ptx else {
        let text = format!(
            "not found after the build; run `cargo clean -p {}`",
            exercise.name
        );
        print!("{}", labelled("ptx", &text));
        return false;
    };
    let shown = shown(exercise, ptx);
    for (index, (need, lacks)) in exercise.ptx.iter().zip(&shown).enumerate() {
        let label = if index == 0 { "ptx" } else { "" };
        match lacks {
            None => print!("{}", labelled(label, &format!("has {}", need.feature))),
            Some(why) => print!(
                "{}",
                labelled(label, &format!("lacks {}: {why}", need.feature))
            ),
        }
    }
    shown.iter().all(Option::is_none)
}

/// The PTX a binary embeds (`include_str!`, not NUL-terminated): from its
/// `.version` line (or nvcc's comment before it) through the longest run
/// of text after it that reads as PTX.
fn embedded_ptx(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let version = text.find(".version ")?;
    let start = text[..version]
        .rfind("//\n// Generated by NVIDIA")
        .filter(|at| version - at < 400)
        .unwrap_or(version);
    let run = &text[start..];
    let end = run
        .find(|c: char| !(c.is_ascii_graphic() || c.is_ascii_whitespace()))
        .unwrap_or(run.len());
    let run = &run[..end];
    // Other constants may follow it in the binary: the longest prefix that
    // ends at a closing brace and parses.
    let ends = run.match_indices('}').map(|(at, _)| at + 1).rev().take(64);
    let candidates: Vec<&str> = ends.map(|at| &run[..at]).collect();
    candidates
        .into_iter()
        .find(|ptx| ptx::parser::parse(ptx).is_ok())
        .map(str::to_owned)
}

/// For each of the exercise's PTX needs, what the kernel lacks of it (None
/// when it shows it), read as instructions by the `ptx` crate, as the
/// grader reads them: a comment naming an instruction shows nothing.
fn shown(exercise: &Exercise, ptx: &str) -> Vec<Option<String>> {
    let module = match ptx::parser::parse(ptx) {
        Ok(module) => module,
        Err(err) => {
            let why = format!("the PTX could not be read as instructions ({err})");
            return exercise.ptx.iter().map(|_| Some(why.clone())).collect();
        }
    };
    exercise
        .ptx
        .iter()
        .map(|need| need.missing_in(&module))
        .collect()
}

/// Runs the exercise once with `--json` (and `--counters` with
/// `counters`); whether it passed, and if not why.
fn run(
    workspace: &Workspace,
    exercise: &Exercise,
    prebuilt: Option<&Path>,
    counters: bool,
    flags: &[String],
) -> Result<(bool, String), Problem> {
    // Through cargo unless prebuilt, so a runner configured for the
    // workspace applies.
    let mut command = match prebuilt {
        Some(binary) => Command::new(binary),
        None => {
            let mut cargo = Command::new(cargo());
            cargo.args(["run", "--quiet", "-p", exercise.name, "--"]);
            cargo
        }
    };
    if counters {
        command.arg("--counters");
    }
    command.args(flags);
    let output = command
        .current_dir(&workspace.root)
        .arg("--json")
        .output()
        .map_err(|err| {
            Problem::Failed(format!(
                "could not run {exercise}: {err}",
                exercise = exercise.name
            ))
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let parsed = parse_output::<Value, Value>(&stdout);
    show_emulator_finding(&String::from_utf8_lossy(&output.stderr));
    let (passes, why) = match parsed {
        Ok(Output::Report(report)) => {
            let passed = report.check.passed;
            let verdict = if passed {
                "passes:"
            } else {
                "fails its check:"
            };
            print!("{}", labelled("run", verdict));
            // The exercise's own report, as it prints it: aligned, not rewrapped.
            for line in kernels::report::render(&report).lines() {
                println!("           {line}");
            }
            if counters && report.counters.is_none() {
                print!(
                    "{}",
                    labelled(
                        "counters",
                        "none taken: on a GPU, Nsight Compute (`ncu`) measures them; the CPU \
                         emulator counts them (CUDA_COURSE_EMULATOR=1)"
                    )
                );
            }
            let why = format!("its answer is wrong on {}", report.device.name);
            (
                passed,
                if passed {
                    report.device.name.clone()
                } else {
                    why
                },
            )
        }
        Ok(Output::Error(error)) => {
            let message = error.error.message;
            match error.error.kind {
                ErrorKind::NoGpu => {
                    print!(
                        "{}",
                        labelled("run", "needs a GPU, and none is usable here:")
                    );
                    print!("{}", indent(&message));
                    (
                        false,
                        "it has not run: this machine has no usable GPU".to_owned(),
                    )
                }
                ErrorKind::Unfinished => {
                    print!("{}", labelled("run", "stopped at a step not written yet:"));
                    print!("{}", indent(&message));
                    (false, "a step is not written yet".to_owned())
                }
                _ => {
                    print!("{}", labelled("run", "failed:"));
                    print!("{}", indent(&message));
                    (false, "its run failed".to_owned())
                }
            }
        }
        // Exit 2 without a report: the program refused its flags (those
        // after `--`), in one line on stderr that names the flag.
        Err(_)
            if output.status.code() == Some(kernels::exit_code::ToolExit::Stopped as i32)
                && let Some(refusal) = String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .find(|line| line.starts_with("error: ")) =>
        {
            print!("{}", labelled("run", "refused its flags:"));
            print!("{}", indent(refusal.trim_start_matches("error: ")));
            (false, "its flags were refused".to_owned())
        }
        Err(err) => {
            let text = format!("gave no result ({}): {err}", output.status);
            print!("{}", labelled("run", &text));
            print!("{}", indent(&String::from_utf8_lossy(&output.stderr)));
            (false, "its run gave no result".to_owned())
        }
    };
    Ok((passes, why))
}

/// The CPU emulator's first finding in a run's stderr (a race, an
/// out-of-bounds access, a barrier, uninitialised memory, what it cannot
/// run), in its words, whole: what it names (the threads, the `kernel.cu`
/// lines) is what the student needs, and a GPU's error code alone does not
/// say it.
fn emulator_finding(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .find_map(|line| line.strip_prefix(kernels::emulator_output::FINDING_PREFIX))
        .map(kernels::emulator_output::words)
        .filter(|finding| !finding.trim().is_empty())
}

/// Prints the emulator's first finding, if the run had one.
fn show_emulator_finding(stderr: &str) {
    if let Some(finding) = emulator_finding(stderr) {
        print!("{}", labelled("emulator", finding));
    }
}

/// Prints the verdict and returns it. Done: no placeholder left (the program
/// gets past every step), the PTX as the exercise teaches, and a run that
/// passes; a `TODO(step N)` comment left in never counts against it.
fn conclude(
    exercise: &Exercise,
    progress: &Progress,
    ptx_ok: bool,
    passes: bool,
    why: &str,
) -> Verdict {
    println!();
    if progress.placeholders.is_empty() && ptx_ok && passes {
        let text = format!(
            "{} is done. Every step is written, the kernel has what the exercise \
             teaches, and it passes on {why}. (The instructor's grading runs it at \
             more sizes and inputs.)",
            exercise.name
        );
        print!("{}", wrap("done: ", &text));
        if !progress.todo_comments.is_empty() {
            let text = format!(
                "{} still in the code. They do no harm; delete them when you like.",
                todo_comments_of(&progress.todo_comments)
            );
            print!("{}", wrap("", &text));
        }
        return Verdict::Done;
    }
    let left = &progress.left;
    let mut reasons = Vec::new();
    if !left.is_empty() {
        reasons.push(format!("{} left", counted(left.len(), "step", "steps")));
    }
    if !ptx_ok && !why.contains("does not build") {
        reasons.push("the kernel lacks what the exercise teaches".to_owned());
    }
    if !passes {
        reasons.push(why.to_owned());
    }
    print!(
        "{}",
        wrap("not done yet: ", &format!("{}.", reasons.join("; ")))
    );
    // Every placeholder gone, yet the run fails: a kernel step whose TODO
    // comment is still there may not be written (a kernel step has no
    // placeholder to stop the program).
    let kernel_todo: Vec<u32> = progress
        .todo_comments
        .iter()
        .copied()
        .filter(|&n| exercise.step(n).is_some_and(|s| s.file == StepFile::Kernel))
        .collect();
    let next = match left.first() {
        Some(step) => format!(
            "Next: step {step}; `cargo course hint {} {step}` if you are stuck.",
            exercise.name
        ),
        None if why.contains("no usable GPU") => format!(
            "Everything a machine without a GPU can check is checked; run \
             `cargo course check {}` where there is an NVIDIA GPU.",
            exercise.name
        ),
        None if !passes && !kernel_todo.is_empty() => format!(
            "Is src/kernel.cu written? {} still there.",
            todo_comments_of(&kernel_todo)
        ),
        None => String::new(),
    };
    print!("{}", wrap("", &next));
    Verdict::NotDone
}

/// "The TODO comment of step 1 is", "The TODO comments of steps 1 and 2
/// are".
fn todo_comments_of(steps: &[u32]) -> String {
    match steps {
        [one] => format!("The TODO comment of step {one} is"),
        more => format!("The TODO comments of steps {} are", listed(more)),
    }
}

/// Text from the exercise, under the label column.
fn indent(text: &str) -> String {
    wrap("           ", text)
}

/// The cargo that runs this command, or the one on PATH.
fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue;

    #[test]
    fn the_emulators_first_finding_is_found_whole() {
        let stderr = "cuda-course: no NVIDIA GPU in use; kernels run on the CPU emulator\n\
            cuda-course emulator: [shared-memory-race] block=(0,0,0) thread=(1,0,0) \
            address=0x4 line=kernel.cu:35 :: shared-memory race in kernel `dot` at shared address \
            0x4: block (0,0,0) thread (1,0,0) wrote it (`st.shared.f32` at kernel.cu:35 (PTX line \
            80))\n\
            cuda-course emulator: a second one\n";
        let finding = emulator_finding(stderr).unwrap();
        assert!(
            finding.starts_with("shared-memory race in kernel `dot`"),
            "{finding}"
        );
        assert!(finding.contains("kernel.cu:35"), "{finding}");
        assert_eq!(emulator_finding("no finding here\n"), None);
    }

    #[test]
    fn the_ptx_a_binary_embeds_is_found_among_its_other_bytes() {
        let ptx = "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 7.8\n.target sm_75\n\
                   .address_size 64\n\n.visible .entry vecadd(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
        let mut binary = b"\x7fELF\x02\x01\x00junk{}".to_vec();
        binary.extend(ptx.as_bytes());
        // Another constant right after it, braces included.
        binary.extend(b"called `Option::unwrap()` on a `None` value {x}\x00\xff");
        assert_eq!(embedded_ptx(&binary).as_deref(), Some(ptx.trim_end()));
        assert_eq!(embedded_ptx(b"\x7fELF no ptx here"), None);
    }

    #[test]
    fn a_comment_naming_an_instruction_does_not_show_it() {
        let vecadd = catalogue::find("vecadd-anyN").unwrap();
        let entry = |body: &str| {
            format!(
                ".version 7.8\n.target sm_75\n.address_size 64\n\n.visible .entry vecadd(\n\
                 \t.param .u64 vecadd_param_0\n)\n{{\n\t.reg .b32 %r<4>;\n{body}\tret;\n}}\n"
            )
        };
        // What `asm("// %nctaid.x")` leaves in the PTX: the text is there.
        let comment = entry("\t// begin inline asm\n\t// %nctaid.x\n\t// end inline asm\n");
        let lacks = shown(vecadd, &comment);
        assert!(
            lacks[0]
                .as_deref()
                .is_some_and(|why| why.contains("never reads gridDim.x")),
            "{lacks:?}"
        );
        assert_eq!(shown(vecadd, &entry("\tmov.u32 %r1, %nctaid.x;\n")), [None]);
    }

    /// vecadd-anyN's progress with these placeholders left, every TODO
    /// comment kept.
    fn vecadd(placeholders: &[u32]) -> Progress {
        Progress {
            left: placeholders.to_vec(),
            placeholders: placeholders.to_vec(),
            todo_comments: (1..=6).collect(),
        }
    }

    #[test]
    fn done_needs_every_placeholder_gone_the_ptx_and_a_pass() {
        let exercise = catalogue::find("vecadd-anyN").unwrap();
        assert_eq!(
            conclude(exercise, &vecadd(&[]), true, true, "H100"),
            Verdict::Done
        );
        assert_eq!(
            conclude(exercise, &vecadd(&[6]), true, true, "H100"),
            Verdict::NotDone
        );
        assert_eq!(
            conclude(exercise, &vecadd(&[]), false, true, "H100"),
            Verdict::NotDone
        );
        let no_gpu = "it has not run: this machine has no usable GPU";
        assert_eq!(
            conclude(exercise, &vecadd(&[]), true, false, no_gpu),
            Verdict::NotDone
        );
    }

    #[test]
    fn todo_comments_alone_never_keep_an_exercise_from_done() {
        let exercise = catalogue::find("vecadd-anyN").unwrap();
        let commented = vecadd(&[]);
        assert_eq!(commented.todo_comments.len(), 6);
        assert_eq!(
            conclude(exercise, &commented, true, true, "H100"),
            Verdict::Done
        );
    }
}
