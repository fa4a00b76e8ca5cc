//! Grading on the CPU emulator (`--emulate`): whether an NVIDIA GPU is
//! usable here (as `scripts/cuda-runner` decides it), where a bundle keeps
//! the emulator's `libcuda.so.1`, the test plans capped to sizes a CPU runs
//! in seconds with every edge case kept, and the emulator's findings (races,
//! out-of-bounds accesses, barriers) picked out of a run's stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::bundle::Bundle;
use crate::emulator_library;
use crate::plan::{self, Run};
use crate::results;
use crate::verdict::Verdict;

/// The environment variable naming the nvidia-smi binary to ask (tests
/// name a missing one to stand for a machine without a GPU).
pub const NVIDIA_SMI_ENV: &str = "GRADER_NVIDIA_SMI";
/// The bundle's folder holding the emulator: its only file is
/// [`LIBRARY_NAME`], so the folder goes first on a run's library path.
pub const LIBRARY_DIR: &str = "emulator";
/// The soname the exercise binaries load the driver by.
pub const LIBRARY_NAME: &str = "libcuda.so.1";
/// How the emulator starts each line it prints on stderr.
pub const FINDING_PREFIX: &str = "cuda-course emulator: ";

/// Whether `nvidia-smi -L` lists a GPU: the test `scripts/cuda-runner` makes
/// ($GRADER_NVIDIA_SMI names another nvidia-smi).
pub fn gpu_usable() -> bool {
    let smi = std::env::var_os(NVIDIA_SMI_ENV).unwrap_or_else(|| "nvidia-smi".into());
    lists_a_gpu(Path::new(&smi))
}

fn lists_a_gpu(smi: &Path) -> bool {
    Command::new(smi)
        .arg("-L")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.starts_with("GPU "))
        })
}

/// Whether to grade on the emulator: `--emulate`, `--no-emulate`, or (with
/// neither) whenever no GPU is usable. `--no-emulate` without a GPU is an
/// error that says what to do, so nobody is graded zero for want of one.
pub fn choose(emulate: bool, no_emulate: bool) -> Result<bool, String> {
    decide(emulate, no_emulate, gpu_usable)
}

fn decide(emulate: bool, no_emulate: bool, gpu: impl Fn() -> bool) -> Result<bool, String> {
    if emulate {
        return Ok(true);
    }
    let gpu = gpu();
    if no_emulate && !gpu {
        return Err(
            "--no-emulate: no NVIDIA GPU is usable here (`nvidia-smi -L` lists none), so every \
             run would fail; grade on a machine with a GPU, or drop --no-emulate to grade on the \
             CPU emulator"
                .to_owned(),
        );
    }
    Ok(!gpu)
}

/// The emulator library's place in a bundle, relative to it.
pub fn library_in_bundle() -> PathBuf {
    Path::new(LIBRARY_DIR).join(LIBRARY_NAME)
}

/// An exercise's plan as graded: the runs to make, and the records of the
/// runs left out (on the emulator, those that need a GPU's speed).
pub struct Planned {
    pub runs: Vec<Run>,
    pub skipped: Vec<results::Run>,
}

/// The runs of `exercise` drawn from `seed`, capped for the emulator when
/// `emulated`.
pub fn plan(exercise: &str, seed: u64, emulated: bool) -> Planned {
    let mut planned = Planned {
        runs: vec![],
        skipped: vec![],
    };
    for run in plan::plan(exercise, seed) {
        if !emulated {
            planned.runs.push(run);
        } else if let Some(why) = too_slow(exercise, &run) {
            planned.skipped.push(skipped(exercise, &run, why));
        } else {
            planned.runs.push(cap(exercise, run));
        }
    }
    planned
}

/// The verdict kind of a run left out on the emulator.
pub const SKIPPED: &str = "skipped";

/// Why a run cannot be made on the emulator at any size that keeps what it
/// is about; None when it can.
fn too_slow(exercise: &str, run: &Run) -> Option<&'static str> {
    if run.memory > 0 {
        return Some(
            "skipped on the CPU emulator, no points either way: above 2^31 elements a CPU \
             takes minutes; grading on a GPU runs it",
        );
    }
    let per_chunk = value(run, "n")? / value(run, "chunks").unwrap_or(1);
    (exercise == "streams-overlap" && per_chunk > STREAMS_CHUNK_LIMIT).then_some(
        "skipped on the CPU emulator, no points either way: chunks this long take minutes \
         on a CPU; grading on a GPU runs it",
    )
}

/// The longest streams-overlap chunk the emulator runs: a grid-stride
/// chunk needs more than 65535 blocks of at least 256 threads.
const STREAMS_CHUNK_LIMIT: u64 = 65_535 * 256;

/// The record of a run left out: no points either way, its own kind.
pub fn skipped(exercise: &str, run: &Run, why: &str) -> results::Run {
    let mut command = vec![exercise.to_owned()];
    command.extend(run.args.iter().cloned());
    results::Run {
        about: run.about.clone(),
        command,
        exit_code: None,
        duration_ms: 0.0,
        verdict: results::Verdict {
            passed: false,
            kind: SKIPPED.to_owned(),
            message: why.to_owned(),
        },
        report: None,
        points: 0,
        max_points: 0,
        kernel_ptx: None,
        trace_calls: None,
    }
}

/// One run at sizes a CPU runs in seconds. Each size keeps the property
/// the run is about: odd stays odd, a grid smaller than n stays smaller
/// (the capped n still exceeds the largest grid a plan draws, 40 blocks of
/// 1024, 4 elements a thread), widths keep partial tiles, blocks keep their
/// size (the largest among them). Times are not judged here: one timed
/// launch.
fn cap(exercise: &str, mut run: Run) -> Run {
    set(&mut run, "runs", 1);
    match exercise {
        "vecadd-anyN" | "dot-gm" | "dot-sm" | "dot-atomic" | "streams-overlap" => {
            change(&mut run, "n", shrink_n);
        }
        "matmul-naive" | "matmul-tiled" => {
            change(&mut run, "width", |w| match w {
                // Below a block, and partial tiles of 16 and 32: kept.
                ..64 => w,
                // 33 to 95, odd: several 32-wide tiles, the last partial.
                64..1024 => 33 + (w % 32) * 2,
                // The large width of full tiles: still every tile full.
                _ => 256,
            });
        }
        _ => {}
    }
    match exercise {
        // 4096 reads a thread in each of four kernels: a few blocks.
        "memspace-timing" => change(&mut run, "blocks", |b| 2 + b % 3),
        // Steps of arithmetic per element: a few, not hundreds.
        "streams-overlap" => change(&mut run, "work", |w| 2 + w % 8),
        _ => {}
    }
    run
}

/// n at most about a million: small ones kept, larger ones into
/// [2^18, 2^19) or [2^19, 2^20) by their remainder, so parity and order
/// are kept and the grid (at most 40 × 1024 threads, 4 elements each) is
/// still smaller than n.
fn shrink_n(n: u64) -> u64 {
    match n {
        ..65_536 => n,
        65_536..16_777_216 => (1 << 18) + n % (1 << 18),
        _ => (1 << 19) + n % (1 << 19),
    }
}

/// Applies `to` to the value of `--flag`, in the arguments, the expected
/// parameters and the description.
fn change(run: &mut Run, flag: &str, to: impl Fn(u64) -> u64) {
    if let Some(old) = value(run, flag) {
        let new = to(old);
        if new != old {
            run.about = replace_number(&run.about, old, new);
            set(run, flag, new);
        }
    }
}

fn value(run: &Run, flag: &str) -> Option<u64> {
    let at = run.args.iter().position(|a| *a == format!("--{flag}"))?;
    run.args.get(at + 1)?.parse().ok()
}

fn set(run: &mut Run, flag: &str, new: u64) {
    if let Some(at) = run.args.iter().position(|a| *a == format!("--{flag}")) {
        run.args[at + 1] = new.to_string();
    }
    for (key, value) in &mut run.expect {
        // matmul-tiled's --tile is echoed as `block`; only sizes change here.
        if *key == flag {
            *value = Value::from(new);
        }
    }
}

/// `text` with every whole number `old` written as `new`.
fn replace_number(text: &str, old: u64, new: u64) -> String {
    let mut out = String::with_capacity(text.len());
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        if digits.parse::<u64>().ok() == Some(old) {
            out.push_str(&new.to_string());
        } else {
            out.push_str(digits);
        }
        digits.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            flush(&mut digits, &mut out);
            out.push(c);
        }
    }
    flush(&mut digits, &mut out);
    out
}

/// The emulator library runs load when `emulate`, checked against the
/// bundle's record of it; None on a GPU.
pub fn driver(
    bundle_dir: &Path,
    bundle: &Bundle,
    emulate: bool,
) -> Result<Option<PathBuf>, String> {
    if !emulate {
        return Ok(None);
    }
    emulator_library::verified(bundle_dir, bundle.emulator.as_ref()).map(Some)
}

/// Why `--student` cannot regrade some students on another device than
/// the rest were graded on.
pub fn mixed(results: &Path, was_emulated: bool) -> String {
    let (was, now) = if was_emulated {
        ("on the CPU emulator", "on a GPU")
    } else {
        ("on a GPU", "on the CPU emulator")
    };
    format!(
        "--student: {} was graded {was}, this run would be {now}; regrade with the same \
         device (--emulate or --no-emulate), or grade the whole class again",
        results.display()
    )
}

/// A run's verdict with the emulator's findings added: they fail the run
/// (the emulator failed the launch), and the student reads each one with
/// its block, thread, address and `kernel.cu` line, as they would a
/// sanitizer's.
pub fn with_findings(verdict: Verdict, stderr: &str) -> Verdict {
    let found = findings(stderr);
    if found.is_empty() {
        return verdict;
    }
    let said = format!("the CPU emulator found: {}", found.join("\n"));
    match verdict {
        Verdict::CudaError { name, message } => Verdict::CudaError {
            name,
            message: format!("{message}\n{said}"),
        },
        Verdict::Failed { summary, hint } => Verdict::Failed {
            summary: format!("{summary}\n{said}"),
            hint,
        },
        // A launch the emulator failed, and a report that passed anyway:
        // the host code did not check the launch.
        Verdict::Passed => Verdict::Failed {
            summary: said,
            hint: Some("check every launch's result: synchronize and propagate its error".into()),
        },
        other => other,
    }
}

/// What the emulator said about a run on stderr: each finding (a race, an
/// out-of-bounds or misaligned access, a barrier, an unsupported
/// instruction) with its block, thread, address and `kernel.cu` line.
pub fn findings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(FINDING_PREFIX))
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::EXERCISES;

    fn arg(run: &Run, flag: &str) -> Option<String> {
        let at = run.args.iter().position(|a| *a == format!("--{flag}"))?;
        run.args.get(at + 1).cloned()
    }

    fn num(run: &Run, flag: &str) -> Option<u64> {
        value(run, flag)
    }

    #[test]
    fn a_number_is_replaced_only_where_it_is_whole() {
        assert_eq!(
            replace_number("n = 1001, not 10011 or 1001.5", 1001, 7),
            "n = 7, not 10011 or 7.5"
        );
        assert_eq!(replace_number("W = 1024", 1024, 256), "W = 256");
    }

    /// The GPU plan's runs beside the emulated ones, skipped runs left out.
    fn pairs(exercise: &str, seed: u64) -> Vec<(Run, Run)> {
        let planned = plan(exercise, seed, true);
        let kept: Vec<Run> = plan::plan(exercise, seed)
            .into_iter()
            .filter(|r| !planned.skipped.iter().any(|s| s.about == r.about))
            .collect();
        assert_eq!(kept.len(), planned.runs.len(), "{exercise}");
        kept.into_iter().zip(planned.runs).collect()
    }

    #[test]
    fn emulated_runs_keep_their_flags_blocks_parity_and_grids_smaller_than_n() {
        for seed in 0..200 {
            for exercise in EXERCISES {
                for (g, c) in pairs(exercise.name, seed) {
                    assert_eq!(num(&c, "runs"), Some(1), "{c:?}");
                    assert_eq!(g.points, c.points);
                    for flag in [
                        "threads", "block", "tile", "seed", "a", "b", "streams", "chunks",
                    ] {
                        assert_eq!(arg(&g, flag), arg(&c, flag), "{flag}: {c:?}");
                    }
                    if let (Some(gn), Some(cn)) = (num(&g, "n"), num(&c, "n")) {
                        assert_eq!(gn % 2, cn % 2, "parity: {g:?} {c:?}");
                        assert!(cn <= gn && cn < 1 << 20, "{c:?}");
                        if let (Some(t), Some(b)) = (num(&c, "threads"), num(&c, "blocks")) {
                            // Smaller than n stays smaller, even at 4
                            // elements a thread.
                            assert_eq!(b * t < gn, 4 * b * t < cn, "{c:?}");
                        }
                        if g.about.contains(&gn.to_string()) {
                            assert!(c.about.contains(&cn.to_string()), "{}", c.about);
                        }
                    }
                    if let (Some(gw), Some(cw)) = (num(&g, "width"), num(&c, "width")) {
                        assert!(cw <= 256, "{c:?}");
                        for edge in [16, 32] {
                            // Partial tiles stay partial; below a block stays below.
                            assert!(gw % edge == 0 || cw % edge != 0, "{g:?} {c:?}");
                            assert_eq!(gw < edge, cw < edge);
                        }
                        assert!(c.about.contains(&cw.to_string()), "{}", c.about);
                    }
                    // What the report must echo is what is asked.
                    for (key, want) in &c.expect {
                        let flag = match (*key, exercise.name) {
                            ("block", "matmul-tiled") => "tile",
                            _ => key,
                        };
                        let want = match want {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        assert_eq!(arg(&c, flag), Some(want), "{key}: {c:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn only_the_streams_run_beyond_65535_blocks_and_those_above_2_31_are_skipped_and_said_to_be() {
        for seed in 0..50 {
            for exercise in EXERCISES {
                let planned = plan(exercise.name, seed, true);
                let want = usize::from(matches!(
                    exercise.name,
                    "streams-overlap" | "vecadd-anyN" | "dot-gm"
                ));
                assert_eq!(planned.skipped.len(), want, "{}", exercise.name);
                for skipped in &planned.skipped {
                    assert_eq!(skipped.verdict.kind, SKIPPED);
                    assert!(!skipped.verdict.passed && skipped.max_points == 0);
                    assert!(
                        skipped.about.contains("only a grid-stride loop covers it")
                            || skipped.about.contains("above 2^31"),
                        "{}",
                        skipped.about
                    );
                    assert!(
                        skipped
                            .verdict
                            .message
                            .contains("skipped on the CPU emulator")
                    );
                }
            }
        }
    }

    #[test]
    fn a_gpu_plan_is_left_as_it_is() {
        let planned = plan("streams-overlap", 3, false);
        assert_eq!(planned.runs, plan::plan("streams-overlap", 3));
        assert!(planned.skipped.is_empty());
    }

    #[test]
    fn findings_are_the_emulator_s_lines_only() {
        let stderr = "warning: something\n\
            cuda-course emulator: shared-memory race in kernel `dot` at shared address 0x10: \
            block (0,0,0) thread (1,0,0) read it (`ld.shared.f32` at kernel.cu:41)\n\
            cuda-course: no NVIDIA GPU in use\n";
        let found = findings(stderr);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("shared-memory race") && found[0].ends_with("kernel.cu:41)"));
        assert!(findings("").is_empty());
    }

    #[test]
    fn without_a_gpu_the_default_is_the_emulator_and_no_emulate_says_what_to_do() {
        assert!(!lists_a_gpu(Path::new("/nonexistent/nvidia-smi")));
        assert_eq!(decide(false, false, || false), Ok(true));
        assert_eq!(decide(false, false, || true), Ok(false));
        assert_eq!(decide(true, false, || true), Ok(true));
        assert_eq!(decide(false, true, || true), Ok(false));
        let err = decide(false, true, || false).unwrap_err();
        assert!(
            err.contains("no NVIDIA GPU") && err.contains("drop --no-emulate"),
            "{err}"
        );
    }
}
