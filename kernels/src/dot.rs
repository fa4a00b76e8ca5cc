//! The dot-product family (dot-gm, dot-sm, dot-atomic), the pure part: the
//! inputs (affine a\[i] = p + q·i and b\[i] = r + s·i, with exact closed
//! forms, which the chapters teach; or values drawn from a seed, which the
//! grader passes, with the exact dot summed in fixed point), and the
//! exercises' protocol types. The grader uses these without a GPU.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::catalogue::ExerciseId;
use crate::host_memory::{self, HostAllocError};
use crate::protocol::Real;
use crate::seeded;

#[cfg(feature = "runtime")]
pub mod driver;
pub mod golden;
#[cfg(feature = "runtime")]
pub mod sweep;
#[cfg(feature = "runtime")]
pub mod task;
pub mod tolerance;

/// The three exercises, which differ in how the products are summed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// The GPU writes every product; the host sums them.
    Gm,
    /// Each block sums its threads' running sums in shared memory; the host
    /// sums the block partials.
    Sm,
    /// As Sm, but blocks add their partials into one float with atomicAdd.
    Atomic,
}

impl Variant {
    /// The exercise this variant is.
    pub fn id(self) -> ExerciseId {
        match self {
            Variant::Gm => ExerciseId::DotGm,
            Variant::Sm => ExerciseId::DotSm,
            Variant::Atomic => ExerciseId::DotAtomic,
        }
    }

    /// The variant exercise `id` is; None outside the dot family.
    pub fn of(id: ExerciseId) -> Option<Variant> {
        [Variant::Gm, Variant::Sm, Variant::Atomic]
            .into_iter()
            .find(|v| v.id() == id)
    }

    pub fn name(self) -> &'static str {
        self.id().name()
    }

    /// Bytes the kernel must move per element: read a\[i] and b\[i], and for
    /// dot-gm write c\[i].
    pub fn bytes_per_element(self) -> u64 {
        match self {
            Variant::Gm => 12,
            Variant::Sm | Variant::Atomic => 8,
        }
    }

    /// Resident waves in the default grid. dot-gm stores every product, as
    /// vecadd-anyN stores every sum. The reductions take one wave: every
    /// block adds a partial (and for dot-atomic a rounding in one float32
    /// chain), so more blocks cost accuracy and buy no bandwidth.
    pub fn waves(self) -> u64 {
        match self {
            Variant::Gm => crate::launch::STREAMING_WAVES,
            Variant::Sm | Variant::Atomic => 1,
        }
    }

    /// Whether the kernel reduces in a shared-memory tree, which needs a
    /// power-of-two block.
    pub fn reduces_in_blocks(self) -> bool {
        self != Variant::Gm
    }
}

/// The default vector length: far more elements than the default grid has
/// threads, so every thread loops.
pub const DEFAULT_N: u64 = (1 << 24) + 3;

/// The default on the CPU emulator: still several loops per thread of the
/// default grid, at a CPU's speed.
pub const EMULATOR_N: u64 = 1_000_003;

/// The largest `--n`: 2^36 elements need 550 GB for a and b, more than any
/// GPU holds.
pub const MAX_N: u64 = 1 << 36;

/// Largest |p|, |q|, |r|, |s| accepted. With n ≤ 2^36 every closed form
/// below stays inside i128 (the largest term, q·s·Σi², is below 2^127).
pub const MAX_COEFFICIENT: i64 = 1000;

/// One input vector, x\[i] = p + q·i, with small whole p and q. Written and
/// parsed as "p+qi": "i", "2i", "3+2i", "7", "-1-i".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Affine {
    pub p: i64,
    pub q: i64,
}

impl Affine {
    pub const fn new(p: i64, q: i64) -> Affine {
        Affine { p, q }
    }

    /// The exact value at i.
    pub fn at(self, i: u64) -> i128 {
        i128::from(self.p) + i128::from(self.q) * i128::from(i)
    }

    /// The value at i as the GPU gets it: rounded to the nearest f32.
    pub fn f32_at(self, i: u64) -> f32 {
        // In i64 where it fits (any n a GPU holds): i128's conversion to f32
        // is a library call, and at 2^31 elements a CPU spends tens of
        // seconds in it. Both round to the nearest f32.
        let narrow = i64::try_from(i)
            .ok()
            .and_then(|i| self.q.checked_mul(i))
            .and_then(|qi| qi.checked_add(self.p));
        match narrow {
            Some(x) => x as f32,
            None => self.at(i) as f32,
        }
    }

    /// Whether some value below n may round when stored as f32 (above 2^24
    /// in magnitude; the largest magnitude is at one end).
    pub fn rounds_in_f32(self, n: u64) -> bool {
        let limit = 1i128 << 24;
        n > 0 && (self.at(0).abs() > limit || self.at(n - 1).abs() > limit)
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Affine { p, q } = *self;
        let slope = match q {
            1 => "i".to_owned(),
            -1 => "-i".to_owned(),
            q => format!("{q}i"),
        };
        match (p, q) {
            (p, 0) => write!(f, "{p}"),
            (0, _) => f.write_str(&slope),
            (p, q) if q > 0 => write!(f, "{p}+{slope}"),
            (p, _) => write!(f, "{p}{slope}"),
        }
    }
}

impl FromStr for Affine {
    type Err = String;

    fn from_str(text: &str) -> Result<Affine, String> {
        let bad = || {
            format!(
                "'{text}' is not of the form p+qi with whole numbers p and q \
                 (for example 2i, 3+2i, 7, -1-i)"
            )
        };
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let (p, q) = match compact.strip_suffix('i') {
            None => (compact.parse::<i64>().map_err(|_| bad())?, 0),
            Some(head) => {
                // Split "p+q" / "p-q" at the last sign that is not leading.
                let cut = head
                    .char_indices()
                    .skip(1)
                    .filter(|&(_, c)| c == '+' || c == '-')
                    .map(|(at, _)| at)
                    .last();
                let (p_text, q_text) = match cut {
                    Some(at) => head.split_at(at),
                    None => ("0", head),
                };
                let q = match q_text {
                    "" | "+" => 1,
                    "-" => -1,
                    digits => digits.parse::<i64>().map_err(|_| bad())?,
                };
                (p_text.parse::<i64>().map_err(|_| bad())?, q)
            }
        };
        if p.abs() > MAX_COEFFICIENT || q.abs() > MAX_COEFFICIENT {
            return Err(format!(
                "'{text}': p and q must lie within ±{MAX_COEFFICIENT}"
            ));
        }
        Ok(Affine { p, q })
    }
}

impl From<Affine> for String {
    fn from(affine: Affine) -> String {
        affine.to_string()
    }
}

impl TryFrom<String> for Affine {
    type Error = String;
    fn try_from(text: String) -> Result<Affine, String> {
        text.parse()
    }
}

/// The two affine input vectors (`--a`, `--b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Inputs {
    pub a: Affine,
    pub b: Affine,
}

impl Inputs {
    /// a\[i] = i, b\[i] = 2i: the dot is 2·sum_squares(n − 1).
    pub const DEFAULT: Inputs = Inputs {
        a: Affine::new(0, 1),
        b: Affine::new(0, 2),
    };

    /// Σ_{lo ≤ i < hi} a\[i]·b\[i], exactly.
    pub fn dot_range(self, lo: u64, hi: u64) -> i128 {
        if hi <= lo {
            return 0;
        }
        self.prefix(hi) - self.prefix(lo)
    }

    /// Σ_{i<n} a\[i]·b\[i], exactly.
    pub fn dot(self, n: u64) -> i128 {
        self.dot_range(0, n)
    }

    /// Σ_{i<n} |a\[i]·b\[i]|, exactly: the scale every rounding error is
    /// measured against. a and b are linear, so each changes sign at most
    /// once; between those points every product has one sign, and the sum
    /// of a run is the absolute value of its dot.
    pub fn abs_dot(self, n: u64) -> i128 {
        let mut cuts = vec![0, n];
        cuts.extend(
            [self.a, self.b]
                .into_iter()
                .filter_map(|x| sign_change(x, n)),
        );
        cuts.sort_unstable();
        cuts.windows(2)
            .map(|w| self.dot_range(w[0], w[1]).abs())
            .sum()
    }

    /// Σ_{i<m} (p + q·i)(r + s·i) = m·pr + (ps + qr)·Σi + qs·Σi².
    fn prefix(self, m: u64) -> i128 {
        let (p, q) = (i128::from(self.a.p), i128::from(self.a.q));
        let (r, s) = (i128::from(self.b.p), i128::from(self.b.q));
        let m = i128::from(m);
        let sum_i = m * (m - 1) / 2;
        let sum_i2 = if m == 0 {
            0
        } else {
            (m - 1) * m * (2 * m - 1) / 6
        };
        m * p * r + (p * s + q * r) * sum_i + q * s * sum_i2
    }

    /// Both vectors as the GPU gets them, n elements each.
    pub fn vectors(self, n: u64) -> Result<(Vec<f32>, Vec<f32>), HostAllocError> {
        Ok((
            host_memory::try_filled("a", n, |i| self.a.f32_at(i))?,
            host_memory::try_filled("b", n, |i| self.b.f32_at(i))?,
        ))
    }
}

/// The first index in 1..n where x has a different sign from x[0] (zero
/// counting with either side), if there is one.
fn sign_change(x: Affine, n: u64) -> Option<u64> {
    if x.q == 0 || n < 2 {
        return None;
    }
    // x[i] = p + q·i crosses zero at i = −p/q; the first whole index past it.
    let (p, q) = (i128::from(x.p), i128::from(x.q));
    let floor = if q > 0 {
        (-p).div_euclid(q)
    } else {
        p.div_euclid(-q)
    };
    let first_past = floor + 1;
    (first_past > 0 && first_past < i128::from(n)).then_some(first_past as u64)
}

/// The streams of `seeded::drawn` that a and b are drawn from.
const A_STREAM: u64 = 5;
const B_STREAM: u64 = 6;

/// The exact value of a dot product and of Σ|a·b| (the scale every rounding
/// error is measured against), as whole multiples of 2^`exponent`:
/// integers for affine inputs, multiples of 2^−52 for drawn ones (every
/// drawn value is a multiple of 2^−26 below 16, so each product is a
/// multiple of 2^−52 below 2^60 of them, and 2^36 products sum below 2^96:
/// exact in i128, in any order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exact {
    pub dot: i128,
    pub abs: i128,
    pub exponent: i32,
}

impl Exact {
    /// The dot, rounded once to f64.
    pub fn dot_f64(&self) -> f64 {
        self.dot as f64 * 2f64.powi(self.exponent)
    }

    /// Σ|a·b|, rounded once to f64.
    pub fn scale_f64(&self) -> f64 {
        self.abs as f64 * 2f64.powi(self.exponent)
    }

    /// |got − dot| / Σ|a·b|; 0 when both are 0, infinite when only the
    /// scale is.
    pub fn relative_error(&self, got: f64) -> f64 {
        let diff = (got - self.dot_f64()).abs();
        match self.abs {
            0 if diff == 0.0 => 0.0,
            0 => f64::INFINITY,
            _ => diff / self.scale_f64(),
        }
    }

    /// The dot in words: a decimal integer where it is one (it can exceed
    /// 2^53), otherwise its nearest f64.
    pub fn text(&self) -> String {
        match self.exponent {
            0 => self.dot.to_string(),
            _ => self.dot_f64().to_string(),
        }
    }
}

/// A drawn value in units of 2^−`seeded::RESOLUTION_BITS`: exact.
fn units(x: f32) -> i128 {
    (f64::from(x) * 2f64.powi(seeded::RESOLUTION_BITS)) as i128
}

/// The values a run gives the GPU: the affine vectors of `--a` and `--b`
/// (the chapters' closed forms), or values drawn from `--seed`
/// (`seeded::drawn`: mixed signs and magnitudes, not exact in half
/// precision, no pattern a few elements reveal), which the grader passes
/// for its runs that the host can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Values {
    Affine(Inputs),
    Drawn { seed: u64 },
}

impl Values {
    /// Element i of a and of b, as the GPU gets them.
    pub fn at(self, i: u64) -> (f32, f32) {
        match self {
            Values::Affine(inputs) => (inputs.a.f32_at(i), inputs.b.f32_at(i)),
            Values::Drawn { seed } => (
                seeded::drawn(seed, A_STREAM, i),
                seeded::drawn(seed, B_STREAM, i),
            ),
        }
    }

    /// Both vectors as the GPU gets them, n elements each.
    pub fn vectors(self, n: u64) -> Result<(Vec<f32>, Vec<f32>), HostAllocError> {
        match self {
            Values::Affine(inputs) => inputs.vectors(n),
            Values::Drawn { .. } => Ok((
                host_memory::try_filled("a", n, |i| self.at(i).0)?,
                host_memory::try_filled("b", n, |i| self.at(i).1)?,
            )),
        }
    }

    /// Σ_{lo ≤ i < hi} a\[i]·b\[i] and Σ|a\[i]·b\[i]|, exactly: the closed
    /// forms for affine inputs, a fixed-point sum for drawn ones (on every
    /// core: 2^25 elements are two hashes and a product each).
    pub fn exact_range(self, lo: u64, hi: u64) -> Exact {
        match self {
            Values::Affine(inputs) => Exact {
                dot: inputs.dot_range(lo, hi),
                abs: match lo {
                    0 => inputs.abs_dot(hi),
                    _ => inputs.abs_dot(hi) - inputs.abs_dot(lo),
                },
                exponent: 0,
            },
            Values::Drawn { .. } => {
                let sum = |lo: u64, hi: u64| {
                    (lo..hi).fold((0i128, 0i128), |(dot, abs), i| {
                        let (a, b) = self.at(i);
                        let product = units(a) * units(b);
                        (dot + product, abs + product.abs())
                    })
                };
                let (dot, abs) = in_ranges(lo, hi, sum)
                    .into_iter()
                    .fold((0, 0), |(d, a), (x, y)| (d + x, a + y));
                Exact {
                    dot,
                    abs,
                    exponent: -2 * seeded::RESOLUTION_BITS,
                }
            }
        }
    }

    /// The whole dot of n elements, exactly.
    pub fn exact(self, n: u64) -> Exact {
        self.exact_range(0, n)
    }

    /// How many of a and b may round when stored as f32 below n: affine
    /// values above 2^24; drawn values never (they are f32s).
    pub fn stored_roundings(self, n: u64) -> u64 {
        match self {
            Values::Affine(inputs) => {
                u64::from(inputs.a.rounds_in_f32(n)) + u64::from(inputs.b.rounds_in_f32(n))
            }
            Values::Drawn { .. } => 0,
        }
    }

    /// The inputs in words, for the check's criterion.
    pub fn describe(self) -> String {
        match self {
            Values::Affine(inputs) => format!("a[i] = {} and b[i] = {}", inputs.a, inputs.b),
            Values::Drawn { seed } => format!("a and b drawn from seed {seed}"),
        }
    }
}

/// `sum(lo, hi)` over [lo, hi) split into one range per core, in order.
fn in_ranges<R: Send>(lo: u64, hi: u64, sum: impl Fn(u64, u64) -> R + Sync) -> Vec<R> {
    let len = hi.saturating_sub(lo);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as u64;
    let parts = if len < 1 << 16 { 1 } else { cores };
    let step = len.div_ceil(parts).max(1);
    let sum = &sum;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..parts)
            .map(|k| {
                let (from, to) = ((lo + k * step).min(hi), (lo + (k + 1) * step).min(hi));
                scope.spawn(move || sum(from, to))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a part of the sum panicked"))
            .collect()
    })
}

/// What a dot exercise runs with, as the report and the grader see it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    pub n: u64,
    pub threads: u32,
    pub blocks: u32,
    pub runs: u32,
    /// `--a` and `--b`: the inputs where no seed is given.
    pub a: Affine,
    pub b: Affine,
    /// The seed a and b were drawn from, in place of `a` and `b`; absent
    /// for affine inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Parameters {
    /// The affine inputs of `--a` and `--b`, whatever the seed: the run's
    /// values are [`Parameters::values`].
    pub fn inputs(&self) -> Inputs {
        Inputs {
            a: self.a,
            b: self.b,
        }
    }

    /// The values the run gives the GPU: drawn from the seed where there
    /// is one, the affine inputs otherwise.
    pub fn values(&self) -> Values {
        match self.seed {
            Some(seed) => Values::Drawn { seed },
            None => Values::Affine(self.inputs()),
        }
    }

    /// Threads in the whole grid.
    pub fn grid_threads(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.threads)
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    /// The dot product as computed: by the GPU, and for dot-gm and dot-sm
    /// finished on the host in f64.
    pub dot: Real,
    /// The exact dot product, as a decimal integer (it can exceed 2^53);
    /// for drawn inputs, the exact value rounded once to f64.
    pub expected: String,
    /// dot-gm only: the products summed on the host in a plain f32 running
    /// sum, to show what single precision does to a long sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_f32_sum: Option<Real>,
    /// dot-gm only: that f32 sum's error relative to Σ|a·b|.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_f32_relative_error: Option<Real>,
    /// dot-atomic --sweep only: one row per grid size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Vec<SweepRow>>,
}

/// One grid size of dot-atomic's blocks-versus-loops sweep.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SweepRow {
    pub blocks: u32,
    /// Loop iterations of the busiest thread: ⌈n / (blocks · threads)⌉.
    pub loops_per_thread: u64,
    pub kernel_ms: f64,
    pub gb_per_s: f64,
    pub passed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(inputs: Inputs, n: u64) -> (i128, i128) {
        (0..n)
            .map(|i| inputs.a.at(i) * inputs.b.at(i))
            .fold((0, 0), |(dot, abs), x| (dot + x, abs + x.abs()))
    }

    fn coefficient_grid() -> Vec<Inputs> {
        let values = [-7, -3, -1, 0, 1, 2, 5, 1000, -1000];
        let mut all = Vec::new();
        for &p in &values {
            for &q in &values {
                for (r, s) in [(0, 2), (2, 0), (-5, 3), (9, -1), (1000, -1000), (0, 0)] {
                    all.push(Inputs {
                        a: Affine::new(p, q),
                        b: Affine::new(r, s),
                    });
                }
            }
        }
        all
    }

    #[test]
    fn the_fast_f32_path_rounds_as_the_exact_one_does() {
        for x in [Affine::new(-9, 7), Affine::new(5, -3), Affine::new(9, 9)] {
            // Past 2^24 (where f32 starts rounding) and past 2^31 elements,
            // and an index whose value leaves i64 (the exact path).
            for i in [0, 3, (1 << 24) + 1, (1 << 31) + 12_345, u64::MAX / 2] {
                assert_eq!(x.f32_at(i), x.at(i) as f32, "{x:?} at {i}");
            }
        }
    }

    #[test]
    fn closed_forms_match_brute_force_for_many_n_and_coefficients() {
        for inputs in coefficient_grid() {
            for n in [0, 1, 2, 3, 7, 10, 64, 1000, 1001, 4099] {
                assert_eq!(
                    (inputs.dot(n), inputs.abs_dot(n)),
                    brute(inputs, n),
                    "{inputs:?}, n = {n}"
                );
            }
        }
    }

    #[test]
    fn the_defaults_give_the_seeds_formulas() {
        let sum_squares = |x: i128| x * (x + 1) * (2 * x + 1) / 6;
        let n = 1_000_003u64;
        assert_eq!(Inputs::DEFAULT.dot(n), 2 * sum_squares(n as i128 - 1));
        let b_is_2 = Inputs {
            a: Affine::new(0, 1),
            b: Affine::new(2, 0),
        };
        assert_eq!(b_is_2.dot(n), (n * (n - 1)) as i128);
    }

    #[test]
    fn the_largest_inputs_stay_inside_i128() {
        let big = Inputs {
            a: Affine::new(MAX_COEFFICIENT, MAX_COEFFICIENT),
            b: Affine::new(MAX_COEFFICIENT, MAX_COEFFICIENT),
        };
        // Debug builds trap on overflow; this must not.
        assert!(big.dot(MAX_N) > 0);
        assert_eq!(big.abs_dot(MAX_N), big.dot(MAX_N));
    }

    #[test]
    fn affine_text_round_trips() {
        for (text, p, q) in [
            ("i", 0, 1),
            ("2i", 0, 2),
            ("-i", 0, -1),
            ("3+2i", 3, 2),
            ("3-2i", 3, -2),
            ("-1-i", -1, -1),
            ("5+i", 5, 1),
            ("7", 7, 0),
            ("-7", -7, 0),
            ("0", 0, 0),
        ] {
            let parsed: Affine = text.parse().unwrap();
            assert_eq!(parsed, Affine::new(p, q), "{text}");
            assert_eq!(parsed.to_string(), text);
        }
        assert_eq!(" 3 + 2 i ".parse::<Affine>().unwrap(), Affine::new(3, 2));
    }

    #[test]
    fn bad_affine_text_says_what_is_allowed() {
        for text in ["", "x", "2j", "1.5i", "i+1", "++i", "2ii", "1e3"] {
            let err = text.parse::<Affine>().unwrap_err();
            assert!(err.contains("p+qi"), "{text:?}: {err}");
        }
        let err = "1001i".parse::<Affine>().unwrap_err();
        assert!(err.contains("±1000"), "{err}");
    }

    #[test]
    fn the_drawn_exact_dot_matches_a_sum_in_f64_and_any_split() {
        let values = Values::Drawn { seed: 4 };
        let n = 70_001;
        let (a, b) = values.vectors(n).unwrap();
        let exact = values.exact(n);
        // Each product is exact in f64; the f64 sum is within n·u of Σ|a·b|.
        let f64_sum: f64 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum();
        let abs: f64 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (f64::from(*x) * f64::from(*y)).abs())
            .sum();
        assert!(
            (f64_sum - exact.dot_f64()).abs() <= 1e-9 * abs,
            "{f64_sum} {exact:?}"
        );
        assert!((abs - exact.scale_f64()).abs() <= 1e-9 * abs);
        let (left, right) = (values.exact_range(0, 1234), values.exact_range(1234, n));
        assert_eq!(left.dot + right.dot, exact.dot);
        assert_eq!(left.abs + right.abs, exact.abs);
        // Mixed signs: the dot is far below Σ|a·b|.
        assert!(exact.dot.abs() < exact.abs / 10);
        assert_eq!(values.stored_roundings(n), 0);
        let (x, y) = values.at(17);
        assert_eq!((a[17], b[17]), (x, y));
    }

    #[test]
    fn affine_values_are_the_closed_forms() {
        let values = Values::Affine(Inputs::DEFAULT);
        let exact = values.exact(1000);
        assert_eq!(exact.dot, Inputs::DEFAULT.dot(1000));
        assert_eq!(exact.text(), Inputs::DEFAULT.dot(1000).to_string());
        let split = values.exact_range(10, 1000);
        assert_eq!(
            split.abs,
            Inputs::DEFAULT.abs_dot(1000) - Inputs::DEFAULT.abs_dot(10)
        );
    }

    #[test]
    fn f32_rounding_is_flagged_above_2_to_the_24() {
        let i = Affine::new(0, 1);
        assert!(!i.rounds_in_f32(1 << 24));
        assert!(i.rounds_in_f32((1 << 24) + 2));
        assert!(Affine::new(-20_000_000, 0).rounds_in_f32(1));
        assert_eq!(i.f32_at((1 << 24) + 1), (1 << 24) as f32);
    }
}
