//! The matmul check: every entry of P against the exact product, and hints
//! that name a classic bug when the whole of P is what that bug would
//! produce. Without a seed the exact product is a closed-form table, and
//! every entry must equal it; with one, the CPU sums the exact entries and
//! their scale in f64 from the same M and N ([`super::reference`]), and
//! every entry must lie within [`super::entry_limit`] of its scale.

use super::{Parameters, Table, Variant, dense_product, entry_limit, m, n, reference};
use crate::protocol::{Check, Failure, Real, Tolerance};

/// Wrong entries listed in a check; the rest are only counted.
const LISTED_FAILURES: usize = 5;

/// Above this width, seeded inputs get only the hints that need no other
/// product than the right one: each other product is a W³ CPU computation.
const SEEDED_HINTS_UP_TO: u32 = 512;

/// Entries of a product: a closed-form table or a dense row-major matrix.
enum Product {
    Table(Table),
    Dense(Vec<f32>, u64),
}

impl Product {
    fn at(&self, i: u64, j: u64) -> f32 {
        match self {
            Product::Table(table) => table.at(i, j) as f32,
            Product::Dense(p, w) => p[(i * w + j) as usize],
        }
    }
}

/// How an operand is read.
#[derive(Clone, Copy)]
enum Read {
    Right,
    Transposed,
}

/// The matrices and what the grader knows about them.
struct Operands<'a> {
    params: &'a Parameters,
    m: &'a [f32],
    n: &'a [f32],
}

impl Operands<'_> {
    /// Σ over k below `depth` of M·N with each operand read as given, or
    /// None where that would cost a seeded product too large to afford.
    fn product(&self, depth: u64, m_read: Read, n_read: Read, always: bool) -> Option<Product> {
        let width = self.params.width;
        let w = u64::from(width);
        if self.params.seed.is_none() {
            let table = match (m_read, n_read) {
                (Read::Right, Read::Right) => Table::new(11, 13, depth, m, n),
                (Read::Transposed, Read::Right) => Table::new(11, 13, depth, |i, k| m(k, i), n),
                (Read::Right, Read::Transposed) => Table::new(11, 13, depth, m, |k, j| n(j, k)),
                (Read::Transposed, Read::Transposed) => {
                    Table::new(11, 13, depth, |i, k| m(k, i), |k, j| n(j, k))
                }
            };
            return Some(Product::Table(table));
        }
        if !always && width > SEEDED_HINTS_UP_TO {
            return None;
        }
        let at = |read: Read| {
            move |r: u64, c: u64| match read {
                Read::Right => r * w + c,
                Read::Transposed => c * w + r,
            }
        };
        Some(Product::Dense(
            dense_product(self.m, self.n, width, depth, at(m_read), at(n_read)),
            w,
        ))
    }
}

/// Compares every entry of `p` with the exact product of `m` and `n` (the
/// inputs the run gave the GPU; unused without a seed, where the closed form
/// is the reference).
pub fn check(variant: Variant, params: &Parameters, m: &[f32], n: &[f32], p: &[f32]) -> Check {
    let w = u64::from(params.width);
    let criterion = match params.seed {
        None => "every P[i][j] equals Σ_k M[i][k]·N[k][j] exactly".to_owned(),
        Some(seed) => format!(
            "every P[i][j] is Σ_k M[i][k]·N[k][j] as float32 sums it in any order, with M and \
             N drawn from seed {seed}"
        ),
    };
    let operands = Operands { params, m, n };
    let complete = m.len() as u64 == w * w && n.len() as u64 == w * w;
    if p.len() as u64 != w * w || (params.seed.is_some() && !complete) {
        return Check {
            passed: false,
            criterion,
            compared: w * w,
            wrong: w * w,
            failures: vec![],
            tolerance: None,
            hint: Some(format!(
                "P came back with {} entries, not W·W = {}: copy the whole of P back",
                p.len(),
                w * w
            )),
        };
    }
    let mut wrong = 0;
    let mut failures = Vec::new();
    let mut fail = |x: usize, want: f64, got: f32| {
        wrong += 1;
        if failures.len() < LISTED_FAILURES {
            failures.push(Failure {
                at: format!("P[{}][{}]", x as u64 / w, x as u64 % w),
                expected: Real(want),
                got: Real(f64::from(got)),
            });
        }
    };
    let tolerance = match params.seed {
        None => {
            let right = operands
                .product(w, Read::Right, Read::Right, true)
                .expect("the right product is always computed");
            for (x, &got) in p.iter().enumerate() {
                let want = right.at(x as u64 / w, x as u64 % w);
                // Exact: every partial sum is exact in f32. NaN (never
                // written) never equals.
                if got != want {
                    fail(x, f64::from(want), got);
                }
            }
            None
        }
        Some(_) => {
            let (value, scale) = reference(m, n, params.width);
            let limit = entry_limit(params.width);
            let mut worst: f64 = 0.0;
            for (x, &got) in p.iter().enumerate() {
                let error = (f64::from(got) - value[x]).abs();
                // NaN compares false: a NaN entry fails.
                let within = error <= limit * scale[x];
                if !within {
                    fail(x, value[x], got);
                }
                let relative = if error == 0.0 { 0.0 } else { error / scale[x] };
                // NaN (never written) is the worst there is.
                worst = if relative.is_nan() {
                    f64::INFINITY
                } else {
                    worst.max(relative)
                };
            }
            Some(Tolerance {
                relative_error: Real(worst),
                limit,
            })
        }
    };
    let criterion = match &tolerance {
        None => criterion,
        Some(t) => format!(
            "{criterion}, within {:.2e} of Σ_k |M[i][k]·N[k][j]|",
            t.limit
        ),
    };
    Check {
        passed: wrong == 0,
        criterion,
        compared: w * w,
        wrong,
        failures,
        tolerance,
        hint: (wrong > 0).then(|| hint(variant, &operands, p)),
    }
}

/// The first classic bug whose output is `p` (exactly; with drawn inputs,
/// within the bound of a sum of W products of the largest magnitudes, as
/// the bug's product may have been added in another order), or a general
/// hint.
fn hint(variant: Variant, operands: &Operands, p: &[f32]) -> String {
    let params = operands.params;
    let width = params.width;
    let w = u64::from(width);
    let edge = u64::from(params.block);
    let right = operands
        .product(w, Read::Right, Read::Right, true)
        .expect("the right product is always computed");
    let whole = |i: u64, j: u64| right.at(i, j);
    let largest = |v: &[f32]| v.iter().fold(0.0f64, |top, x| top.max(f64::from(x.abs())));
    let slack = match params.seed {
        None => 0.0,
        Some(_) => 2.0 * entry_limit(width) * w as f64 * largest(operands.m) * largest(operands.n),
    };
    let is = |predict: &dyn Fn(u64, u64) -> f32| {
        p.iter().enumerate().all(|(x, &got)| {
            let want = predict(x as u64 / w, x as u64 % w);
            (f64::from(got) - f64::from(want)).abs() <= slack || (got.is_nan() && want.is_nan())
        })
    };
    let is_product = |product: Option<Product>| product.is_some_and(|q| is(&|i, j| q.at(i, j)));

    // P is filled with NaN before the kernel runs: NaN means never written,
    // or summed from memory past the end of M or N.
    if p.iter().all(|x| x.is_nan()) {
        return "every entry of P is NaN: either nothing was written (write the kernel, launch a \
                grid that covers P, pass m, n, p and the width in the kernel's order), or every \
                sum read past the end of M or N"
            .into();
    }
    let covered = w - w % edge;
    if covered < w
        && is(&|i, j| {
            if i < covered && j < covered {
                whole(i, j)
            } else {
                f32::NAN
            }
        })
    {
        return format!(
            "the last {} rows and columns were never written: the grid needs ⌈W / block⌉ = {} \
             blocks each way, with the kernel testing row < width and col < width",
            w - covered,
            w.div_ceil(edge)
        );
    }
    if is(&|i, j| whole(j, i)) {
        return "P came out transposed: row and column are swapped. threadIdx.x should pick the \
                column (so a warp's threads touch consecutive addresses) and threadIdx.y the row"
            .into();
    }
    if is_product(operands.product(w, Read::Transposed, Read::Right, false)) {
        return "M is read transposed: M[row][k] is at m[row * width + k]".into();
    }
    if is_product(operands.product(w, Read::Right, Read::Transposed, false)) {
        return "N is read transposed: N[k][col] is at n[k * width + col]".into();
    }
    if variant == Variant::Tiled
        && covered < w
        && is_product(operands.product(covered, Read::Right, Read::Right, false))
    {
        return format!(
            "the last tile along k, only {} wide, was skipped: loop over ⌈W / TILE⌉ tiles and \
             load zeros where a tile reaches past the matrix",
            w - covered
        );
    }
    if p.iter().any(|x| x.is_nan()) {
        return "some entries of P are NaN: they were never written (check the grid size and the \
                bounds test on row and col), or their sums read past the end of M or N (check \
                the bounds tests on the loads)"
            .into();
    }
    match variant {
        Variant::Naive => "some entries are wrong: each thread should sum m[row * width + k] * \
                           n[k * width + col] over every k below width"
            .into(),
        Variant::Tiled => "some entries are wrong: check each phase's load indices (tile * TILE + \
                           threadIdx.x for M's column, tile * TILE + threadIdx.y for N's row), \
                           that each tile is indexed [ty][tx] where it is stored and [ty][k], \
                           [k][tx] where it is read (one of them swapped multiplies the wrong \
                           slots), the zeros past the edge, and the two __syncthreads() per phase"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::Inputs;

    /// Both kinds of input: the default and a seed.
    const SEEDS: [Option<u64>; 2] = [None, Some(9)];

    /// What a kernel produces, entry by entry, as a row-major matrix.
    fn computed(width: u32, entry: impl Fn(u64, u64) -> f32) -> Vec<f32> {
        let w = u64::from(width);
        (0..w * w).map(|x| entry(x / w, x % w)).collect()
    }

    /// A kernel's entry from the flat input arrays, as a GPU reads them:
    /// `m_at(i, k)` and `n_at(k, j)` give the flat indices it reads (None
    /// where it loads a zero), over k in 0..depth. A read past the end of an
    /// array gets whatever memory holds there: NaN here.
    fn sum_with(
        seed: Option<u64>,
        width: u32,
        depth: u64,
        m_at: impl Fn(u64, u64) -> Option<u64>,
        n_at: impl Fn(u64, u64) -> Option<u64>,
    ) -> Vec<f32> {
        let (m_host, n_host) = Inputs { seed }.matrices(width).unwrap();
        let read = |v: &[f32], at: Option<u64>| match at {
            None => 0.0,
            Some(x) => v.get(x as usize).copied().unwrap_or(f32::NAN),
        };
        computed(width, |i, j| {
            (0..depth)
                .map(|k| read(&m_host, m_at(i, k)) * read(&n_host, n_at(k, j)))
                .sum()
        })
    }

    fn params(width: u32, block: u32) -> Parameters {
        Parameters {
            width,
            block,
            runs: 1,
            seed: None,
        }
    }

    /// The check of `p` against the inputs `seed` gives at this width.
    fn check_of(variant: Variant, seed: Option<u64>, width: u32, block: u32, p: &[f32]) -> Check {
        let (m_host, n_host) = Inputs { seed }.matrices(width).unwrap();
        let params = Parameters {
            seed,
            ..params(width, block)
        };
        check(variant, &params, &m_host, &n_host, p)
    }

    const WIDTHS: [u32; 6] = [7, 17, 31, 33, 100, 129];

    /// How a kernel sums an entry's W products.
    #[derive(Clone, Copy, Debug)]
    enum Order {
        Forward,
        Backward,
        /// Fused multiply-adds, k rising.
        Fused,
        /// Tiles of this edge: each tile's products summed from zero (the
        /// padding's zeros included), then added to the running sum.
        Tiles(usize),
        /// Products added straight into the running sum tile by tile, the
        /// padding's zero products too (the course's tiled kernel).
        Padded(usize),
        /// A pairwise tree over k.
        Tree,
        /// Summed in f64, stored as f32.
        Double,
    }

    fn pairwise(x: &[f32]) -> f32 {
        match x.len() {
            0 => 0.0,
            1 => x[0],
            len => pairwise(&x[..len / 2]) + pairwise(&x[len / 2..]),
        }
    }

    fn entries(m: &[f32], n: &[f32], width: u32, order: Order) -> Vec<f32> {
        let w = width as usize;
        computed(width, |i, j| {
            let (i, j) = (i as usize, j as usize);
            let product = |k: usize| m[i * w + k] * n[k * w + j];
            match order {
                Order::Forward => (0..w).fold(0.0f32, |s, k| s + product(k)),
                Order::Backward => (0..w).rev().fold(0.0f32, |s, k| s + product(k)),
                Order::Fused => (0..w).fold(0.0f32, |s, k| m[i * w + k].mul_add(n[k * w + j], s)),
                Order::Tiles(t) => (0..w.div_ceil(t)).fold(0.0f32, |s, tile| {
                    s + (tile * t..(tile + 1) * t)
                        .map(|k| if k < w { product(k) } else { 0.0 })
                        .fold(0.0f32, |a, x| a + x)
                }),
                Order::Padded(t) => (0..w.div_ceil(t) * t)
                    .fold(0.0f32, |s, k| s + if k < w { product(k) } else { 0.0 }),
                Order::Tree => pairwise(&(0..w).map(product).collect::<Vec<f32>>()),
                Order::Double => (0..w)
                    .map(|k| f64::from(m[i * w + k]) * f64::from(n[k * w + j]))
                    .sum::<f64>() as f32,
            }
        })
    }

    const ORDERS: [Order; 9] = [
        Order::Forward,
        Order::Backward,
        Order::Fused,
        Order::Tiles(16),
        Order::Tiles(32),
        Order::Padded(16),
        Order::Padded(32),
        Order::Tree,
        Order::Double,
    ];

    /// Every summation order a correct kernel may use passes on drawn
    /// inputs at the widths the plan reaches (below a block, partial tiles,
    /// the largest block's middle widths, the timed 1024), at several
    /// seeds; the worst error over its bound is printed.
    #[test]
    fn every_summation_order_passes_drawn_inputs_at_the_plan_s_widths() {
        for seed in [1u64, 2026] {
            for width in [1, 2, 15, 17, 33, 63, 100, 299] {
                let inputs = Inputs { seed: Some(seed) };
                let (m_host, n_host) = inputs.matrices(width).unwrap();
                for order in ORDERS {
                    let p = entries(&m_host, &n_host, width, order);
                    let check = check_of(Variant::Tiled, Some(seed), width, 16, &p);
                    let t = check.tolerance.clone().unwrap();
                    assert!(
                        check.passed,
                        "W {width} {order:?} seed {seed}: {:?}",
                        check.failures
                    );
                    println!(
                        "W {width} {order:?}: worst / bound {:.3}",
                        t.relative_error.0 / t.limit
                    );
                }
            }
        }
        // The timed width, in the course kernels' own orders.
        let width = 1024;
        let (m_host, n_host) = Inputs { seed: Some(5) }.matrices(width).unwrap();
        for order in [Order::Forward, Order::Padded(32)] {
            let p = entries(&m_host, &n_host, width, order);
            assert!(
                check_of(Variant::Tiled, Some(5), width, 32, &p).passed,
                "{order:?}"
            );
        }
    }

    /// A kernel that rounds M and N to half precision or bfloat16 before
    /// multiplying fails at the plan's small and middle widths; one that
    /// drops the last k fails too.
    #[test]
    fn half_precision_and_dropping_kernels_fail_drawn_inputs() {
        for seed in [3u64, 7] {
            for width in [2u32, 9, 17, 33, 150] {
                let w = width as usize;
                let (m_host, n_host) = Inputs { seed: Some(seed) }.matrices(width).unwrap();
                for bits in [11, 8] {
                    let short = |v: &[f32]| {
                        v.iter()
                            .map(|&x| crate::seeded::rounded_to_significand(x, bits))
                            .collect::<Vec<f32>>()
                    };
                    let p = entries(&short(&m_host), &short(&n_host), width, Order::Forward);
                    let check = check_of(Variant::Naive, Some(seed), width, 16, &p);
                    assert!(
                        !check.passed && check.wrong > (w * w / 2) as u64,
                        "W {width} {bits} bits: {} wrong",
                        check.wrong
                    );
                }
                let dropped = computed(width, |i, j| {
                    let (i, j) = (i as usize, j as usize);
                    (0..w - 1).fold(0.0f32, |s, k| s + m_host[i * w + k] * n_host[k * w + j])
                });
                let check = check_of(Variant::Naive, Some(seed), width, 16, &dropped);
                assert!(
                    !check.passed && check.wrong > (w * w / 2) as u64,
                    "W {width} dropped"
                );
            }
        }
    }

    #[test]
    fn the_right_product_passes() {
        for (seed, width) in SEEDS.into_iter().flat_map(|s| WIDTHS.map(|w| (s, w))) {
            let w = u64::from(width);
            let p = sum_with(
                seed,
                width,
                w,
                |i, k| Some(i * w + k),
                |k, j| Some(k * w + j),
            );
            assert!(
                check_of(Variant::Tiled, seed, width, 16, &p).passed,
                "W {width}"
            );
        }
    }

    /// A kernel that accumulates in `int` (each product truncated as it is
    /// added) passes the integer default inputs and fails seeded ones.
    #[test]
    fn an_int_accumulator_fails_seeded_inputs() {
        for (seed, passes) in [(None, true), (Some(2026), false)] {
            let width = 33;
            let w = u64::from(width);
            let (m_host, n_host) = Inputs { seed }.matrices(width).unwrap();
            let p: Vec<f32> = (0..w * w)
                .map(|x| {
                    let (i, j) = (x / w, x % w);
                    (0..w)
                        .map(|k| {
                            (m_host[(i * w + k) as usize] * n_host[(k * w + j) as usize]) as i32
                        })
                        .sum::<i32>() as f32
                })
                .collect();
            let check = check_of(Variant::Naive, seed, width, 16, &p);
            assert_eq!(check.passed, passes, "{seed:?}");
            if !passes {
                assert!(check.wrong > w * w * 9 / 10, "{}", check.wrong);
                assert!(check.criterion.contains("seed 2026"));
            }
        }
    }

    /// Each classic bug, as the matrix it produces, is rejected with its hint.
    #[test]
    fn each_classic_bug_is_rejected_with_its_hint() {
        for (seed, width) in SEEDS.into_iter().flat_map(|s| WIDTHS.map(|w| (s, w))) {
            let w = u64::from(width);
            for tile in [16u32, 32] {
                let t = u64::from(tile);
                let full = w - w % t;
                let bugs: Vec<(&str, Variant, Vec<f32>, &str)> = vec![
                    (
                        "M transposed",
                        Variant::Naive,
                        sum_with(
                            seed,
                            width,
                            w,
                            |i, k| Some(k * w + i),
                            |k, j| Some(k * w + j),
                        ),
                        "M is read transposed",
                    ),
                    (
                        "N transposed",
                        Variant::Naive,
                        sum_with(
                            seed,
                            width,
                            w,
                            |i, k| Some(i * w + k),
                            |k, j| Some(j * w + k),
                        ),
                        "N is read transposed",
                    ),
                    (
                        "row and column swapped",
                        Variant::Naive,
                        {
                            let right = sum_with(
                                seed,
                                width,
                                w,
                                |i, k| Some(i * w + k),
                                |k, j| Some(k * w + j),
                            );
                            computed(width, |i, j| right[(j * w + i) as usize])
                        },
                        "transposed",
                    ),
                    (
                        "grid of ⌊W / block⌋ blocks",
                        Variant::Naive,
                        {
                            let right = sum_with(
                                seed,
                                width,
                                w,
                                |i, k| Some(i * w + k),
                                |k, j| Some(k * w + j),
                            );
                            computed(width, |i, j| {
                                if i < full && j < full {
                                    right[(i * w + j) as usize]
                                } else {
                                    f32::NAN
                                }
                            })
                        },
                        // A grid of zero blocks (W < block) writes nothing at all.
                        if full == 0 {
                            "every entry of P is NaN"
                        } else {
                            "never written"
                        },
                    ),
                    (
                        "last partial k tile skipped",
                        Variant::Tiled,
                        sum_with(
                            seed,
                            width,
                            full,
                            |i, k| Some(i * w + k),
                            |k, j| Some(k * w + j),
                        ),
                        "last tile along k",
                    ),
                    (
                        "tile loads without the edge test (read on past the row)",
                        Variant::Tiled,
                        sum_with(
                            seed,
                            width,
                            w.div_ceil(t) * t,
                            |i, k| Some(i * w + k),
                            |k, j| Some(k * w + j),
                        ),
                        "NaN",
                    ),
                    (
                        "N's tile loaded one row off",
                        Variant::Tiled,
                        sum_with(
                            seed,
                            width,
                            w,
                            |i, k| Some(i * w + k),
                            |k, j| (k + 1 < w).then_some((k + 1) * w + j),
                        ),
                        "some entries are wrong",
                    ),
                ];
                for (bug, variant, p, hint) in bugs {
                    if w % t == 0 && bug.contains("tile") || full == w && bug.contains("grid") {
                        continue; // Without a partial tile these bugs do no harm.
                    }
                    let check = check_of(variant, seed, width, tile, &p);
                    assert!(!check.passed, "{bug} passed at W {width}, tile {tile}");
                    let said = check.hint.unwrap_or_default();
                    assert!(
                        said.contains(hint),
                        "{bug} at W {width}, tile {tile}: hint {said:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_short_p_is_a_failure_not_a_panic() {
        let check = check(Variant::Naive, &params(4, 16), &[], &[], &[0.0; 3]);
        assert!(!check.passed);
        assert!(check.hint.unwrap().contains("3 entries"));
    }

    /// Weights for Freivalds' check as the harness draws them: ±[½, 1).
    fn weights(width: u32, salt: u64) -> Vec<f64> {
        (0..u64::from(width))
            .map(|j| {
                let h = f64::from(crate::seeded::drawn(salt, 7, j));
                h.signum() * (0.5 + h.abs().fract() / 2.0)
            })
            .collect()
    }

    /// Freivalds' check, which every timed launch's P gets
    /// (`fresh_inputs`), never fails a right P in any summation order, at
    /// drawn and default inputs, at several weights; the worst distance
    /// over its bound is printed.
    #[test]
    fn freivalds_passes_every_summation_order() {
        for (seed, width) in [(None, 33), (Some(1u64), 1), (Some(2), 17), (Some(3), 100)]
            .into_iter()
            .chain([(Some(2026), 299), (None, 299)])
        {
            let (m_host, n_host) = Inputs { seed }.matrices(width).unwrap();
            for order in ORDERS {
                let p = entries(&m_host, &n_host, width, order);
                for salt in [1u64, 99, 12345] {
                    let x = weights(width, salt);
                    assert_eq!(
                        crate::matmul::freivalds(&m_host, &n_host, &p, width, &x),
                        None,
                        "W {width} {order:?} seed {seed:?} salt {salt}"
                    );
                }
            }
        }
        // The timed width, in the course kernels' own orders.
        let width = 1024;
        let (m_host, n_host) = Inputs { seed: Some(5) }.matrices(width).unwrap();
        for order in [Order::Forward, Order::Padded(32), Order::Fused] {
            let p = entries(&m_host, &n_host, width, order);
            let x = weights(width, 8);
            assert_eq!(
                crate::matmul::freivalds(&m_host, &n_host, &p, width, &x),
                None,
                "{order:?}"
            );
        }
    }

    /// Freivalds' check fails the answer to other inputs (a kept answer),
    /// a P right but for one entry kept from other inputs, an entry left
    /// NaN, and a P of the wrong size. (It weighs a row's entries together,
    /// so a row's rounding budget hides an entry off by a part in a
    /// thousand at W = 200: the exercise's own check of the last launch
    /// reads every entry.)
    #[test]
    fn freivalds_fails_a_kept_answer_and_a_wrong_entry() {
        for width in [1u32, 7, 33, 200] {
            let (m_host, n_host) = Inputs { seed: Some(4) }.matrices(width).unwrap();
            let (m_old, n_old) = Inputs { seed: Some(5) }.matrices(width).unwrap();
            let x = weights(width, 3);
            let kept = entries(&m_old, &n_old, width, Order::Forward);
            assert!(crate::matmul::freivalds(&m_host, &n_host, &kept, width, &x).is_some());
            let mut p = entries(&m_host, &n_host, width, Order::Forward);
            let last = p.len() - 1;
            p[last] = kept[last];
            let failed = crate::matmul::freivalds(&m_host, &n_host, &p, width, &x);
            assert_eq!(failed.map(|f| f.0), Some(width as usize - 1), "W {width}");
            p[last] = f32::NAN;
            assert!(crate::matmul::freivalds(&m_host, &n_host, &p, width, &x).is_some());
            assert!(crate::matmul::freivalds(&m_host, &n_host, &p[1..], width, &x).is_some());
        }
    }
}
