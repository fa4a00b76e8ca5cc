//! streams-overlap's grading: its runs (uneven chunks over three streams;
//! chunks longer than 65535 blocks of 1024 threads cover, whose copies and
//! kernels must overlap), the recheck of the checksum of both runs'
//! outputs, and what the trace must show beyond a launch and a copy back.

use kernels::catalogue::RunTag as Tag;
use kernels::streams;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::demands::Demand;
use crate::plan::disagreement::{self, Disagreement};
use crate::plan::draw::{self, Flags};

/// A run's arguments.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Params {
    pub n: u64,
    pub streams: u32,
    pub chunks: u32,
    pub work: u32,
    pub runs: u32,
}

impl Params {
    pub fn flags(&self) -> Flags {
        Flags::default()
            .num("n", self.n)
            .num("streams", self.streams)
            .num("chunks", self.chunks)
            .num("work", self.work)
            .num("runs", self.runs)
    }

    /// What the run is about, for the feedback; None for a tag that is not
    /// streams-overlap's.
    pub fn about(&self, tag: Tag) -> Option<String> {
        let Params {
            n,
            streams,
            chunks,
            work,
            ..
        } = self;
        Some(match tag {
            Tag::UnevenChunks => {
                format!("n = {n} in {chunks} uneven chunks over {streams} streams, work {work}")
            }
            Tag::ChunksPastTheGrid => format!(
                "n = {n} in {chunks} chunks over {streams} streams: each chunk needs more than \
                 65535 blocks even of 1024 threads, so only a grid-stride loop covers it; the \
                 copies and kernels must overlap"
            ),
            _ => return None,
        })
    }

    /// At sizes the CPU emulator runs in seconds: steps of arithmetic per
    /// element, a few, not hundreds.
    pub fn cap(&mut self) {
        self.n = draw::shrink_n(self.n);
        self.work = 2 + self.work % 8;
        self.runs = 1;
    }
}

/// What the trace must show: the copies and kernels of different chunks
/// can overlap (page-locked, asynchronous, two or more streams), and on a
/// GPU they do.
pub const DEMANDS: &[Demand] = &[
    Demand::Launched,
    Demand::CopiedBack,
    Demand::OverlappedCopies,
    Demand::OverlapInTime,
];

/// Blocks a one-dimensional grid may have on the GPUs that cap gridDim.x
/// lowest, and the most threads a block has: a chunk longer than their
/// product needs a grid-stride loop whatever block size the kernel picks.
pub const GRID_CAP_ELEMENTS: u64 = 65_535 * 1024;

/// The runs, drawn from `rng`.
pub fn plan(rng: &mut fastrand::Rng) -> Vec<(Tag, Params)> {
    let n = rng.u64(900_000..1_100_000) | 1;
    let work = rng.u32(10..200);
    // Four chunks, each longer than a grid without a loop covers, and tens
    // of ms of copies: enough for the overlap the trace must show
    // (`judge::evidence`, from 4 chunks and 5 ms of serial time).
    let huge = 4 * GRID_CAP_ELEMENTS + (rng.u64(1..1 << 20) | 1);
    vec![
        (
            Tag::UnevenChunks,
            Params {
                n,
                streams: 3,
                chunks: 7,
                work,
                runs: draw::TIMED_RUNS,
            },
        ),
        (
            Tag::ChunksPastTheGrid,
            Params {
                n: huge,
                streams: 2,
                chunks: 4,
                work: 2,
                runs: draw::TIMED_RUNS,
            },
        ),
    ]
}

/// Both runs' outputs (serial and overlapped) copied back, by their
/// checksum.
pub fn recheck(report: &Value) -> Result<(), Disagreement> {
    let p: streams::Parameters = disagreement::parameters(report)?;
    disagreement::compared(report, 2 * p.n)?;
    disagreement::values(report, streams::expected_checksum(&p))
}
