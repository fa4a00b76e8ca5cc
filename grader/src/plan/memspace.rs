//! memspace-timing's grading: its runs (a small grid of per-thread reads;
//! the default grid of the largest blocks, uniform reads) and the recheck
//! of the checksum of every sum copied back, from the run's parameters.

use kernels::catalogue::RunTag as Tag;
use kernels::memspace::{self, Pattern};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::disagreement::{self, Disagreement};
use crate::plan::draw::Flags;

/// A run's arguments; the binary's defaults where None.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Params {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
    pub threads: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Pattern>,
    pub runs: u32,
}

impl Params {
    pub fn flags(&self) -> Flags {
        Flags::default()
            .num_if("blocks", self.blocks)
            .num("threads", self.threads)
            .text_if("pattern", self.pattern)
            .num("runs", self.runs)
    }

    /// What the run is about, for the feedback; None for a tag that is not
    /// memspace-timing's.
    pub fn about(&self, tag: Tag) -> Option<String> {
        let (blocks, threads) = (self.blocks.unwrap_or(0), self.threads);
        Some(match tag {
            Tag::PerThreadReads => format!("{blocks} blocks of {threads}, per-thread reads"),
            Tag::UniformReads => {
                format!("the default grid of {threads}-thread blocks (the largest), uniform reads")
            }
            _ => return None,
        })
    }

    /// The run as racecheck makes it, where that is not the run itself: at
    /// most [`RACECHECKED_BLOCKS`] of its blocks. racecheck looks for
    /// hazards on shared memory, which each block has its own, and every
    /// block here does the same work (4096 reads a thread, whatever the
    /// grid), so more blocks only repeat the same accesses. They cost: the
    /// default grid of 1024-thread blocks took racecheck 19.4 s and 10
    /// cores alone, 85% of a solution class's GPU time and half its CPU
    /// time (an H200, 2026-11-28, `bench/runs/2026-11-28-h200-sampled`). The other
    /// tools, which look at global memory (an index past the end of the
    /// grid's sums), keep the whole grid. With the cut run, its blocks.
    pub fn racechecked(&self) -> Option<(Params, u32)> {
        let blocks = self
            .blocks
            .map_or(RACECHECKED_BLOCKS, |b| b.min(RACECHECKED_BLOCKS));
        (self.blocks != Some(blocks)).then(|| {
            let cut = Params {
                blocks: Some(blocks),
                ..self.clone()
            };
            (cut, blocks)
        })
    }

    /// At sizes the CPU emulator runs in seconds: 4096 reads a thread in
    /// each of four kernels, so a few blocks.
    pub fn cap(&mut self) {
        self.blocks = self.blocks.map(|b| 2 + b % 3);
        self.runs = 1;
    }
}

/// The blocks racecheck goes over at most ([`Params::racechecked`]): the
/// first, one in the middle and the last.
pub const RACECHECKED_BLOCKS: u32 = 3;

/// The runs, drawn from `rng`; the smaller grid first, for the sanitizers.
pub fn plan(rng: &mut fastrand::Rng) -> Vec<(Tag, Params)> {
    let blocks = rng.u32(3..50);
    // No power of two, whole warps, at most 512 threads.
    let threads: u32 = [96, 160, 224, 480][rng.usize(..4)];
    vec![
        (
            Tag::PerThreadReads,
            Params {
                blocks: Some(blocks),
                threads,
                pattern: Some(Pattern::PerThread),
                runs: 2,
            },
        ),
        (
            Tag::UniformReads,
            Params {
                blocks: None,
                threads: 1024,
                pattern: None,
                runs: 2,
            },
        ),
    ]
}

/// Every sum of every space copied back, by its checksum.
pub fn recheck(report: &Value) -> Result<(), Disagreement> {
    let p: memspace::Parameters = disagreement::parameters(report)?;
    disagreement::compared(report, 4 * p.grid_threads())?;
    disagreement::values(report, memspace::expected_checksum(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racecheck_goes_over_at_most_three_blocks_of_the_run_s_shape() {
        let run = |blocks| Params {
            blocks,
            threads: 480,
            pattern: Some(Pattern::PerThread),
            runs: 2,
        };
        // The default grid, and any grid above three blocks: three.
        for blocks in [None, Some(4), Some(49)] {
            let cut = run(blocks).racechecked().unwrap();
            assert_eq!(
                cut,
                (
                    Params {
                        blocks: Some(3),
                        ..run(blocks)
                    },
                    3
                )
            );
        }
        // A grid of three blocks or fewer is the run itself.
        for blocks in [Some(1), Some(3)] {
            assert_eq!(run(blocks).racechecked(), None);
        }
    }
}
