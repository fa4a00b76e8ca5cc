//! vecadd-anyN's grading: its runs (one element; one block of the largest
//! size; every thread looping; blocks of one thread; a block that is no
//! power of two; about one wave of blocks, timed; past 2^31), each drawing
//! a and b from a seed of its own, and the recheck of c's checksum from
//! that seed.

use kernels::catalogue::RunTag as Tag;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::disagreement::{self, Disagreement};
use crate::plan::draw::{self, Flags, TIMED_RUNS};
use crate::plan::memo::Memo;

/// A run's arguments; the binary's defaults where None.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Params {
    pub n: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
    /// The seed of a and b; the readable default inputs when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The course's binary makes a and b on the GPU (`--inputs-on-gpu`):
    /// the run above 2^31 elements, whose inputs the host would take
    /// seconds of every core to make (`kernels::inputs_on_gpu`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inputs_on_gpu: bool,
    pub runs: u32,
}

impl Params {
    pub fn flags(&self) -> Flags {
        Flags::default()
            .num("n", self.n)
            .num_if("threads", self.threads)
            .num_if("blocks", self.blocks)
            .num_if("seed", self.seed)
            .num("runs", self.runs)
            .switch_if(kernels::INPUTS_ON_GPU, self.inputs_on_gpu)
    }

    /// What the run is about, for the feedback; None for a tag that is not
    /// vecadd-anyN's.
    pub fn about(&self, tag: Tag) -> Option<String> {
        let Params { n, .. } = self;
        let (threads, blocks) = (self.threads.unwrap_or(0), self.blocks.unwrap_or(0));
        Some(match tag {
            Tag::OneElement => "one element".into(),
            Tag::GridSmallerThanN if blocks == 1 => format!(
                "n = {n}, one off a multiple of the block, with one block of {threads} (the \
                 largest block): a grid smaller than n, even counting 4 elements a thread"
            ),
            Tag::GridSmallerThanN => format!(
                "n = {n}, odd, with {blocks} blocks of {threads} (the largest block): a grid \
                 smaller than n, even counting 4 elements a thread"
            ),
            Tag::BlockOfOne => {
                format!("n = {n} with {blocks} blocks of one thread: every thread loops")
            }
            Tag::OddBlock => format!(
                "n = {n}, one off a multiple of the block, with blocks of {threads}: a block \
                 that is no power of two"
            ),
            Tag::OneWave => format!(
                "n = {n} with {blocks} blocks of the default size, about one wave of a large \
                 GPU: every thread loops over many elements"
            ),
            Tag::EveryThreadLoops => {
                format!("n = {n} with {blocks} blocks of {threads}: every thread loops")
            }
            Tag::DefaultGrid => format!("n = {n} with the default grid"),
            Tag::PastInt => {
                format!("n = {n}, above 2^31: an int index overflows before the end")
            }
            _ => return None,
        })
    }

    /// At sizes the CPU emulator runs in seconds. A run with a grid of its
    /// own keeps every thread looping, twice or more even in float4s: one
    /// wave's 1024 blocks of 256 threads take 2^20 elements a pass, more
    /// than `shrink_n` leaves, and a kernel with no grid-stride loop would
    /// pass there.
    pub fn cap(&mut self) {
        self.n = draw::shrink_n(self.n);
        if let Some(blocks) = self.blocks {
            let threads = self.threads.unwrap_or(kernels::vecadd::DEFAULT_THREADS);
            let pass = 4 * u64::from(blocks) * u64::from(threads);
            if self.n < 2 * pass {
                // pass is even: n keeps its parity.
                self.n = 2 * pass + self.n % pass;
            }
        }
        self.runs = 1;
    }
}

/// The runs, drawn from `rng`: each launch-shape class of the catalogue's
/// entry covered by design (`plan::shapes`), the seed choosing only the
/// values inside each class.
pub fn plan(rng: &mut fastrand::Rng) -> Vec<(Tag, Params)> {
    let near = draw::near_multiple;
    // Above 2 blocks of 1024 threads even in float4s (8192 elements), so a
    // vectorised kernel without the grid-stride loop misses some too.
    let small = near(rng, 1024, 9..13);
    let loop_blocks = rng.u32(3..40);
    let grid = 64 * u64::from(loop_blocks);
    let middle = near(rng, grid, (1 << 20) / grid..(1 << 22) / grid);
    let single_blocks = rng.u32(3..40);
    let singles = near(rng, u64::from(single_blocks), 20..60);
    let odd = draw::odd_block(rng);
    // Under 65536: the emulator keeps it as it is.
    let odd_n = near(rng, u64::from(odd), 20..60);
    let large = rng.u64(1 << 25..1 << 26) | 1;
    let huge = draw::past_int(rng);
    // Inputs drawn from the run's seed (`kernels::seeded::drawn`): a kernel
    // that writes c from i alone, that never reads a or b, that
    // extrapolates them from a few elements or that adds in half precision
    // cannot match them.
    let mut seed = || Some(rng.u64(..));
    let run = |n, threads, blocks, seed, runs| Params {
        n,
        threads,
        blocks,
        seed,
        inputs_on_gpu: false,
        runs,
    };
    vec![
        // The smallest first: compute-sanitizer's.
        (Tag::OneElement, run(1, Some(32), None, seed(), 2)),
        // compute-sanitizer's edge-shape run.
        (
            Tag::GridSmallerThanN,
            run(small, Some(1024), Some(1), seed(), 2),
        ),
        (
            Tag::EveryThreadLoops,
            run(middle, Some(64), Some(loop_blocks), seed(), 2),
        ),
        (
            Tag::BlockOfOne,
            run(singles, Some(1), Some(single_blocks), seed(), 2),
        ),
        (Tag::OddBlock, run(odd_n, Some(odd), None, seed(), 2)),
        // Timed at about one wave of an H100 (1024 blocks of the default
        // 256 threads), each thread looping over 128 to 256 elements: where
        // the grid-stride loop's coalescing shows, and where a kernel that
        // gives each thread a contiguous run of elements is slow.
        (
            Tag::OneWave,
            run(large, None, Some(draw::ONE_WAVE_BLOCKS), seed(), TIMED_RUNS),
        ),
        // Seeded too, so a kernel that writes c without reading a and b
        // loses it; seeded inputs repeat with a prime period (one period
        // drawn, which the course's kernels repeat on the GPU), so the
        // grader checks 2^31 elements from one period's sum.
        // a and b made on the GPU, c checked there (in the host's way
        // wherever an element is wrong).
        (
            Tag::PastInt,
            Params {
                inputs_on_gpu: true,
                ..run(huge, None, None, seed(), 1)
            },
        ),
    ]
}

/// The checksum of c against the one the grader computes from the run's
/// own seed (the report echoes it), never from the report's
/// expected_checksum: exact (every right c\[i] is one f32, and the
/// checksum sums them exactly, `kernels::vecadd::ExactSum`), computed once
/// per grading for each (seed, n) (`plan::memo`: one period's million
/// sums each).
pub fn recheck(params: &Params, report: &Value) -> Result<(), Disagreement> {
    static CHECKSUMS: Memo<(Option<u64>, u64), f64> = Memo::new();
    let n = disagreement::count(&report["parameters"]["n"], "n")?;
    disagreement::compared(report, n)?;
    let inputs = kernels::vecadd::Inputs { seed: params.seed };
    let want = CHECKSUMS.get((params.seed, n), || inputs.checksum(n));
    let got = disagreement::number(&report["results"]["checksum"], "checksum")?;
    if got == want {
        Ok(())
    } else {
        Err(Disagreement::Sum { got, want })
    }
}
