//! The dot family's grading (dot-gm, dot-sm, dot-atomic): its runs (an n
//! small enough that one element shows; the largest block in a grid smaller
//! than n; the grading's a and b at a large n, timed; for dot-gm, whose
//! kernel indexes every product, past 2^31 with them too), and the recheck of the dot against
//! the exact value within the exercise's tolerance.

use kernels::catalogue::RunTag as Tag;
use kernels::dot::{self, Affine, Variant};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::disagreement::{self, Disagreement};
use crate::plan::draw::{self, Flags, TIMED_RUNS};

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
            .num("runs", self.runs)
            .switch_if(kernels::INPUTS_ON_GPU, self.inputs_on_gpu)
    }

    /// What the run is about, for the feedback; None for a tag that is not
    /// the dot family's.
    pub fn about(&self, tag: Tag) -> Option<String> {
        let n = self.n;
        let shown = |x: Option<Affine>| x.map(|x| x.to_string()).unwrap_or_default();
        let (a, b) = (shown(self.a), shown(self.b));
        let (threads, blocks) = (self.threads.unwrap_or(0), self.blocks.unwrap_or(0));
        Some(match tag {
            Tag::OneElement => format!(
                "one element, a = {a}, b = {b}, in one block of {threads}: every thread but one \
                 adds nothing"
            ),
            Tag::OneElementShows if self.threads == Some(32) => format!(
                "n = {n}, one off a multiple of the block, with blocks of one warp, a = {a}, \
                 b = {b}: small enough that one element shows"
            ),
            Tag::OneElementShows => {
                format!("n = {n}, a = {a}, b = {b}: small enough that one element shows")
            }
            Tag::BlockOfOne => format!(
                "n = {n} with {blocks} blocks of one thread, a = {a}, b = {b}: every thread \
                 loops, and the tree has one slot"
            ),
            Tag::OddBlock => format!(
                "n = {n}, one off a multiple of the block, with blocks of {threads}, a = {a}, \
                 b = {b}: a block that is no power of two"
            ),
            Tag::GridSmallerThanN => format!(
                "n = {n} with {blocks} blocks of {threads} (the largest block), a = {a}, \
                 b = {b}: a grid smaller than n"
            ),
            // Plans before issue 23 gave this run the default inputs.
            Tag::DefaultInputs if self.a.is_none() => {
                format!("n = {n} with the default inputs: every block's share counts")
            }
            Tag::DefaultInputs => {
                format!(
                    "n = {n} with the default grid, a = {a}, b = {b}: every block's share counts"
                )
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
    let (a, b) = (affine(rng), affine(rng));
    let run = |n, threads, blocks, a, b, runs| Params {
        n,
        threads,
        blocks,
        a,
        b,
        inputs_on_gpu: false,
        runs,
    };
    let mut runs = vec![
        // The smallest first: compute-sanitizer's. One element in one
        // block of two warps: every thread but one adds nothing.
        (
            Tag::OneElement,
            run(1, Some(64), Some(1), Some(a), Some(b), 3),
        ),
        // compute-sanitizer's edge-shape run.
        (
            Tag::GridSmallerThanN,
            run(
                million,
                Some(1024),
                Some(blocks),
                Some(Affine::new(0, 1)),
                Some(Affine::new(2, 0)),
                3,
            ),
        ),
        (
            Tag::OneElementShows,
            run(small, Some(32), None, Some(a), Some(b), 3),
        ),
        (
            Tag::BlockOfOne,
            run(singles, Some(1), Some(single_blocks), Some(a), Some(b), 3),
        ),
    ];
    if any_block {
        runs.push((
            Tag::OddBlock,
            run(odd_n, Some(odd), None, Some(a), Some(b), 3),
        ));
    }
    // The grading's own a and b here too, so a kernel that writes the
    // default inputs' products without reading a and b loses it.
    runs.push((
        Tag::DefaultInputs,
        run(large, None, None, Some(a), Some(b), TIMED_RUNS),
    ));
    // dot-gm's kernel indexes every element (the others' only sum them):
    // its products past 2^31 in c, the host summing them; a and b made on
    // the GPU.
    if variant.id().exercise().run(Tag::PastInt).is_some() {
        let huge = draw::past_int(rng);
        runs.push((
            Tag::PastInt,
            Params {
                inputs_on_gpu: true,
                ..run(huge, None, None, Some(a), Some(b), 1)
            },
        ));
    }
    runs
}

/// The dot against the exact value, within the variant's tolerance for the
/// report's launch shape.
pub fn recheck(variant: Variant, report: &Value) -> Result<(), Disagreement> {
    let p: dot::Parameters = disagreement::parameters(report)?;
    let inputs = p.inputs();
    let (exact, scale) = (inputs.dot(p.n), inputs.abs_dot(p.n));
    let got = disagreement::number(&report["results"]["dot"], "dot")?;
    let error = dot::tolerance::relative_error(got, exact, scale);
    let limit = dot::tolerance::limit(variant, &p);
    if error <= limit {
        Ok(())
    } else {
        Err(Disagreement::Dot {
            got,
            exact: exact.to_string(),
            error,
            limit,
        })
    }
}
