//! `check`: build the exercise, look at its PTX, run it once at its default
//! size, and say plainly whether it is done on this machine.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use kernels::catalogue::{self, Exercise};
use kernels::protocol::{ErrorKind, Output, parse_output};
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
            Verdict::Done => ExitCode::SUCCESS,
            Verdict::NotDone => ExitCode::FAILURE,
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
/// embeds it).
pub fn check(
    workspace: &Workspace,
    exercise: &Exercise,
    prebuilt: Option<&Path>,
) -> Result<Verdict, Problem> {
    println!("== {}: {}", exercise.name, exercise.title);
    let left = workspace.steps_left(exercise);
    match left.first() {
        Some(&first) => {
            let step = exercise.step(first).expect("a step of the exercise");
            let list: Vec<String> = left.iter().map(u32::to_string).collect();
            let text = format!(
                "{} of {} left ({}); next, step {first} in {}: {}",
                left.len(),
                exercise.steps.len(),
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
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        None => {
            let Some(built) = build(workspace, exercise)? else {
                workspace.record_check(exercise, Checked::DoesNotBuild);
                println!("build      fails: the errors above say where");
                return Ok(conclude(exercise, &left, false, false, "it does not build"));
            };
            println!("build      ok");
            built.ptx.and_then(|p| std::fs::read_to_string(p).ok())
        }
    };

    let ptx_ok = report_ptx(exercise, ptx.as_deref());
    let (passes, why) = run(workspace, exercise, prebuilt)?;
    workspace.record_check(
        exercise,
        if passes {
            Checked::Passes
        } else {
            Checked::Builds
        },
    );
    Ok(conclude(exercise, &left, ptx_ok, passes, &why))
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
    let mut all = true;
    for (index, need) in exercise.ptx.iter().enumerate() {
        let label = if index == 0 { "ptx" } else { "" };
        match catalogue::check_need(need, ptx) {
            Ok(()) => print!("{}", labelled(label, &format!("has {}", need.feature))),
            Err(why) => {
                all = false;
                print!(
                    "{}",
                    labelled(label, &format!("lacks {}: {why}", need.feature))
                );
            }
        }
    }
    all
}

/// Runs the exercise once with `--json`; whether it passed, and if not why.
fn run(
    workspace: &Workspace,
    exercise: &Exercise,
    prebuilt: Option<&Path>,
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
        Err(err) => {
            let text = format!("gave no result ({}): {err}", output.status);
            print!("{}", labelled("run", &text));
            print!("{}", indent(&String::from_utf8_lossy(&output.stderr)));
            (false, "its run gave no result".to_owned())
        }
    };
    Ok((passes, why))
}

/// What the CPU emulator prints before each finding on stderr.
const EMULATOR_FINDING: &str = "cuda-course emulator: ";

/// The CPU emulator's first finding in a run's stderr (a race, an
/// out-of-bounds access, a barrier, uninitialised memory, what it cannot
/// run), whole: what it names (the threads, the `kernel.cu` lines) is
/// what the student needs, and a GPU's error code alone does not say it.
fn emulator_finding(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .find_map(|line| line.strip_prefix(EMULATOR_FINDING))
        .filter(|finding| !finding.trim().is_empty())
}

/// Prints the emulator's first finding, if the run had one.
fn show_emulator_finding(stderr: &str) {
    if let Some(finding) = emulator_finding(stderr) {
        print!("{}", labelled("emulator", finding));
    }
}

/// Prints the verdict line and returns it.
fn conclude(exercise: &Exercise, left: &[u32], ptx_ok: bool, passes: bool, why: &str) -> Verdict {
    println!();
    if left.is_empty() && ptx_ok && passes {
        let text = format!(
            "{} is done. Every step is written, the kernel has what the exercise \
             teaches, and it passes on {why}. (The instructor's grading runs it at \
             more sizes and inputs.)",
            exercise.name
        );
        print!("{}", wrap("done: ", &text));
        return Verdict::Done;
    }
    let mut reasons = Vec::new();
    if !left.is_empty() {
        reasons.push(format!("{} steps are left", left.len()));
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
        None => String::new(),
    };
    print!("{}", wrap("", &next));
    Verdict::NotDone
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

    #[test]
    fn the_emulators_first_finding_is_found_whole() {
        let stderr = "cuda-course: no NVIDIA GPU in use; kernels run on the CPU emulator\n\
            cuda-course emulator: shared-memory race in kernel `dot` at shared address 0x4: \
            block (0,0,0) thread (1,0,0) wrote it (`st.shared.f32` at kernel.cu:35 (PTX line 80))\n\
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
    fn done_needs_every_step_the_ptx_and_a_pass() {
        let vecadd = catalogue::find("vecadd-anyN").unwrap();
        assert_eq!(conclude(vecadd, &[], true, true, "H100"), Verdict::Done);
        assert_eq!(conclude(vecadd, &[6], true, true, "H100"), Verdict::NotDone);
        assert_eq!(conclude(vecadd, &[], false, true, "H100"), Verdict::NotDone);
        let no_gpu = "it has not run: this machine has no usable GPU";
        assert_eq!(conclude(vecadd, &[], true, false, no_gpu), Verdict::NotDone);
    }
}
