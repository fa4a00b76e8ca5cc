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
            Tag::UnevenChunks => format!(
                "n = {n} in {chunks} uneven chunks over {streams} streams, work {work}; on a GPU \
                 the copies and kernels must overlap in time"
            ),
            Tag::ChunksPastTheGrid => format!(
                "n = {n} in {chunks} chunks over {streams} streams: each chunk needs more than \
                 65535 blocks even of 1024 threads, so only a grid-stride loop covers it"
            ),
            _ => return None,
        })
    }

    /// The run as compute-sanitizer's tools make it, where that is not the
    /// run itself (more than 2^24 elements: the uneven chunks, the tools'
    /// run): the same streams, chunks and work over 1/64 of its elements
    /// (odd, as the run's), with how many. The tools look for
    /// accesses past a chunk's or a buffer's end and reads of memory never
    /// written, which the same chunking shows at a million elements as at
    /// 67 million; the run itself, every element checked, stays the
    /// kernel's and the host's. At 2^26 elements the tools would spend
    /// seconds copying and checking, not looking (nor do they go over the
    /// run past the grid).
    pub fn sanitized(&self) -> Option<(Params, u64)> {
        let n = self.n >> SANITIZED_SHIFT | 1;
        (self.n > 1 << 24).then(|| (Params { n, ..self.clone() }, n))
    }

    /// At sizes the CPU emulator runs in seconds: the tools' size
    /// ([`Params::sanitized`]), whose checks the emulator's stand for,
    /// shrunk; steps of arithmetic per element, a few, not hundreds.
    pub fn cap(&mut self) {
        if let Some((cut, _)) = self.sanitized() {
            *self = cut;
        }
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

/// The run whose overlap in time is judged (`judge::evidence`, from 4
/// chunks and 5 ms of serial time), the student's binary having the GPU
/// alone for its whole process: the uneven chunks, at about 2^26 elements.
/// There the solution's pipeline measured the same fraction of serial as
/// at the run past the grid (0.60 to 0.67 over 3 streams and 7 chunks,
/// 0.66 to 0.67 over 2 and 4, with 10 ms of serial time: twice the 5 ms
/// the judge asks), in a third of the process's time (1.2 s against 3.6
/// to 3.8 s; an H200, 2026-11-29, `bench/runs/2026-11-29-h200-memspace-racecheck`). The run past
/// the grid, 5 GiB of host memory, then shares the GPU: its verdict reads
/// no time.
pub const OVERLAP_TIMED: Tag = Tag::UnevenChunks;

/// The uneven chunks' size is drawn within this of 2^26.
const UNEVEN_SPREAD: u64 = 1 << 22;

/// The tools' run is the uneven chunks' shape at 1/2^this of its size
/// ([`Params::sanitized`]): about a million elements.
const SANITIZED_SHIFT: u32 = 6;

/// The runs, drawn from `rng`.
pub fn plan(rng: &mut fastrand::Rng) -> Vec<(Tag, Params)> {
    // Odd: some chunk ends off a multiple of any block size.
    let n = rng.u64((1 << 26) - UNEVEN_SPREAD..(1 << 26) + UNEVEN_SPREAD) | 1;
    let work = rng.u32(10..200);
    // Four chunks, each longer than a grid without a loop covers.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlap_is_timed_at_uneven_chunks_of_tens_of_ms_and_the_tools_go_over_a_million() {
        for seed in 0..200 {
            let runs = plan(&mut fastrand::Rng::with_seed(seed));
            let (tag, timed) = runs
                .iter()
                .find(|(tag, _)| *tag == OVERLAP_TIMED)
                .expect("the plan has the run the overlap is timed at");
            assert_eq!(*tag, Tag::UnevenChunks);
            // Copies of 2^26 words each way: 10 ms of serial time on an
            // H200, twice the least the judge asks (at 2^25 the solution
            // measured 5.1 ms). Its chunks: `judge::evidence`'s tests.
            assert!(timed.n >= (1 << 26) - UNEVEN_SPREAD && timed.n < (1 << 26) + UNEVEN_SPREAD);
            assert_eq!(timed.n % 2, 1);
            // The tools: the same chunks, streams and work, odd, about a
            // million elements.
            let (cut, elements) = timed.sanitized().expect("a cut for the tools");
            assert_eq!(cut.n, elements);
            assert_eq!(cut.n % 2, 1);
            assert!((900_000..1_200_000).contains(&cut.n), "{}", cut.n);
            assert_eq!(
                (cut.streams, cut.chunks, cut.work, cut.runs),
                (timed.streams, timed.chunks, timed.work, timed.runs)
            );
            // On the emulator, the tools' size shrunk, as before the
            // run's size grew: under 2^19 elements.
            let mut capped = timed.clone();
            capped.cap();
            assert_eq!(capped.n, draw::shrink_n(cut.n));
            assert!(capped.n < 1 << 19 && capped.chunks == timed.chunks);
            // The run past the grid: every chunk past what a grid covers.
            let (_, huge) = runs
                .iter()
                .find(|(tag, _)| *tag == Tag::ChunksPastTheGrid)
                .unwrap();
            assert!(huge.n / u64::from(huge.chunks) > GRID_CAP_ELEMENTS);
        }
        // A run of the old size, a million elements, is the tools' own.
        let small = Params {
            n: 1_000_001,
            streams: 3,
            chunks: 7,
            work: 50,
            runs: 5,
        };
        assert_eq!(small.sanitized(), None);
    }
}
