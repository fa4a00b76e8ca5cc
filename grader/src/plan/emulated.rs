//! Test plans capped for the CPU emulator (`--emulate`): sizes a CPU runs
//! in seconds with every edge case kept, and the runs no size can keep
//! (those that need a GPU's speed) left out, each with the reason.

use serde_json::Value;

use crate::plan::runs::{self as plan, Run};

/// An exercise's plan as graded: the runs to make, and the runs left out
/// (on the emulator, those that need a GPU's speed).
pub struct Planned {
    pub runs: Vec<Run>,
    pub skipped: Vec<Skipped>,
}

/// A planned run left out, and why: no points either way.
pub struct Skipped {
    pub run: Run,
    pub why: &'static str,
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
            planned.skipped.push(Skipped { run, why });
        } else {
            planned.runs.push(cap(exercise, run));
        }
    }
    planned
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue::EXERCISES;

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
            .filter(|r| !planned.skipped.iter().any(|s| s.run.about == r.about))
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
                    assert!(
                        skipped
                            .run
                            .about
                            .contains("only a grid-stride loop covers it")
                            || skipped.run.about.contains("above 2^31"),
                        "{}",
                        skipped.run.about
                    );
                    assert!(skipped.why.contains("skipped on the CPU emulator"));
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
}
