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

    /// At sizes the CPU emulator runs in seconds: 4096 reads a thread in
    /// each of four kernels, so a few blocks.
    pub fn cap(&mut self) {
        self.blocks = self.blocks.map(|b| 2 + b % 3);
        self.runs = 1;
    }
}

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
