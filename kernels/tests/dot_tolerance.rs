//! The dot tolerances at the GPU test sizes, proven on the CPU golden models:
//! a correct sum always passes; a sum missing its last element, missing one
//! block, or counting one block twice is rejected wherever float32 can
//! resolve it (its share of Σ|a·b| exceeds twice the tolerance). Where it
//! cannot, the cases are listed, so a looser tolerance fails this test.

use kernels::dot::golden;
use kernels::dot::tolerance::{self, relative_error};
use kernels::dot::{Affine, Inputs, Parameters, Variant};
use kernels::launch::{Residency, default_blocks};

const H100: Residency = Residency {
    multiprocessors: 132,
    max_threads_per_multiprocessor: 2048,
    max_blocks_per_multiprocessor: 32,
};

/// The GPU tests' sizes and block sizes.
const SIZES: [u64; 5] = [1, 2, 1000, 1_000_003, (1 << 26) + 7];
const THREADS: [u32; 3] = [32, 256, 1024];
const VARIANTS: [Variant; 3] = [Variant::Gm, Variant::Sm, Variant::Atomic];

fn params(variant: Variant, n: u64, threads: u32) -> Parameters {
    Parameters {
        n,
        threads,
        blocks: default_blocks(n, threads, H100, variant.waves()),
        runs: 10,
        a: Inputs::DEFAULT.a,
        b: Inputs::DEFAULT.b,
        seed: None,
    }
}

/// What each kernel's golden model computes from `a` and `b`.
fn golden_dot(variant: Variant, p: &Parameters, a: &[f32], b: &[f32]) -> f64 {
    match variant {
        Variant::Gm => golden::sum_f64(&golden::products(a, b)),
        Variant::Sm => golden::sum_f64(&partials(p, a, b)),
        Variant::Atomic => f64::from(golden::atomic_total(&partials(p, a, b))),
    }
}

fn partials(p: &Parameters, a: &[f32], b: &[f32]) -> Vec<f32> {
    golden::block_partials(&golden::thread_sums(a, b, p.grid_threads()), p.threads)
}

/// The block's result without block `j`, and with it twice.
fn without_and_twice(
    variant: Variant,
    p: &Parameters,
    a: &[f32],
    b: &[f32],
    j: usize,
) -> (f64, f64) {
    match variant {
        Variant::Gm => {
            // dot-gm has no partials: block j's products go missing, or twice.
            let products = golden::products(a, b);
            let grid = p.grid_threads() as usize;
            let threads = p.threads as usize;
            let of_block_j: f64 = products
                .iter()
                .enumerate()
                .filter(|(i, _)| (i % grid) / threads == j)
                .map(|(_, &x)| f64::from(x))
                .sum();
            let total = golden::sum_f64(&products);
            (total - of_block_j, total + of_block_j)
        }
        Variant::Sm => {
            let parts = partials(p, a, b);
            let total = golden::sum_f64(&parts);
            (total - f64::from(parts[j]), total + f64::from(parts[j]))
        }
        Variant::Atomic => {
            let mut parts = partials(p, a, b);
            let doubled = [parts.clone(), vec![parts[j]]].concat();
            parts.remove(j);
            (
                f64::from(golden::atomic_total(&parts)),
                f64::from(golden::atomic_total(&doubled)),
            )
        }
    }
}

struct Outcome {
    variant: Variant,
    n: u64,
    threads: u32,
    rejected: bool,
    share: f64,
    limit: f64,
}

impl Outcome {
    fn resolvable(&self) -> bool {
        self.share > 2.0 * self.limit
    }
}

fn rejected(variant: Variant, p: &Parameters, got: f64) -> bool {
    !tolerance::check(variant, p, got).passed
}

/// Runs every variant at every test size, calling `corrupt` for the
/// corrupted result and the share of Σ|a·b| it removes or adds.
fn sweep(
    mut corrupt: impl FnMut(Variant, &Parameters, &[f32], &[f32]) -> Option<(Vec<f64>, f64)>,
) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for n in SIZES {
        let (a, b) = Inputs::DEFAULT.vectors(n).unwrap();
        for threads in THREADS {
            for variant in VARIANTS {
                let p = params(variant, n, threads);
                if let Some((corrupted, share)) = corrupt(variant, &p, &a, &b) {
                    outcomes.push(Outcome {
                        variant,
                        n,
                        threads,
                        rejected: corrupted.iter().all(|&got| rejected(variant, &p, got)),
                        share,
                        limit: tolerance::limit(variant, &p),
                    });
                }
            }
        }
    }
    outcomes
}

fn unresolved(outcomes: &[Outcome]) -> Vec<(Variant, u64, u32)> {
    for o in outcomes {
        assert!(
            o.rejected || !o.resolvable(),
            "{:?} n {} threads {}: a corruption of {:.2e} of the sum passed a limit of {:.2e}",
            o.variant,
            o.n,
            o.threads,
            o.share,
            o.limit
        );
    }
    outcomes
        .iter()
        .filter(|o| !o.resolvable())
        .map(|o| (o.variant, o.n, o.threads))
        .collect()
}

fn every_threads(variant: Variant, sizes: &[u64]) -> Vec<(Variant, u64, u32)> {
    sizes
        .iter()
        .flat_map(|&n| THREADS.map(|t| (variant, n, t)))
        .collect()
}

#[test]
fn a_correct_sum_passes_at_every_size() {
    for n in SIZES {
        let (a, b) = Inputs::DEFAULT.vectors(n).unwrap();
        for threads in THREADS {
            for variant in VARIANTS {
                let p = params(variant, n, threads);
                let got = golden_dot(variant, &p, &a, &b);
                let check = tolerance::check(variant, &p, got);
                assert!(
                    check.passed,
                    "{variant:?} n {n} threads {threads}: {check:?}"
                );
            }
        }
    }
}

#[test]
fn a_missing_last_element_is_rejected_where_float32_resolves_it() {
    let outcomes = sweep(|variant, p, a, b| {
        let n = a.len();
        let last = (Inputs::DEFAULT.a.at(n as u64 - 1) * Inputs::DEFAULT.b.at(n as u64 - 1)) as f64;
        let share = last.abs() / Inputs::DEFAULT.abs_dot(n as u64).max(1) as f64;
        Some((
            vec![golden_dot(variant, p, &a[..n - 1], &b[..n - 1])],
            share,
        ))
    });
    // n = 1: the only element is 0·0, so nothing is lost. n = 2^26 + 7: the
    // last element is 4.5e-8 of the sum, below float32's resolution of the
    // inputs alone. dot-sm and dot-atomic at 10^6: one element is 3e-6 of
    // the sum, and a correct kernel may put a product through a block's
    // T − 1 (dot-sm; 32 + 8 roundings even at 32 threads) or the grid's
    // G − 1 (dot-atomic) additions, more than that share allows. The plan's
    // small runs (n below 5000) resolve it for every variant.
    let big = (1 << 26) + 7;
    let expected = [
        every_threads(Variant::Gm, &[1, big]),
        every_threads(Variant::Sm, &[1, 1_000_003, big]),
        every_threads(Variant::Atomic, &[1, 1_000_003, big]),
    ]
    .concat();
    let mut got = unresolved(&outcomes);
    let mut want = expected;
    got.sort_by_key(|&(v, n, t)| (v.name(), n, t));
    want.sort_by_key(|&(v, n, t)| (v.name(), n, t));
    assert_eq!(got, want);
}

#[test]
fn a_missing_or_doubled_block_is_rejected_where_float32_resolves_it() {
    let outcomes = sweep(|variant, p, a, b| {
        if p.blocks < 2 {
            return None;
        }
        // The block with the smallest share: the hardest one to miss.
        let parts = partials(p, a, b);
        let (j, smallest) = parts
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .min_by(|x, y| x.1.abs().total_cmp(&y.1.abs()))?;
        let scale = Inputs::DEFAULT.abs_dot(p.n) as f64;
        let (without, twice) = without_and_twice(variant, p, a, b, j);
        Some((vec![without, twice], f64::from(smallest.abs()) / scale))
    });
    // dot-atomic with the one-wave grid (264 to 4224 blocks): a correct
    // kernel may add one float per thread into the result, G − 1 ≥ 270000
    // f32 roundings, far more than one block's share (1/blocks) allows.
    // dot-sm and dot-gm resolve every block; dot-atomic resolves blocks
    // while 1/blocks > 2·blocks·T·u (see the plan's run with 3 to 39
    // blocks of 1024, and `a_missing_block_is_rejected_on_a_small_grid`).
    let expected = [every_threads(Variant::Atomic, &[1_000_003, (1 << 26) + 7])].concat();
    assert_eq!(unresolved(&outcomes), expected);
}

#[test]
fn the_tolerance_is_far_above_what_correct_sums_really_do() {
    // The worst case is a bound, not a guess: real errors sit well inside it.
    let n = 1_000_003;
    let (a, b) = Inputs::DEFAULT.vectors(n).unwrap();
    for variant in VARIANTS {
        let p = params(variant, n, 256);
        let got = golden_dot(variant, &p, &a, &b);
        let error = relative_error(got, Inputs::DEFAULT.dot(n), Inputs::DEFAULT.abs_dot(n));
        let limit = tolerance::limit(variant, &p);
        assert!(
            error < limit / 4.0,
            "{variant:?}: error {error:.2e}, limit {limit:.2e}"
        );
    }
}

#[test]
fn hints_name_the_classic_bugs() {
    let n = 1_000_003;
    let hint = |variant: Variant, p: &Parameters, got: f64| {
        tolerance::check(variant, p, got).hint.unwrap()
    };
    let (a, b) = Inputs::DEFAULT.vectors(n).unwrap();

    let p = params(Variant::Sm, n, 256);
    // No grid-stride loop: only the first blocks × threads elements.
    let g = p.grid_threads() as usize;
    let one_pass = golden_dot(Variant::Sm, &p, &a[..g], &b[..g]);
    assert!(hint(Variant::Sm, &p, one_pass).contains("gridDim.x"));
    // A loop bound of i < n - 1.
    let short = golden_dot(Variant::Sm, &p, &a[..g * 3], &b[..g * 3]);
    assert!(!hint(Variant::Sm, &p, short).contains("last element"));
    // One element resolves at the plan's small sizes (not at 10^6, where a
    // correct block may add in any order: see the tolerance's notes).
    let small = 4001;
    let p_small = params(Variant::Sm, small, 256);
    let no_last = golden_dot(
        Variant::Sm,
        &p_small,
        &a[..small as usize - 1],
        &b[..small as usize - 1],
    );
    assert!(hint(Variant::Sm, &p_small, no_last).contains("last element"));

    let p = params(Variant::Atomic, n, 256);
    let exact = Inputs::DEFAULT.dot(n) as f64;
    assert!(hint(Variant::Atomic, &p, 3.0 * exact).contains("zero it before each launch"));
    assert!(hint(Variant::Atomic, &p, exact / 4.0).contains("atomicAdd"));
    assert!(hint(Variant::Atomic, &p, 0.0).contains("atomicAdd"));
    assert!(hint(Variant::Atomic, &p, f64::NAN).contains("not a number"));

    // A block's share resolves on a grid of few blocks (see the tolerance's
    // notes): the plan's million run uses 3 to 39.
    let p = Parameters { blocks: 16, ..p };
    let blocks = f64::from(p.blocks);
    assert!(hint(Variant::Atomic, &p, exact * (1.0 - 1.0 / blocks)).contains("missing"));
    assert!(hint(Variant::Atomic, &p, exact * (1.0 + 1.0 / blocks)).contains("twice"));
}

#[test]
fn a_missing_block_is_rejected_on_a_small_grid() {
    // The plan's million run: few 1024-thread blocks, a = i, b = 2.
    let n = 1_000_003;
    let inputs = Inputs {
        a: Affine::new(0, 1),
        b: Affine::new(2, 0),
    };
    let (a, b) = inputs.vectors(n).unwrap();
    for blocks in [3, 16, 39] {
        let p = Parameters {
            n,
            threads: 1024,
            blocks,
            runs: 2,
            a: inputs.a,
            b: inputs.b,
            seed: None,
        };
        for variant in [Variant::Sm, Variant::Atomic] {
            assert!(!rejected(variant, &p, golden_dot(variant, &p, &a, &b)));
            let last = blocks as usize - 1;
            for j in [0, last / 2, last] {
                let (without, twice) = without_and_twice(variant, &p, &a, &b, j);
                assert!(
                    rejected(variant, &p, without) && rejected(variant, &p, twice),
                    "{variant:?} {blocks} blocks, block {j}"
                );
            }
        }
    }
}
