//! The matmul family's grading (matmul-naive, matmul-tiled): its runs (a
//! width below every block edge; one with partial tiles; the largest block;
//! a large width of whole tiles, timed for the tiled kernel), each drawing
//! M and N from a seed of its own (`kernels::seeded::drawn`), and the
//! recheck of P's weighted checksum against the grader's own, from that
//! seed, within the bound a right P stays in.

use kernels::catalogue::RunTag as Tag;
use kernels::matmul::Variant;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::disagreement::{self, Disagreement};
use crate::plan::draw::{Flags, TIMED_RUNS};
use crate::plan::memo::Memo;

/// A run's arguments; the binary's defaults where None.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Params {
    pub width: u32,
    /// The block's edge: `--block` for the naive kernel, `--tile` for the
    /// tiled one (whose report calls it `block` too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge: Option<u32>,
    pub tiled: bool,
    /// The seed of M and N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub runs: u32,
}

impl Params {
    pub fn flags(&self) -> Flags {
        let edge = if self.tiled { "tile" } else { "block" };
        Flags::default()
            .num("width", self.width)
            .num_if(edge, self.edge)
            .num_if("seed", self.seed)
            .num("runs", self.runs)
    }

    /// What the run is about, for the feedback; None for a tag that is not
    /// the matmul family's.
    pub fn about(&self, tag: Tag) -> Option<String> {
        let (width, edge) = (self.width, self.edge.unwrap_or(0));
        Some(match tag {
            Tag::SmallerThanABlock => {
                format!(
                    "W = {width} with {edge} × {edge} blocks, the smallest: smaller than a block"
                )
            }
            Tag::PartialTiles => format!(
                "W = {width} with {edge} × {edge} blocks: one past a multiple of the block, a \
                 one-wide partial tile on the right and bottom"
            ),
            Tag::LargestBlock => format!("W = {width} with {edge} × {edge} blocks, the largest"),
            Tag::WholeTiles => format!("W = {width}"),
            _ => return None,
        })
    }

    /// At sizes the CPU emulator runs in seconds, keeping below a block
    /// below, partial tiles partial and whole tiles whole.
    pub fn cap(&mut self) {
        self.width = match self.width {
            // Below a block, and partial tiles of 16 and 32: kept.
            w @ ..64 => w,
            // 33 to 95, odd: several 32-wide tiles, the last partial.
            w @ 64..1024 => 33 + (w % 32) * 2,
            // The large width of full tiles: still every tile full.
            _ => 256,
        };
        self.runs = 1;
    }
}

/// The block edges each kernel takes, smallest first: the naive kernel any
/// block of 8 to 32, the tiled one its two compiled tiles.
pub fn edges(variant: Variant) -> &'static [u32] {
    match variant {
        Variant::Tiled => &[16, 32],
        Variant::Naive => &[8, 16, 32],
    }
}

/// The runs of `variant`, drawn from `rng`.
pub fn plan(variant: Variant, rng: &mut fastrand::Rng) -> Vec<(Tag, Params)> {
    let tiled = variant == Variant::Tiled;
    let edges = edges(variant);
    // Below the smallest edge, at the smallest edge; one past a multiple of
    // the smallest edge, up to 63 (kept whole on the emulator); the largest
    // edge at a middle width that is no multiple of it. So the smallest
    // and the largest edge each meet a width whose last block is partial at
    // every seed (the tiled kernel's 16 and 32 tiles are two kernels; with
    // the edge drawn, a grading could test only one).
    let smallest = edges[0];
    let tiny = rng.u32(2..smallest);
    let e2 = smallest;
    let partial = e2 * rng.u32(1..(64 / e2).max(2)) + 1;
    let middle = match rng.u32(100..300) {
        w if w % 32 == 0 => w + 1,
        w => w,
    };
    // M and N drawn from each run's seed: not integers, so a kernel that
    // accumulates in int fails; not computable without reading them; not
    // exact in half precision, so a kernel that computes in it fails.
    let mut seed = || Some(rng.u64(..));
    let run = |width, edge, seed, runs| Params {
        width,
        edge,
        tiled,
        seed,
        runs,
    };
    vec![
        (Tag::SmallerThanABlock, run(tiny, Some(smallest), seed(), 2)),
        (Tag::PartialTiles, run(partial, Some(e2), seed(), 2)),
        // The largest block the exercise accepts: 32 × 32 = 1024 threads.
        (Tag::LargestBlock, run(middle, Some(32), seed(), 2)),
        (Tag::WholeTiles, run(1024, None, seed(), TIMED_RUNS)),
    ]
}

/// The weighted checksum of the exact P and how far a right P's may lie
/// from it, computed once per grading for each (seed, width)
/// (`plan::memo`): O(W²) hashes each.
fn checksum(seed: Option<u64>, width: u32) -> (f64, f64) {
    static CHECKSUMS: Memo<(Option<u64>, u32), (f64, f64)> = Memo::new();
    CHECKSUMS.get((seed, width), || {
        let inputs = kernels::matmul::Inputs { seed };
        let bound = match seed {
            Some(_) => inputs.checksum_bound(width),
            None => 0.0,
        };
        (inputs.checksum(width), bound)
    })
}

/// The report's P against the weighted checksum the grader computes from
/// the run's own seed, in O(W²): exactly for the default inputs (whose
/// report's golden model must agree exactly too), within the bound a right
/// P's checksum stays in for drawn ones (`kernels::matmul`'s note).
pub fn recheck(params: &Params, report: &Value) -> Result<(), Disagreement> {
    let w = disagreement::count(&report["parameters"]["width"], "width")?;
    disagreement::compared(report, w * w)?;
    let rms = disagreement::number(&report["results"]["rms_vs_golden"], "rms_vs_golden")?;
    if params.seed.is_none() && rms != 0.0 {
        return Err(Disagreement::Rms { rms });
    }
    let width = u32::try_from(w).map_err(|_| Disagreement::Width { width: w })?;
    let (want, bound) = checksum(params.seed, width);
    let got = disagreement::number(&report["results"]["checksum"], "checksum")?;
    // NaN compares false.
    if (got - want).abs() <= bound {
        Ok(())
    } else {
        Err(Disagreement::WeightedSum { got, want })
    }
}
