//! vecadd-anyN, the pure part: inputs, closed forms, the check and its hints,
//! and the exercise's protocol types. The grader uses these without a GPU.

use serde::{Deserialize, Serialize};

use crate::host_memory::{self, HostAllocError};
use crate::protocol::{Check, Failure, Real};

#[cfg(feature = "runtime")]
pub mod driver;

pub const NAME: &str = "vecadd-anyN";

/// Inputs repeat with this period so every value, and every sum, is a small
/// integer: exact in f32, so the check can demand exact equality.
pub const PERIOD: u64 = 4096;

/// Bytes the kernel must move per element: read a[i] and b[i], write c[i].
pub const BYTES_PER_ELEMENT: u64 = 12;

/// The default vector length: larger than any default grid, and not a
/// multiple of any block size, so both a missing loop and a missing bounds
/// check show.
pub const DEFAULT_N: u64 = (1 << 25) + 3;

/// The default on the CPU emulator: still no multiple of a block size.
pub const EMULATOR_N: u64 = 1_000_003;

/// The largest `--n` accepted before asking the GPU: 2^36 elements need
/// 825 GB for a, b and c, more than any GPU holds.
pub const MAX_N: u64 = 1 << 36;

/// Failures listed in a check; the rest are only counted.
const LISTED_FAILURES: usize = 5;

/// a[i] = i mod 4096.
pub fn a(i: u64) -> f32 {
    (i % PERIOD) as f32
}

/// b[i] = 2·(i mod 4096).
pub fn b(i: u64) -> f32 {
    (2 * (i % PERIOD)) as f32
}

/// The closed form of c[i] = a[i] + b[i] = 3·(i mod 4096), at most 12285.
pub fn expected_c(i: u64) -> f32 {
    (3 * (i % PERIOD)) as f32
}

/// Σ c[i] for i < n, exactly: 3·(q·P(P−1)/2 + r(r−1)/2) with n = qP + r.
pub fn expected_checksum(n: u64) -> u128 {
    let (p, q, r) = (
        u128::from(PERIOD),
        u128::from(n / PERIOD),
        u128::from(n % PERIOD),
    );
    let triangle = |m: u128| m * m.saturating_sub(1) / 2;
    3 * (q * triangle(p) + triangle(r))
}

/// a and b for `n` elements.
pub fn inputs(n: u64) -> Result<(Vec<f32>, Vec<f32>), HostAllocError> {
    Ok((
        host_memory::try_filled("a", n, a)?,
        host_memory::try_filled("b", n, b)?,
    ))
}

/// Σ c[i] in f64: exact for correct output (integers below 2^53 for any n up
/// to MAX_N), NaN if any element is NaN.
pub fn checksum(c: &[f32]) -> f64 {
    c.iter().map(|&x| f64::from(x)).sum()
}

/// What vecadd-anyN runs with, as the report and the grader see it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    pub n: u64,
    pub threads: u32,
    pub blocks: u32,
    pub runs: u32,
}

impl Parameters {
    /// Threads in the whole grid: how far one pass of a grid-stride loop reaches.
    pub fn grid_threads(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.threads)
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    /// Σ c[i] as the GPU computed c (summed in f64 on the host).
    pub checksum: Real,
    pub expected_checksum: u64,
}

impl Results {
    pub fn of(c: &[f32], n: u64) -> Results {
        Results {
            checksum: Real(checksum(c)),
            expected_checksum: u64::try_from(expected_checksum(n)).unwrap_or(u64::MAX),
        }
    }
}

/// Compares every element of `c` with its closed form, exactly, and says
/// what the pattern of wrong elements suggests.
pub fn check(c: &[f32], params: &Parameters) -> Check {
    let criterion = "every c[i] equals a[i] + b[i] = 3·(i mod 4096)".to_owned();
    if c.len() as u64 != params.n {
        return Check {
            passed: false,
            criterion,
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
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for (i, &got) in c.iter().enumerate() {
        let i = i as u64;
        let expected = expected_c(i);
        // Exact: every correct value is a small integer. NaN never equals.
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
    Check {
        passed: tally.wrong == 0,
        criterion,
        compared: params.n,
        wrong: tally.wrong,
        failures,
        tolerance: None,
        hint: tally.hint(params.n, grid),
    }
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

    fn params(n: u64, blocks: u32, threads: u32) -> Parameters {
        Parameters {
            n,
            threads,
            blocks,
            runs: 1,
        }
    }

    /// What a kernel computes: `write(i)` says whether element i is reached.
    fn gpu_model(n: u64, write: impl Fn(u64) -> bool) -> Vec<f32> {
        (0..n)
            .map(|i| if write(i) { a(i) + b(i) } else { f32::NAN })
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
            assert_eq!(f64::from(a(i)) + f64::from(b(i)), f64::from(expected_c(i)));
            assert_eq!(a(i) + b(i), expected_c(i), "f32 sum at {i}");
        }
        let (a_host, b_host) = inputs(5000).unwrap();
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
        let c: Vec<f32> = (0..100).map(|i| a(i) * b(i)).collect();
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
}
