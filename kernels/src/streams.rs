//! streams-overlap, the pure part: the input, the kernel's closed form, the
//! chunking, the check, the perfect-overlap bound, and the protocol types.
//!
//! The kernel applies x ↦ a·x + c (mod 2^32, the Numerical Recipes linear
//! congruential step) `work` times to every element: integer arithmetic, so
//! exact, and a loop no compiler can shorten, so `--work` sets the kernel's
//! time. Applied w times the step is itself affine, x ↦ A·x + C, and A is
//! odd, so the map is a bijection on u32: every output is checked exactly,
//! and one value (the image of index n) is produced by no element below n,
//! which makes it a safe poison for "never written".

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::checksum::Checksum;
use crate::host_memory::{self, HostAllocError};
use crate::protocol::{Check, Failure, Real};

#[cfg(feature = "runtime")]
pub mod driver;

pub const NAME: &str = crate::catalogue::ExerciseId::StreamsOverlap.name();

pub const MULTIPLIER: u32 = 1_664_525;
pub const INCREMENT: u32 = 1_013_904_223;

/// x ↦ a·x + c (mod 2^32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub a: u32,
    pub c: u32,
}

impl Step {
    /// The kernel's step applied `work` times: compose it with itself.
    pub fn repeated(work: u32) -> Step {
        let once = Step {
            a: MULTIPLIER,
            c: INCREMENT,
        };
        (0..work).fold(Step { a: 1, c: 0 }, |acc, _| once.after(acc))
    }

    /// self ∘ first: x ↦ self(first(x)).
    fn after(self, first: Step) -> Step {
        Step {
            a: self.a.wrapping_mul(first.a),
            c: self.a.wrapping_mul(first.c).wrapping_add(self.c),
        }
    }

    pub fn apply(self, x: u32) -> u32 {
        self.a.wrapping_mul(x).wrapping_add(self.c)
    }
}

/// input\[i] = i (mod 2^32).
pub fn input(n: u64) -> Result<Vec<u32>, HostAllocError> {
    host_memory::try_filled("the input", n, |i| i as u32)
}

/// The value no element below n produces (the transform of input n): what
/// the output is filled with before each run.
pub fn poison(n: u64, work: u32) -> u32 {
    Step::repeated(work).apply(n as u32)
}

/// `count` consecutive chunks covering 0..n, their sizes differing by at
/// most one.
pub fn chunks(n: usize, count: usize) -> Vec<Range<usize>> {
    let count = count.clamp(1, n.max(1));
    (0..count)
        .map(|k| (k * n / count)..((k + 1) * n / count))
        .collect()
}

/// What perfect overlap of `chunks` chunks would take, given each stage's
/// total time: the slowest stage runs without a break, and the others only
/// add one chunk's worth each, while the pipeline fills and drains.
pub fn bound_ms(stage_totals: [f64; 3], chunks: u32) -> f64 {
    let slowest = stage_totals.iter().copied().fold(0.0, f64::max);
    let total: f64 = stage_totals.iter().sum();
    slowest + (total - slowest) / f64::from(chunks.max(1))
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    pub n: u64,
    pub streams: u32,
    pub chunks: u32,
    pub work: u32,
    pub runs: u32,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    /// Median time of the whole job in one stream, stage after stage.
    pub serial_ms: f64,
    /// Median time with the chunks spread over the streams.
    pub overlapped_ms: f64,
    pub speedup: f64,
    /// Each stage's total in the serial run: copies in, kernels, copies out.
    pub copy_in_ms: f64,
    pub kernel_ms: f64,
    pub copy_out_ms: f64,
    /// What perfect overlap would take (see [`bound_ms`]).
    pub bound_ms: f64,
    /// bound_ms / overlapped_ms: 1.0 is perfect overlap.
    pub ratio_to_bound: f64,
    /// The serial run's output, then the overlapped run's (see [`crate::checksum`]).
    /// Optional in the schema; the grader requires it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
}

/// The checksum of a right run with `params`: out\[i] of the serial run,
/// then of the overlapped one.
pub fn expected_checksum(params: &Parameters) -> Checksum {
    let step = Step::repeated(params.work);
    let once = || (0..params.n).map(move |i| step.apply(i as u32));
    Checksum::of(once().chain(once()))
}

const LISTED_FAILURES: usize = 5;

/// Checks every element of each run's output.
pub fn check(runs: &[(&str, &[u32])], params: &Parameters) -> Check {
    let step = Step::repeated(params.work);
    let n = params.n;
    let mut wrong = 0;
    let mut failures = Vec::new();
    let mut hint = None;
    for (name, out) in runs {
        let mut wrong_here = n.saturating_sub(out.len() as u64);
        // Every element on every core (about a second on one for the
        // largest run's two outputs); each part keeps its first failures,
        // the parts in order.
        let within = &out[..out.len().min(n as usize)];
        let parts = host_memory::in_parts(within, |first, part| {
            let mut wrong = 0;
            let mut listed = Vec::new();
            for (j, &got) in part.iter().enumerate() {
                let i = first + j;
                let want = step.apply(i as u32);
                if got != want {
                    wrong += 1;
                    if listed.len() < LISTED_FAILURES {
                        listed.push(Failure {
                            at: format!("{name} out[{i}]"),
                            expected: Real(f64::from(want)),
                            got: Real(f64::from(got)),
                        });
                    }
                }
            }
            (wrong, listed)
        });
        for (wrong, listed) in parts {
            wrong_here += wrong;
            let room = LISTED_FAILURES.saturating_sub(failures.len());
            failures.extend(listed.into_iter().take(room));
        }
        if wrong_here > 0 && hint.is_none() {
            hint = Some(explain(name, out, params, step));
        }
        wrong += wrong_here;
    }
    Check {
        passed: wrong == 0,
        criterion: format!(
            "every out[i] equals x ↦ {MULTIPLIER}·x + {INCREMENT} (mod 2^32) applied {} times to i",
            params.work
        ),
        compared: n * runs.len() as u64,
        wrong,
        failures,
        tolerance: None,
        hint,
    }
}

/// What the pattern of a run's wrong elements suggests.
fn explain(name: &str, out: &[u32], params: &Parameters, step: Step) -> String {
    if out.len() as u64 != params.n {
        return format!(
            "the {name} output has {} elements, not n = {}",
            out.len(),
            params.n
        );
    }
    let poison = poison(params.n, params.work);
    let ranges = chunks(out.len(), params.chunks as usize);
    let unwritten: Vec<usize> = ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| out[(*r).clone()].iter().all(|&x| x == poison))
        .map(|(k, _)| k)
        .collect();
    if unwritten.len() == ranges.len() {
        return format!(
            "in the {name} run nothing came back: copy_out must copy each chunk of d_out into \
             the same chunk of the pinned output"
        );
    }
    if !unwritten.is_empty() {
        return format!(
            "in the {name} run chunks {unwritten:?} never came back: every chunk needs its \
             copy in, kernel and copy out"
        );
    }
    let from_chunk_start = ranges.iter().skip(1).all(|r| {
        out[r.clone()]
            .iter()
            .enumerate()
            .all(|(i, &x)| x == step.apply(i as u32))
    });
    if ranges.len() > 1 && from_chunk_start {
        return format!(
            "in the {name} run every chunk holds the first chunk's results: pass the kernel \
             d_in and d_out from the chunk's start (index the buffers with the chunk's range)"
        );
    }
    if out.iter().enumerate().all(|(i, &x)| x == i as u32) {
        return format!(
            "in the {name} run the output equals the input: the kernel never ran on it"
        );
    }
    format!(
        "some elements of the {name} run are wrong: the kernel must apply the step exactly \
         work times to in[i] and store the result in out[i], for every i of its chunk"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(n: u64, chunks: u32) -> Parameters {
        Parameters {
            n,
            streams: 2,
            chunks,
            work: 37,
            runs: 1,
        }
    }

    #[test]
    fn a_check_on_every_core_counts_and_lists_as_one_by_one() {
        // Two outputs past the size that is split among the cores, wrong at
        // a few places in different parts.
        let p = params((1 << 22) + 4097, 4);
        let step = Step::repeated(p.work);
        let right: Vec<u32> = (0..p.n as u32).map(|i| step.apply(i)).collect();
        let mut serial = right.clone();
        let mut overlapped = right.clone();
        for i in [3, 2_000_000, 4_000_000] {
            serial[i] ^= 1;
        }
        for i in [10, 20, 30, 4_194_400] {
            overlapped[i] = 0;
        }
        let check = check(&[("serial", &serial), ("overlapped", &overlapped)], &p);
        // One by one: every wrong element in order, serial's first.
        let wrong: Vec<String> = [("serial", &serial), ("overlapped", &overlapped)]
            .iter()
            .flat_map(|(name, out)| {
                (0..out.len())
                    .filter(|&i| out[i] != right[i])
                    .map(move |i| format!("{name} out[{i}]"))
            })
            .collect();
        assert_eq!(check.wrong, wrong.len() as u64);
        let listed: Vec<&str> = check.failures.iter().map(|f| f.at.as_str()).collect();
        assert_eq!(listed, wrong[..LISTED_FAILURES]);
        assert!(!check.passed && check.compared == 2 * p.n);
    }

    fn brute(x: u32, work: u32) -> u32 {
        (0..work).fold(x, |y, _| y.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT))
    }

    #[test]
    fn the_repeated_step_matches_brute_force() {
        for work in [0, 1, 2, 3, 37, 1000] {
            let step = Step::repeated(work);
            for x in [0, 1, 7, 123_456_789, u32::MAX] {
                assert_eq!(step.apply(x), brute(x, work), "work {work}, x {x}");
            }
        }
    }

    #[test]
    fn the_poison_is_produced_by_no_element_below_n() {
        // A is odd, so the map is a bijection: only input n gives the poison.
        assert_eq!(Step::repeated(1000).a % 2, 1);
        let n = 100_000;
        let step = Step::repeated(37);
        assert!((0..n).all(|i| step.apply(i as u32) != poison(n, 37)));
    }

    #[test]
    fn the_expected_checksum_is_both_runs_outputs_in_order() {
        let p = params(1000, 8);
        let right: Vec<u32> = (0..1000).map(|i| brute(i, 37)).collect();
        let mut both = right.clone();
        both.extend(&right);
        assert_eq!(expected_checksum(&p), Checksum::of(both.iter().copied()));
        // Two outputs swapped: the same sum, another hash.
        both.swap(3, 4);
        let swapped = Checksum::of(both.iter().copied());
        assert_eq!(swapped.sum, expected_checksum(&p).sum);
        assert_ne!(swapped, expected_checksum(&p));
    }

    #[test]
    fn chunks_cover_everything_once_with_sizes_within_one() {
        for (n, count) in [(10, 3), (100, 7), (1, 4), (1 << 20, 32), (5, 5)] {
            let ranges = chunks(n, count);
            assert_eq!(ranges.first().unwrap().start, 0);
            assert_eq!(ranges.last().unwrap().end, n);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
            let sizes: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
            assert!(
                sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
                "{sizes:?}"
            );
        }
    }

    #[test]
    fn the_bound_is_the_slowest_stage_plus_a_chunk_of_the_others() {
        assert_eq!(bound_ms([10.0, 10.0, 10.0], 4), 15.0);
        assert_eq!(bound_ms([10.0, 2.0, 2.0], 1), 14.0);
        assert_eq!(bound_ms([1.0, 8.0, 1.0], 2), 9.0);
    }

    fn right(n: u64) -> Vec<u32> {
        let step = Step::repeated(37);
        (0..n).map(|i| step.apply(i as u32)).collect()
    }

    #[test]
    fn right_output_passes_and_the_classic_bugs_are_named() {
        let p = params(1000, 8);
        assert!(check(&[("serial", &right(1000))], &p).passed);

        let poison = poison(1000, 37);
        let mut missing = right(1000);
        missing[250..375].fill(poison);
        let said = check(&[("overlapped", &missing)], &p).hint.unwrap();
        assert!(said.contains("chunks [2]"), "{said}");

        // The kernel given the buffers' starts instead of the chunk's.
        let step = Step::repeated(37);
        let mut from_start = right(1000);
        for r in chunks(1000, 8) {
            for (k, i) in r.enumerate() {
                from_start[i] = step.apply(k as u32);
            }
        }
        let said = check(&[("overlapped", &from_start)], &p).hint.unwrap();
        assert!(said.contains("chunk's start"), "{said}");

        let untouched: Vec<u32> = (0..1000).collect();
        let said = check(&[("serial", &untouched)], &p).hint.unwrap();
        assert!(said.contains("never ran"), "{said}");

        let said = check(&[("serial", &vec![poison; 1000])], &p).hint.unwrap();
        assert!(said.contains("nothing came back"), "{said}");
    }
}
