//! Test plans capped for the CPU emulator (`--emulate`): each run at sizes
//! a CPU runs in seconds with what it is about kept (each family's `cap`),
//! and the runs no such size keeps left out, as the catalogue says, each
//! with the reason.

use kernels::catalogue::{Emulated, ExerciseId};

use crate::plan::exercise;
use crate::plan::runs::Run;

/// An exercise's plan as graded: the runs to make, and the runs left out
/// (on the emulator, those that need a GPU's speed).
pub struct Planned {
    pub runs: Vec<Run>,
    pub skipped: Vec<Skipped>,
}

/// A planned run left out, and the catalogue's reason: no points either
/// way.
pub struct Skipped {
    pub run: Run,
    pub too_slow: &'static str,
}

/// The runs of `id` drawn from `seed`, capped for the emulator when
/// `emulated`.
pub fn plan(id: ExerciseId, seed: u64, emulated: bool) -> Planned {
    let mut planned = Planned {
        runs: vec![],
        skipped: vec![],
    };
    for mut run in exercise::plan(id, seed) {
        let on_emulator = id.exercise().run(run.tag).map(|spec| spec.emulated);
        match on_emulator {
            _ if !emulated => planned.runs.push(run),
            Some(Emulated::TooSlow(too_slow)) => planned.skipped.push(Skipped { run, too_slow }),
            Some(Emulated::Capped) | None => {
                run.params.cap();
                planned.runs.push(run);
            }
        }
    }
    planned
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue::{ALL_IDS, RunTag as Tag};

    /// The GPU plan's runs beside the emulated ones, skipped runs left out.
    fn pairs(id: ExerciseId, seed: u64) -> Vec<(Run, Run)> {
        let planned = plan(id, seed, true);
        let kept: Vec<Run> = exercise::plan(id, seed)
            .into_iter()
            .filter(|r| !planned.skipped.iter().any(|s| s.run.tag == r.tag))
            .collect();
        assert_eq!(kept.len(), planned.runs.len(), "{id}");
        kept.into_iter().zip(planned.runs).collect()
    }

    #[test]
    fn emulated_runs_keep_their_flags_blocks_parity_and_grids_smaller_than_n() {
        for seed in 0..200 {
            for id in ALL_IDS {
                for (g, c) in pairs(id, seed) {
                    assert_eq!(c.arg("runs"), Some(1), "{c:?}");
                    assert_eq!((g.tag, g.points), (c.tag, c.points));
                    for flag in ["threads", "block", "tile", "seed", "streams", "chunks"] {
                        assert_eq!(g.arg(flag), c.arg(flag), "{flag}: {c:?}");
                    }
                    if let (Some(gn), Some(cn)) = (g.arg("n"), c.arg("n")) {
                        assert_eq!(gn % 2, cn % 2, "parity: {g:?} {c:?}");
                        assert!(cn <= gn && cn < 1 << 22, "{c:?}");
                        if let Some(b) = c.arg("blocks") {
                            let t = c
                                .arg("threads")
                                .unwrap_or(kernels::vecadd::DEFAULT_THREADS.into());
                            // Smaller than n stays smaller, even at 4
                            // elements a thread; vecadd's grid that loops
                            // twice over n in float4s still does.
                            assert_eq!(b * t < gn, 4 * b * t < cn, "{c:?}");
                            if id == ExerciseId::VecaddAnyN {
                                assert!(8 * b * t > gn || 8 * b * t <= cn, "{g:?} {c:?}");
                            }
                        }
                        if g.about().contains(&gn.to_string()) {
                            assert!(c.about().contains(&cn.to_string()), "{}", c.about());
                        }
                    }
                    if let (Some(gw), Some(cw)) = (g.arg("width"), c.arg("width")) {
                        assert!(cw <= 256, "{c:?}");
                        for edge in [16, 32] {
                            // Partial tiles stay partial; below a block stays below.
                            assert!(gw % edge == 0 || cw % edge != 0, "{g:?} {c:?}");
                            assert_eq!(gw < edge, cw < edge);
                        }
                        assert!(c.about().contains(&cw.to_string()), "{}", c.about());
                    }
                    // The text flags are the same strings.
                    let texts = |r: &Run| -> Vec<String> {
                        let args = r.args();
                        args.windows(2)
                            .filter(|w| ["--a", "--b", "--pattern"].contains(&w[0].as_str()))
                            .map(|w| w.join(" "))
                            .collect()
                    };
                    assert_eq!(texts(&g), texts(&c));
                }
            }
        }
    }

    #[test]
    fn only_the_streams_run_past_the_grid_and_those_above_2_31_are_skipped_and_said_to_be() {
        for seed in 0..50 {
            for id in ALL_IDS {
                let planned = plan(id, seed, true);
                let skipped: Vec<Tag> = planned.skipped.iter().map(|s| s.run.tag).collect();
                let want: Vec<Tag> = exercise::plan(id, seed)
                    .iter()
                    .filter(|r| r.memory > 0 || r.tag == Tag::ChunksPastTheGrid)
                    .map(|r| r.tag)
                    .collect();
                assert_eq!(skipped, want, "{id}");
                for skipped in &planned.skipped {
                    assert!(skipped.too_slow.contains("minutes"), "{}", skipped.too_slow);
                }
            }
        }
    }

    #[test]
    fn a_gpu_plan_is_left_as_it_is() {
        for id in ALL_IDS {
            let planned = plan(id, 3, false);
            assert_eq!(planned.runs, exercise::plan(id, 3));
            assert!(planned.skipped.is_empty());
        }
    }
}
