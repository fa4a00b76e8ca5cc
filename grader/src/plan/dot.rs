//! The dot family's grading (dot-gm, dot-sm, dot-atomic): its runs (an n
//! small enough that one element shows; the largest block in a grid smaller
//! than n; a large n, timed; for dot-gm, whose kernel indexes every
//! product, past 2^31), each run's a and b drawn from a seed of its own
//! (`kernels::seeded::drawn`: mixed signs and magnitudes, not exact in half
//! precision, no pattern a few elements reveal) but past 2^31, where the
//! course's kernels make affine a and b on the GPU; and the recheck of the
//! dot against the exact value the grader sums itself, within the
//! exercise's tolerance.

use kernels::catalogue::RunTag as Tag;
use kernels::dot::{self, Affine, Exact, Values, Variant};
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<Affine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<Affine>,
    /// The seed a and b are drawn from, in place of `a` and `b`.
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
            .text_if("a", self.a)
            .text_if("b", self.b)
            .num_if("seed", self.seed)
            .num("runs", self.runs)
            .switch_if(kernels::INPUTS_ON_GPU, self.inputs_on_gpu)
    }

    /// What the run is about, for the feedback; None for a tag that is not
    /// the dot family's.
    pub fn about(&self, tag: Tag) -> Option<String> {
        let n = self.n;
        let shown = |x: Option<Affine>| x.map(|x| x.to_string()).unwrap_or_default();
        let (a, b) = (shown(self.a), shown(self.b));
        // The inputs in words: drawn ones by their seed.
        let ab = match self.seed {
            Some(seed) => format!("a and b drawn from seed {seed}"),
            None => format!("a = {a}, b = {b}"),
        };
        let (threads, blocks) = (self.threads.unwrap_or(0), self.blocks.unwrap_or(0));
        Some(match tag {
            Tag::OneElement => format!(
                "one element, {ab}, in one block of {threads}: every thread but one adds nothing"
            ),
            Tag::OneElementShows if self.threads == Some(32) => format!(
                "n = {n}, one off a multiple of the block, with blocks of one warp, {ab}: small \
                 enough that one element shows"
            ),
            Tag::OneElementShows => {
                format!("n = {n}, {ab}: small enough that one element shows")
            }
            Tag::BlockOfOne => format!(
                "n = {n} with {blocks} blocks of one thread, {ab}: every thread loops, and the \
                 tree has one slot"
            ),
            Tag::OddBlock => format!(
                "n = {n}, one off a multiple of the block, with blocks of {threads}, {ab}: a \
                 block that is no power of two"
            ),
            Tag::GridSmallerThanN => format!(
                "n = {n} with {blocks} blocks of {threads} (the largest block), {ab}: a grid \
                 smaller than n"
            ),
            // Plans before issue 23 gave this run the default inputs.
            Tag::DefaultInputs if self.a.is_none() && self.seed.is_none() => {
                format!("n = {n} with the default inputs: every block's share counts")
            }
            Tag::DefaultInputs => {
                format!("n = {n} with the default grid, {ab}: every block's share counts")
            }
            Tag::PastInt => {
                format!("n = {n}, above 2^31: an int index overflows before the end")
            }
            _ => return None,
        })
    }

    /// At sizes the CPU emulator runs in seconds.
    pub fn cap(&mut self) {
        self.n = draw::shrink_n(self.n);
        self.runs = 1;
    }
}

/// Never the constant 0, which would make every product 0.
fn affine(rng: &mut fastrand::Rng) -> Affine {
    loop {
        let x = Affine::new(rng.i64(-9..=9), rng.i64(-9..=9));
        if x != Affine::new(0, 0) {
            return x;
        }
    }
}

/// The runs of `variant`, drawn from `rng`.
pub fn plan(variant: Variant, rng: &mut fastrand::Rng) -> Vec<(Tag, Params)> {
    // dot-sm and dot-atomic reduce in a tree: power-of-two blocks only.
    let any_block = variant == Variant::Gm;
    let near = draw::near_multiple;
    let blocks = rng.u32(3..40);
    let grid = 1024 * u64::from(blocks);
    let million = near(rng, grid, 900_000 / grid..1_100_000 / grid);
    let small = near(rng, 32, 1000 / 32..5000 / 32);
    let single_blocks = rng.u32(3..40);
    let singles = near(rng, u64::from(single_blocks), 20..60);
    let odd = draw::odd_block(rng);
    // Under 65536: the emulator keeps it as it is.
    let odd_n = near(rng, u64::from(odd), 20..60);
    let large = rng.u64(1 << 24..1 << 25) | 1;
    // Every run the host holds draws a and b from a seed of its own: no
    // kernel writes their products without reading them, nor extrapolates
    // them from a few elements, nor computes in half precision and still
    // matches (`kernels::seeded::drawn`).
    let mut seed = || Some(rng.u64(..));
    let run = |n, threads, blocks, seed, runs| Params {
        n,
        threads,
        blocks,
        a: None,
        b: None,
        seed,
        inputs_on_gpu: false,
        runs,
    };
    let mut runs = vec![
        // The smallest first: compute-sanitizer's. One element in one
        // block of two warps: every thread but one adds nothing.
        (Tag::OneElement, run(1, Some(64), Some(1), seed(), 3)),
        // compute-sanitizer's edge-shape run.
        (
            Tag::GridSmallerThanN,
            run(million, Some(1024), Some(blocks), seed(), 3),
        ),
        (Tag::OneElementShows, run(small, Some(32), None, seed(), 3)),
        (
            Tag::BlockOfOne,
            run(singles, Some(1), Some(single_blocks), seed(), 3),
        ),
    ];
    if any_block {
        runs.push((Tag::OddBlock, run(odd_n, Some(odd), None, seed(), 3)));
    }
    runs.push((
        Tag::DefaultInputs,
        run(large, None, None, seed(), TIMED_RUNS),
    ));
    // dot-gm's kernel indexes every element (the others' only sum them):
    // its products past 2^31 in c, the host summing them; a and b made on
    // the GPU by the course's kernels, which make affine inputs (drawn
    // coefficients), not drawn values: the host could not hold 2^31 drawn
    // values' answer in the time of a run.
    if variant.id().exercise().run(Tag::PastInt).is_some() {
        let huge = draw::past_int(rng);
        let (a, b) = (affine(rng), affine(rng));
        runs.push((
            Tag::PastInt,
            Params {
                a: Some(a),
                b: Some(b),
                inputs_on_gpu: true,
                ..run(huge, None, None, None, 1)
            },
        ));
    }
    runs
}

/// The exact dot of a run's values, summed once per grading for each
/// (values, n) (`plan::memo`): a drawn run's is 2^25 products at most.
pub fn exact(values: Values, n: u64) -> Exact {
    static EXACT: Memo<(Values, u64), Exact> = Memo::new();
    match values {
        Values::Affine(_) => values.exact(n),
        Values::Drawn { .. } => EXACT.get((values, n), || values.exact(n)),
    }
}

/// The dot against the exact value the grader computes from the run's
/// own inputs (the planned seed, or the affine a and b), within the
/// variant's tolerance for the report's launch shape.
pub fn recheck(variant: Variant, params: &Params, report: &Value) -> Result<(), Disagreement> {
    let p: dot::Parameters = disagreement::parameters(report)?;
    if p.seed != params.seed {
        return Err(Disagreement::Echo {
            key: "seed".into(),
            got: report["parameters"]["seed"].clone(),
            asked: serde_json::to_value(params.seed).unwrap_or(Value::Null),
        });
    }
    let exact = exact(p.values(), p.n);
    let got = disagreement::number(&report["results"]["dot"], "dot")?;
    let error = exact.relative_error(got);
    let limit = dot::tolerance::limit(variant, &p);
    if error <= limit {
        Ok(())
    } else {
        Err(Disagreement::Dot {
            got,
            exact: exact.text(),
            error,
            limit,
        })
    }
}
