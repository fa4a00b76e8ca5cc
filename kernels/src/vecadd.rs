//! vecadd-anyN, the pure part: inputs, closed forms, the check and its hints,
//! and the exercise's protocol types. The grader uses these without a GPU.

use serde::{Deserialize, Serialize};

use crate::host_memory::{self, HostAllocError};
use crate::protocol::{Check, Failure, Real};
use crate::seeded;

#[cfg(feature = "runtime")]
pub mod driver;

pub const NAME: &str = crate::catalogue::ExerciseId::VecaddAnyN.name();

/// Without a seed, inputs repeat with this period so every value, and every
/// sum, is a small integer: exact in f32, so the check can demand exact
/// equality.
pub const PERIOD: u64 = 4096;

/// With a seed, inputs are drawn values (`seeded::drawn`: both signs,
/// magnitudes from 1/8 to 16, all 24 bits of the significand), and repeat
/// with this period, a prime (no block, grid or vector width divides it,
/// and an index that wraps at 2^31 lands on other values): one period is
/// drawn, so a run above 2^31 elements, whose a and b the course's kernels
/// make on the GPU from that period (`inputs_on_gpu`), costs table
/// look-ups rather than hashes, and its checksum one period's sum. No few
/// elements reveal the others: a kernel must read a\[i] and b\[i] for c\[i].
pub const SEEDED_PERIOD: u64 = 1_000_003;

/// Bytes the kernel must move per element: read a\[i] and b\[i], write c\[i].
pub const BYTES_PER_ELEMENT: u64 = 12;

/// The default vector length: larger than any default grid, and not a
/// multiple of any block size, so both a missing loop and a missing bounds
/// check show.
pub const DEFAULT_N: u64 = (1 << 25) + 3;

/// The default on the CPU emulator: still no multiple of a block size.
pub const EMULATOR_N: u64 = 1_000_003;

/// Threads per block where `--threads` is not given.
pub const DEFAULT_THREADS: u32 = 256;

/// The largest `--n` accepted before asking the GPU: 2^36 elements need
/// 825 GB for a, b and c, more than any GPU holds.
pub const MAX_N: u64 = 1 << 36;

/// Failures listed in a check; the rest are only counted.
const LISTED_FAILURES: usize = 5;

/// Where a and b come from: the readable default (a\[i] = i mod 4096,
/// b\[i] = 2·(i mod 4096)), or values drawn from a seed, which the grader
/// passes so that no kernel can produce c without reading a and b.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    pub seed: Option<u64>,
}

impl Inputs {
    pub fn a(self, i: u64) -> f32 {
        match self.seed {
            None => (i % PERIOD) as f32,
            Some(seed) => seeded::drawn(seed, 1, i % SEEDED_PERIOD),
        }
    }

    pub fn b(self, i: u64) -> f32 {
        match self.seed {
            None => (2 * (i % PERIOD)) as f32,
            Some(seed) => seeded::drawn(seed, 2, i % SEEDED_PERIOD),
        }
    }

    /// `f(i)` for i below `n`, as a function that draws each seeded value
    /// once: a period's table, looked up modulo [`SEEDED_PERIOD`].
    fn tabled(self, n: u64, f: impl Fn(u64) -> f32 + Sync) -> impl Fn(u64) -> f32 + Sync {
        let table: Vec<f32> = match self.seed {
            Some(_) => (0..n.min(SEEDED_PERIOD)).map(&f).collect(),
            None => Vec::new(),
        };
        move |i| match table.is_empty() {
            true => f(i),
            false => table[(i % SEEDED_PERIOD) as usize],
        }
    }

    /// c\[i] = a\[i] + b\[i] as float32 adds them: the exact sum rounded once
    /// to the nearest f32, the one right answer for c\[i] (without a seed
    /// exact, 3·(i mod 4096), at most 12285; drawn values' sum rounds, and
    /// a kernel that adds in f32, or in f64 and then stores, gets exactly
    /// this value: the exact sum of two values of these binades is exact in
    /// f64, so its one rounding to f32 is this one).
    pub fn c(self, i: u64) -> f32 {
        self.a(i) + self.b(i)
    }

    /// [`checksum`] of the right c: from the closed form without a seed,
    /// from one period's [`ExactSum`] with one (every right c\[i] is a
    /// multiple of 2^−26 below 32, so the sum is exact in its fixed point,
    /// rounded to f64 once at the end, whatever the order).
    pub fn checksum(self, n: u64) -> f64 {
        match self.seed {
            None => expected_checksum(n) as f64,
            Some(_) => {
                let sum = |below: u64| {
                    (0..below).fold(ExactSum::default(), |mut sum, i| {
                        sum.add(self.c(i));
                        sum
                    })
                };
                let (periods, rest) = (n / SEEDED_PERIOD, n % SEEDED_PERIOD);
                let whole = if periods > 0 {
                    sum(SEEDED_PERIOD)
                } else {
                    ExactSum::default()
                };
                whole.times(periods).join(sum(rest)).value()
            }
        }
    }

    /// The length of one period of a and b: they repeat from there.
    pub fn period(self) -> u64 {
        match self.seed {
            None => PERIOD,
            Some(_) => SEEDED_PERIOD,
        }
    }

    /// a and b for i below one period (below n if that is shorter): for
    /// every i, a\[i] is the first's element i mod its length, b\[i] the
    /// second's.
    pub fn one_period(self, n: u64) -> (Vec<f32>, Vec<f32>) {
        let len = n.min(self.period());
        (
            (0..len).map(|i| self.a(i)).collect(),
            (0..len).map(|i| self.b(i)).collect(),
        )
    }

    /// What the check says it compares against.
    fn describe(self) -> String {
        match self.seed {
            None => "a[i] + b[i] = 3·(i mod 4096)".into(),
            Some(seed) => {
                format!("a[i] + b[i] rounded once to float32, with a and b drawn from seed {seed}")
            }
        }
    }

    /// a and b for `n` elements.
    pub fn vectors(self, n: u64) -> Result<(Vec<f32>, Vec<f32>), HostAllocError> {
        Ok((
            host_memory::try_filled("a", n, self.tabled(n, |i| self.a(i)))?,
            host_memory::try_filled("b", n, self.tabled(n, |i| self.b(i)))?,
        ))
    }
}

/// Σ c\[i] for i < n, exactly: 3·(q·P(P−1)/2 + r(r−1)/2) with n = qP + r.
pub fn expected_checksum(n: u64) -> u128 {
    let (p, q, r) = (
        u128::from(PERIOD),
        u128::from(n / PERIOD),
        u128::from(n % PERIOD),
    );
    let triangle = |m: u128| m * m.saturating_sub(1) / 2;
    3 * (q * triangle(p) + triangle(r))
}

/// A sum of f32 values that is exact, whatever the order, for every value
/// that is a whole multiple of 2^−40 below 2^40 in magnitude (every right
/// c of both kinds of input, and the canary's): those are added in fixed
/// point (i128, units of 2^−40: 2^36 elements of up to 2^80 units stay
/// below 2^116), the rest (NaN, infinities, values too small or too large:
/// only in a wrong c) in f64 beside it. The value is the fixed sum rounded
/// to f64 once, plus the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExactSum {
    fixed: i128,
    rest: f64,
}

impl ExactSum {
    const UNIT_BITS: i32 = 40;

    pub fn add(&mut self, x: f32) {
        let scaled = f64::from(x) * 2f64.powi(Self::UNIT_BITS);
        // NaN and infinities have no whole fraction: they go to the rest.
        if scaled.fract() == 0.0 && scaled.abs() < 2f64.powi(2 * Self::UNIT_BITS) {
            self.fixed += scaled as i128;
        } else {
            self.rest += f64::from(x);
        }
    }

    pub fn join(self, other: ExactSum) -> ExactSum {
        ExactSum {
            fixed: self.fixed + other.fixed,
            rest: self.rest + other.rest,
        }
    }

    /// The sum of `times` copies of this sum.
    pub fn times(self, times: u64) -> ExactSum {
        ExactSum {
            fixed: self.fixed * i128::from(times),
            rest: self.rest * times as f64,
        }
    }

    pub fn value(self) -> f64 {
        self.fixed as f64 * 2f64.powi(-Self::UNIT_BITS) + self.rest
    }
}

/// Σ c\[i]: exact for correct output of both kinds of input, in any order
/// ([`ExactSum`], [`Inputs::checksum`]), NaN if any element is NaN. Summed
/// in parts on every core: above 2^31 elements one core took about 2 s (a
/// dependent chain of additions).
pub fn checksum(c: &[f32]) -> f64 {
    host_memory::in_parts(c, |_, part| {
        part.iter().fold(ExactSum::default(), |mut sum, &x| {
            sum.add(x);
            sum
        })
    })
    .into_iter()
    .fold(ExactSum::default(), ExactSum::join)
    .value()
}

/// What vecadd-anyN runs with, as the report and the grader see it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    pub n: u64,
    pub threads: u32,
    pub blocks: u32,
    pub runs: u32,
    /// The seed a and b were drawn from; absent for the default inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Parameters {
    pub fn inputs(&self) -> Inputs {
        Inputs { seed: self.seed }
    }

    /// Threads in the whole grid: how far one pass of a grid-stride loop reaches.
    pub fn grid_threads(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.threads)
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    /// Σ c\[i] as the GPU computed c (summed in f64 on the host).
    pub checksum: Real,
    pub expected_checksum: Real,
}

impl Results {
    pub fn of(c: &[f32], params: &Parameters) -> Results {
        Results {
            checksum: Real(checksum(c)),
            expected_checksum: Real(params.inputs().checksum(params.n)),
        }
    }

    /// The results of a c known to be correct in every element (checked
    /// where it lies, on the GPU): [`checksum`] of correct output is exact,
    /// so it is the expected checksum itself.
    pub fn of_correct(params: &Parameters) -> Results {
        let exact = Real(params.inputs().checksum(params.n));
        Results {
            checksum: exact,
            expected_checksum: exact,
        }
    }
}

/// Compares every element of `c` with a\[i] + b\[i], exactly, and says what
/// the pattern of wrong elements suggests.
pub fn check(c: &[f32], params: &Parameters) -> Check {
    if c.len() as u64 != params.n {
        return Check {
            passed: false,
            criterion: criterion(params),
            compared: params.n,
            wrong: params.n,
            failures: vec![],
            tolerance: None,
            hint: Some(format!(
                "c came back with {} elements, not n = {}: copy the whole of c back",
                c.len(),
                params.n
            )),
        };
    }
    let grid = params.grid_threads();
    let inputs = params.inputs();
    let c_at = inputs.tabled(params.n, |i| inputs.c(i));
    // Every element on every core (above 2^31 elements, seconds on one);
    // each part keeps its first failures, the parts in order.
    let parts = host_memory::in_parts(c, |first, part| {
        let mut tally = Tally::default();
        let mut failures = Vec::new();
        for (j, &got) in part.iter().enumerate() {
            let i = (first + j) as u64;
            let expected = c_at(i);
            // Exact: c[i] has one right f32 value, a[i] + b[i] rounded
            // once. NaN never equals.
            if got != expected {
                tally.add(i, got, grid);
                if failures.len() < LISTED_FAILURES {
                    failures.push(Failure {
                        at: format!("c[{i}]"),
                        expected: Real(f64::from(expected)),
                        got: Real(f64::from(got)),
                    });
                }
            }
        }
        (tally, failures)
    });
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for (part, listed) in parts {
        tally.wrong += part.wrong;
        tally.unwritten += part.unwritten;
        tally.wrong_in_first_pass += part.wrong_in_first_pass;
        failures.extend(listed);
    }
    failures.truncate(LISTED_FAILURES);
    checked(params, &tally, failures)
}

/// The check of a c known to be correct in every element (checked where it
/// lies, on the GPU): what [`check`] says of one.
pub fn passed(params: &Parameters) -> Check {
    checked(params, &Tally::default(), Vec::new())
}

/// The check, from where the wrong elements are and the first of them.
fn checked(params: &Parameters, tally: &Tally, failures: Vec<Failure>) -> Check {
    Check {
        passed: tally.wrong == 0,
        criterion: criterion(params),
        compared: params.n,
        wrong: tally.wrong,
        failures,
        tolerance: None,
        hint: tally.hint(params.n, params.grid_threads()),
    }
}

fn criterion(params: &Parameters) -> String {
    format!("every c[i] equals {}", params.inputs().describe())
}

/// Where the wrong elements are, for the hint.
#[derive(Default)]
struct Tally {
    wrong: u64,
    /// Wrong and still holding the NaN that c was filled with: never written.
    unwritten: u64,
    /// Wrong below blocks × threads: the elements a loop-less kernel reaches.
    wrong_in_first_pass: u64,
}

impl Tally {
    fn add(&mut self, i: u64, got: f32, grid: u64) {
        self.wrong += 1;
        self.unwritten += u64::from(got.is_nan());
        self.wrong_in_first_pass += u64::from(i < grid);
    }

    fn hint(&self, n: u64, grid: u64) -> Option<String> {
        if self.wrong == 0 {
            return None;
        }
        if self.unwritten == n {
            return Some(
                "no element of c was written: write the kernel (step 1) and check that \
                 the launch passes a, b, c and n in the kernel's order"
                    .into(),
            );
        }
        if grid < n && self.wrong_in_first_pass == 0 && self.wrong == n - grid {
            return Some(format!(
                "every element from c[{grid}] on is wrong, and {grid} = blocks × threads: \
                 each thread must loop, stepping by the whole grid (blockDim.x * gridDim.x)"
            ));
        }
        if self.unwritten == self.wrong {
            return Some(format!(
                "{} elements were never written: check where each thread's loop starts, \
                 its step and its bound",
                self.wrong
            ));
        }
        Some(
            "some elements hold wrong values: each thread should store a[i] + b[i] \
             into c[i] for its own i"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT: Inputs = Inputs { seed: None };

    fn params(n: u64, blocks: u32, threads: u32) -> Parameters {
        Parameters {
            n,
            threads,
            blocks,
            runs: 1,
            seed: None,
        }
    }

    /// What a kernel computes: `write(i)` says whether element i is reached.
    fn gpu_model(n: u64, write: impl Fn(u64) -> bool) -> Vec<f32> {
        (0..n)
            .map(|i| {
                if write(i) {
                    DEFAULT.a(i) + DEFAULT.b(i)
                } else {
                    f32::NAN
                }
            })
            .collect()
    }

    #[test]
    fn checksum_closed_form_matches_brute_force() {
        let sizes = (0..=3 * PERIOD + 5).step_by(7).chain([
            1,
            2,
            PERIOD - 1,
            PERIOD,
            PERIOD + 1,
            1_000_003,
        ]);
        for n in sizes {
            let brute: u128 = (0..n).map(|i| u128::from(3 * (i % PERIOD))).sum();
            assert_eq!(expected_checksum(n), brute, "n = {n}");
        }
    }

    #[test]
    fn inputs_are_exact_in_f32_and_add_to_the_closed_form() {
        for i in [0, 1, 4095, 4096, 4097, (1 << 36) - 1] {
            let (a, b) = (DEFAULT.a(i), DEFAULT.b(i));
            assert_eq!(f64::from(a) + f64::from(b), f64::from(DEFAULT.c(i)));
            assert_eq!(
                DEFAULT.c(i),
                (3 * (i % PERIOD)) as f32,
                "closed form at {i}"
            );
        }
        let (a_host, b_host) = DEFAULT.vectors(5000).unwrap();
        assert_eq!(a_host[4097], 1.0);
        assert_eq!(b_host[4097], 2.0);
    }

    #[test]
    fn f64_checksum_of_correct_output_equals_the_closed_form() {
        let n = 1_000_003;
        let c = gpu_model(n, |_| true);
        assert_eq!(checksum(&c) as u128, expected_checksum(n));
        assert!(check(&c, &params(n, 4, 256)).passed);
    }

    #[test]
    fn a_kernel_without_the_grid_stride_loop_fails_with_the_loop_hint() {
        let p = params(1_000_003, 1056, 256);
        let c = gpu_model(p.n, |i| i < p.grid_threads());
        let check = check(&c, &p);
        assert!(!check.passed);
        assert_eq!(check.wrong, p.n - p.grid_threads());
        assert_eq!(check.failures[0].at, "c[270336]");
        assert!(check.hint.unwrap().contains("blockDim.x * gridDim.x"));
    }

    #[test]
    fn a_missing_last_element_fails() {
        let p = params(1001, 4, 256);
        let c = gpu_model(p.n, |i| i < p.n - 1);
        let check = check(&c, &p);
        assert_eq!(check.wrong, 1);
        assert_eq!(check.failures[0].at, "c[1000]");
        assert!(check.hint.unwrap().contains("never written"));
    }

    #[test]
    fn an_untouched_c_says_to_write_the_kernel() {
        let p = params(10, 1, 32);
        let check = check(&gpu_model(10, |_| false), &p);
        assert!(check.hint.unwrap().contains("step 1"));
    }

    #[test]
    fn a_wrong_formula_is_caught_even_where_it_agrees_at_zero() {
        let p = params(100, 1, 128);
        let c: Vec<f32> = (0..100).map(|i| DEFAULT.a(i) * DEFAULT.b(i)).collect();
        let check = check(&c, &p);
        // a·b = 3a only at a = 0 and a = 1.5; every other element is wrong.
        assert_eq!(check.wrong, 99);
        assert!(check.hint.unwrap().contains("wrong values"));
    }

    #[test]
    fn a_short_c_is_a_failure_not_a_panic() {
        let p = params(10, 1, 32);
        let check = check(&[0.0; 3], &p);
        assert!(!check.passed);
        assert!(check.hint.unwrap().contains("3 elements"));
    }

    fn seeded(n: u64, seed: u64) -> Parameters {
        Parameters {
            seed: Some(seed),
            ..params(n, 4, 256)
        }
    }

    #[test]
    fn seeded_inputs_are_drawn_values_whose_sum_rounds_once() {
        let inputs = Inputs { seed: Some(99) };
        let mut rounded = 0;
        for i in (0..100_000).chain([(1 << 36) - 1]) {
            let (a, b) = (inputs.a(i), inputs.b(i));
            assert!(a.abs() < 16.0 && b.abs() < 16.0 && a.abs() >= 0.125);
            // The exact sum is exact in f64; c is it rounded once to f32.
            let exact = f64::from(a) + f64::from(b);
            assert_eq!(inputs.c(i), exact as f32, "at {i}");
            rounded += u32::from(f64::from(inputs.c(i)) != exact);
        }
        // Most sums round: the check compares with the one right f32.
        assert!(rounded > 30_000, "{rounded}");
        let (a_host, b_host) = inputs.vectors(10).unwrap();
        assert_eq!((a_host[7], b_host[7]), (inputs.a(7), inputs.b(7)));
    }

    /// Kernels that do not add a\[i] and b\[i] in single precision: one in
    /// half precision or bfloat16 (inputs rounded first), one that reads
    /// two elements and extrapolates the rest along a line, one that drops
    /// the last element. Each fails on drawn inputs; a kernel that adds in
    /// f64 and stores the f32 passes.
    #[test]
    fn kernels_that_do_not_add_every_element_in_single_precision_fail_drawn_inputs() {
        let n = 5001;
        let p = seeded(n, 2027);
        let inputs = p.inputs();
        let (a, b) = inputs.vectors(n).unwrap();
        let add = |f: &dyn Fn(usize) -> f32| (0..n as usize).map(f).collect::<Vec<f32>>();
        let in_double = add(&|i| (f64::from(a[i]) + f64::from(b[i])) as f32);
        assert!(check(&in_double, &p).passed);
        for bits in [11, 8] {
            let short = |x: f32| seeded::rounded_to_significand(x, bits);
            let c = add(&|i| short(short(a[i]) + short(b[i])));
            let check = check(&c, &p);
            assert!(
                !check.passed && check.wrong > n * 9 / 10,
                "{bits}: {}",
                check.wrong
            );
        }
        let line = |x: &[f32], i: usize| x[0] + (x[1] - x[0]) * i as f32;
        let extrapolated = add(&|i| line(&a, i) + line(&b, i));
        assert!(check(&extrapolated, &p).wrong > n - 10);
        let mut dropped = add(&|i| a[i] + b[i]);
        dropped[n as usize - 1] = f32::NAN;
        assert_eq!(check(&dropped, &p).wrong, 1);
    }

    #[test]
    fn the_exact_sum_is_the_same_in_any_order_and_nan_stays() {
        let inputs = Inputs { seed: Some(3) };
        let c: Vec<f32> = (0..50_000).map(|i| inputs.c(i)).collect();
        let forwards = checksum(&c);
        let mut backwards = c.clone();
        backwards.reverse();
        assert_eq!(checksum(&backwards), forwards);
        assert_eq!(inputs.checksum(50_000), forwards);
        let mut sum = ExactSum::default();
        c.iter().rev().step_by(1).for_each(|&x| sum.add(x));
        assert_eq!(sum.value(), forwards);
        backwards[7] = f32::NAN;
        assert!(checksum(&backwards).is_nan());
        backwards[7] = 1e-30;
        assert_ne!(checksum(&backwards), forwards);
    }

    #[test]
    fn seeded_inputs_repeat_with_a_prime_period_and_their_checksum_is_one_periods() {
        let inputs = Inputs { seed: Some(11) };
        let p = SEEDED_PERIOD;
        assert!((2..1001).all(|d| p % d != 0), "a prime");
        assert_eq!(inputs.a(7), inputs.a(7 + 3 * p));
        // An index wrapped at 2^31 reads another value (most of the time).
        let wrapped = (0..64)
            .filter(|&i| inputs.c(i) != inputs.c(i + (1 << 31)))
            .count();
        assert!(wrapped > 48, "{wrapped}");
        // Across periods, against a brute-force sum.
        let n = 2 * p + 12_345;
        let brute: f64 = (0..n).map(|i| f64::from(inputs.a(i) + inputs.b(i))).sum();
        assert_eq!(inputs.checksum(n), brute);
        let (a, b) = inputs.vectors(n).unwrap();
        let from_vectors: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x + y)).sum();
        assert_eq!(from_vectors, brute);
        assert_eq!(a[(p + 3) as usize], inputs.a(3));
        let c: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert!(check(&c, &seeded(n, 11)).passed);
    }

    #[test]
    fn the_seeded_checksum_equals_a_sum_in_another_order() {
        let inputs = Inputs { seed: Some(5) };
        let n = 100_003;
        let backwards: f64 = (0..n).rev().map(|i| f64::from(inputs.c(i))).sum();
        assert_eq!(inputs.checksum(n), backwards);
        let c: Vec<f32> = (0..n).map(|i| inputs.a(i) + inputs.b(i)).collect();
        assert_eq!(checksum(&c), inputs.checksum(n));
        assert!(check(&c, &seeded(n, 5)).passed);
        // Another seed's c is wrong almost everywhere.
        let other = check(&c, &seeded(n, 6));
        assert!(!other.passed && other.wrong > n * 9 / 10, "{}", other.wrong);
    }

    /// A kernel that writes c\[i] from i alone (the default inputs' closed
    /// form) passes without a seed and fails with one.
    #[test]
    fn a_closed_form_writer_fails_seeded_inputs() {
        let n = 5001;
        let closed_form: Vec<f32> = (0..n).map(|i| (3 * (i % PERIOD)) as f32).collect();
        assert!(check(&closed_form, &params(n, 2, 128)).passed);
        let check = check(&closed_form, &seeded(n, 2026));
        assert!(!check.passed);
        assert!(check.wrong > n * 9 / 10, "{}", check.wrong);
        assert!(check.criterion.contains("seed 2026"), "{}", check.criterion);
        assert!(check.hint.unwrap().contains("wrong values"));
    }
}
