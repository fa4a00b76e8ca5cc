//! How far a correct float32 dot product may be from the exact one, the check
//! against that limit, and hints read from the size of a wrong answer.
//!
//! Every IEEE rounding to nearest multiplies a result by (1 + δ), |δ| ≤ u
//! (u = 2^-24 for f32, 2^-53 for f64). A product that passes through h
//! roundings on its way into the result carries a factor within 1 ± γ_h,
//! γ_h = h·u / (1 − h·u) (Higham, *Accuracy and Stability of Numerical
//! Algorithms*, §3.1). If no product passes through more than h roundings,
//!
//! ```text
//! |computed − exact| ≤ γ_h · Σ|a[i]·b[i]|
//! ```
//!
//! whatever the order of the additions. That is the tolerance: the error,
//! relative to Σ|a·b| (which is |dot| when all products share a sign), may be
//! at most γ_h. h must hold for every order a correct kernel may add in,
//! not only the course solution's, so it counts the longest chain of
//! additions any such kernel can put a product through:
//!
//! - its inputs: p + q·i stored as f32 rounds only above 2^24; 1 for each of
//!   a and b that does; drawn values (`--seed`) are f32s and never round;
//! - the multiplication: 1 (0 when fused into the following add);
//! - the thread's own sum of its k elements, in any order: at most k − 1;
//! - dot-gm: none more in f32; the host adds the n products in f64, and the
//!   comparison rounds the exact value to f64 once: γ_n in f64;
//! - dot-sm: the block's combination of its T threads' sums, in any order
//!   (a tree in either addressing, warp shuffles then a second level, one
//!   shared `atomicAdd` per warp or per thread, a serial loop): any binary
//!   combination of T values puts a value through at most T − 1 additions.
//!   The host adds the partials in f64: γ_blocks in f64;
//! - dot-atomic: the grid's combination of its G threads' sums into one
//!   float, in any order (a tree per block then one `atomicAdd` per block,
//!   one per warp, or one per thread): at most G − 1 additions, G counting
//!   only threads that hold an element (min(G, n)).
//!
//! So h = stored + 1 + (k − 1) + (T − 1) for dot-sm, and for dot-atomic
//! h = stored + 1 + (k − 1) + (min(G, n) − 1). Counting only the solution's own
//! structure (log2 T tree levels, blocks − 1 atomics) failed correct kernels:
//! at `--a 3 --b 1000 --threads 1024` and the default n on an H100 grid, one
//! `atomicAdd` per warp errs about 3 times that bound. Orders outside this
//! model (a product added straight into a shared total with no per-thread
//! sum, one `atomicAdd` per element) can put a product through n − 1
//! additions; the exercises teach per-thread sums first, and γ_{n−1} is
//! infinite at the default n, so such kernels are not covered.
//! `kernels/tests/dot_orders.rs` runs many orders at the plan's extremes.
//!
//! k, the most elements one thread sums, is ⌈n/G⌉ for G threads taking one
//! float at a time; a kernel reading float4 takes up to 4⌈n/4G⌉ plus one of
//! the n mod 4 left over. The bound uses the larger.
//!
//! The bound is a worst case, so it never fails a correct kernel; the
//! errors kernels really make are far smaller. What it can catch is limited
//! by float32 itself: a missing element or block is only certain to fail
//! when its share of Σ|a·b| exceeds twice the bound. With the default inputs
//! (a = i, b = 2i) the last element is 3/n of the sum: resolved by dot-gm
//! and dot-sm up to n ≈ 10^6 (not at 2^26, where it is below one f32 ulp of
//! the sum), by dot-atomic while 3/n > 2·n·u, up to n ≈ 5000. A block is
//! 1/blocks of the sum: always resolved by dot-sm; by dot-atomic only while
//! 1/blocks > 2·blocks·T·u (blocks below about 90 of 1024 threads, 180 of
//! 256), so not with the default one-wave grid. The tests in
//! `kernels/tests/dot_tolerance.rs` pin these limits down case by case.
//!
//! The grader's runs draw a and b from a seed (`seeded::drawn`: both signs,
//! magnitudes from 1/8 to 16, every value needing all 24 bits). The exact
//! dot and Σ|a·b| are then sums of exact products in fixed point
//! (`dot::Exact`), the bound the same γ_h · Σ|a·b|. With mixed signs the
//! dot is far smaller than Σ|a·b|, so no closed form nor |dot| stands in for
//! the scale; and every product lies between 1/64 and 256 in magnitude, so
//! a dropped element is at least 1/(64·256·n) of Σ|a·b|, resolved wherever
//! that exceeds twice γ_h. A kernel that rounds its inputs to half precision
//! errs by about 2^−11 of each product, random in sign: at one element, or
//! a few thousand in blocks of one warp, far past γ_h
//! (`kernels/tests/dot_orders.rs`).

use super::{Exact, Parameters, Variant};
use crate::protocol::{Check, Failure, Real, Tolerance};

/// Unit roundoff of f32 and f64 (round to nearest).
pub const U_F32: f64 = 1.0 / (1u64 << 24) as f64;
pub const U_F64: f64 = 1.0 / (1u64 << 53) as f64;

/// γ_h = h·u / (1 − h·u): the bound on h roundings' combined relative error.
pub fn gamma(h: u64, u: f64) -> f64 {
    let hu = h as f64 * u;
    if hu >= 1.0 {
        f64::INFINITY
    } else {
        hu / (1.0 - hu)
    }
}

/// The most roundings a product passes through, in f32 and in f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roundings {
    pub f32: u64,
    pub f64: u64,
}

impl Roundings {
    /// The exercise's summation, as the module documentation derives it.
    pub fn of(variant: Variant, params: &Parameters) -> Roundings {
        let stored = params.values().stored_roundings(params.n);
        let product = 1;
        let grid = params.grid_threads();
        let k = elements_per_thread(params.n, grid);
        // Threads and blocks holding no element add nothing that rounds.
        let block = u64::from(params.threads).min(params.n).max(1);
        let live_threads = grid.min(params.n).max(1);
        let blocks = u64::from(params.blocks);
        match variant {
            Variant::Gm => Roundings {
                f32: stored + product,
                f64: params.n,
            },
            Variant::Sm => Roundings {
                f32: stored + product + (k - 1) + (block - 1),
                f64: blocks,
            },
            Variant::Atomic => Roundings {
                f32: stored + product + (k - 1) + (live_threads - 1),
                f64: 1,
            },
        }
    }

    /// The relative error (of Σ|a·b|) a correct computation stays within.
    pub fn limit(self) -> f64 {
        (1.0 + gamma(self.f32, U_F32)) * (1.0 + gamma(self.f64, U_F64)) - 1.0
    }
}

/// The most elements one of `grid` threads sums: one float at a time, or
/// four (float4) plus one of the leftovers. At least 1.
pub fn elements_per_thread(n: u64, grid: u64) -> u64 {
    let grid = grid.max(1);
    let scalar = n.div_ceil(grid);
    let vector = 4 * n.div_ceil(4).div_ceil(grid) + 1;
    scalar.max(vector).min(n).max(1)
}

/// The tolerance of `variant` at these parameters.
pub fn limit(variant: Variant, params: &Parameters) -> f64 {
    Roundings::of(variant, params).limit()
}

/// |got − exact| / Σ|a·b| for integer exact values (affine inputs); 0 when
/// both are 0, infinite when only the scale is.
pub fn relative_error(got: f64, exact: i128, scale: i128) -> f64 {
    Exact {
        dot: exact,
        abs: scale,
        exponent: 0,
    }
    .relative_error(got)
}

/// Checks the dot product `got` that an exercise computed with `params`.
pub fn check(variant: Variant, params: &Parameters, got: f64) -> Check {
    check_against(variant, params, got, &params.values().exact(params.n))
}

/// [`check`], with the exact dot of the run's values already computed.
pub fn check_against(variant: Variant, params: &Parameters, got: f64, exact: &Exact) -> Check {
    let limit = limit(variant, params);
    let error = exact.relative_error(got);
    // NaN compares false: a NaN result fails.
    let passed = error <= limit;
    Check {
        passed,
        criterion: format!(
            "the dot of {} within {limit:.2e} of Σ|a·b| of the exact {}",
            params.values().describe(),
            exact.text()
        ),
        compared: 1,
        wrong: u64::from(!passed),
        failures: if passed {
            vec![]
        } else {
            vec![Failure {
                at: "dot".into(),
                expected: Real(exact.dot_f64()),
                got: Real(got),
            }]
        },
        tolerance: Some(Tolerance {
            relative_error: Real(error),
            limit,
        }),
        hint: if passed {
            None
        } else {
            Some(hint(variant, params, got, limit, exact))
        },
    }
}

/// What a wrong result's size suggests. Each explanation predicts a value;
/// the first one `got` matches (within the tolerance) names the bug.
fn hint(variant: Variant, params: &Parameters, got: f64, limit: f64, whole: &Exact) -> String {
    let values = params.values();
    let (n, blocks) = (params.n, params.blocks);
    let exact = whole.dot_f64();
    let scale = match whole.abs {
        0 => 1.0,
        _ => whole.scale_f64(),
    };
    let matches = |predicted: f64| (got - predicted).abs() <= limit * scale;
    // The dot of the first m elements (for drawn values, a sum over them:
    // a hint is only written for a failing run).
    let first = |m: u64| values.exact_range(0, m).dot_f64();

    if !got.is_finite() {
        if variant == Variant::Atomic {
            return "the result is not a number: the course fills it with NaN before every \
                    launch, so zero it in the launch closure before each launch; or a value \
                    was read before anything wrote it (uninitialised shared memory)"
                .into();
        }
        return "the result is not a number: a value was read before anything wrote it \
                (an unwritten partial or product, or uninitialised shared memory)"
            .into();
    }
    if got == 0.0 && exact != 0.0 {
        return match variant {
            Variant::Gm => {
                "the result is 0: no product reached c; write step 1 and pass c to the kernel"
            }
            Variant::Sm => {
                "the result is 0: no block's partial arrived; thread 0 of each block must \
                            store cache[0] into partials[blockIdx.x]"
            }
            Variant::Atomic => {
                "the result is 0: nothing was added; thread 0 of each block must \
                                atomicAdd its partial into the result"
            }
        }
        .into();
    }
    if n >= 2 && matches(first(n - 1)) {
        return "exactly the last element is missing: the loop must run while i < n".into();
    }
    let grid = params.grid_threads();
    for covered in [grid, 4 * grid] {
        if covered < n && matches(first(covered)) {
            return format!(
                "only the first {covered} elements were summed, one pass of the grid: \
                 each thread must loop, stepping by the whole grid (blockDim.x * gridDim.x)"
            );
        }
    }
    if variant == Variant::Atomic {
        let launches = params.runs + crate::stats::WARMUP_RUNS;
        if let Some(times) = (2..=launches).find(|&m| matches(f64::from(m) * exact)) {
            return format!(
                "the result is {times} times the dot product: every launch added into the same \
                 float; zero it before each launch"
            );
        }
    }
    // A block's share of the dot is a fraction of it only where the
    // products share a sign, as affine inputs' mostly do.
    let affine = matches!(values, super::Values::Affine(_));
    if affine && variant.reduces_in_blocks() && exact != 0.0 && blocks >= 2 {
        let missing = (exact - got) / exact * f64::from(blocks);
        if (missing - 1.0).abs() < 0.25 {
            return format!(
                "about one block's share (1/{blocks}) is missing: does every block deliver its partial?"
            );
        }
        if (missing + 1.0).abs() < 0.25 {
            return format!(
                "about one block's share (1/{blocks}) too much: is a partial counted twice?"
            );
        }
        let arrived = got / exact;
        if variant == Variant::Atomic && arrived > 0.0 && arrived < 0.9 {
            return format!(
                "only {:.0}% of the dot product arrived: partials were lost. `*result += partial` \
                 from many blocks races (each reads, adds and writes back); atomicAdd makes \
                 each addition indivisible",
                arrived * 100.0
            );
        }
    }
    match variant {
        Variant::Gm => "some products are wrong: each thread should store a[i] * b[i] into c[i] for its own i".into(),
        Variant::Sm | Variant::Atomic => "the error is not a whole element or block: if it changes from run to run, \
                                          a __syncthreads() is missing between the reduction's steps, or \
                                          the tree reads a slot another thread has not written yet"
            .into(),
    }
}
