//! Matrix multiplication (matmul-naive, matmul-tiled), the pure part: the
//! inputs, the closed form of every entry, the CPU golden model, the check
//! and its hints, and the exercises' protocol types.
//!
//! P = M × N for W × W matrices, row-major, with
//!
//! ```text
//! M[i][k] = ((3i + 5k) mod 11) − 5      N[k][j] = ((7k + 2j) mod 13) − 6
//! ```
//!
//! Every entry is a small integer, every product at most 30 in magnitude and
//! every partial sum at most 30·W < 2^24 for the widths accepted, so P is
//! exact in float32 whatever order the kernel adds in: the check demands
//! equality. The formulas are asymmetric in their two indices, so a
//! transposed operand, swapped row and column or a k range cut short give
//! different numbers. P\[i]\[j] depends only on i mod 11 and j mod 13 (and W),
//! which makes the closed form a table of 143 values.
//!
//! With `--seed` (the grader passes one on every run) M and N are instead
//! drawn values (`seeded::drawn`: both signs, magnitudes from 1/8 to 16,
//! every value needing all 24 bits of an f32, no pattern a few entries
//! reveal). Their products round in float32, so P depends on the order a
//! kernel adds in, and the check is a bound, entry by entry: every product
//! of f32s is exact in f64, so the host sums the exact entry and
//! S\[i]\[j] = Σ_k |M\[i]\[k]·N\[k]\[j]| in f64 ([`reference()`]), and a right
//! entry differs from the exact one by at most γ_W·S\[i]\[j] (γ_W = W·u/(1 −
//! W·u), u = 2^−24: each product passes through at most W roundings, its
//! own and W − 1 additions, in any order a kernel may add in: one thread's
//! loop over k, tiles of any edge, zeros added past a partial tile, fused
//! multiply-adds, which round less; Higham, *Accuracy and Stability of
//! Numerical Algorithms*, §3.1). [`entry_limit`] adds the f64 reference's
//! own rounding. A kernel that computes in half precision or bfloat16 errs
//! by about 2^−11 of each product, random in sign: past the bound at every
//! width below about 256 (2^12 / W^1.5 > 1), which every plan has. No entry
//! is an integer, so a kernel that accumulates in `int` fails.

use serde::{Deserialize, Serialize};

use crate::catalogue::ExerciseId;
use crate::dot::tolerance::{U_F32, U_F64, gamma};
use crate::host_memory::{self, HostAllocError};
use crate::protocol::Real;
use crate::seeded;

pub mod check;
#[cfg(feature = "runtime")]
pub mod driver;

/// The two exercises.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// One thread per entry of P, reading M and N from global memory.
    Naive,
    /// Tiles of M and N staged in shared memory.
    Tiled,
}

impl Variant {
    /// The exercise this variant is.
    pub fn id(self) -> ExerciseId {
        match self {
            Variant::Naive => ExerciseId::MatmulNaive,
            Variant::Tiled => ExerciseId::MatmulTiled,
        }
    }

    /// The variant exercise `id` is; None outside the matmul family.
    pub fn of(id: ExerciseId) -> Option<Variant> {
        [Variant::Naive, Variant::Tiled]
            .into_iter()
            .find(|v| v.id() == id)
    }

    pub fn name(self) -> &'static str {
        self.id().name()
    }
}

/// The largest width: P's entries stay below 2^24 (30·W), and W² stays
/// inside an int index.
pub const MAX_WIDTH: u32 = 32768;

/// Default width: not a multiple of any tile, so partial tiles are tested.
pub const DEFAULT_WIDTH: u32 = 1000;

/// The default on the CPU emulator: still partial tiles of 16 and 32.
pub const EMULATOR_WIDTH: u32 = 200;

const M_PERIOD: u64 = 11;
const N_PERIOD: u64 = 13;
/// M and N together repeat along k every 11·13 = 143 steps.
const K_PERIOD: u64 = M_PERIOD * N_PERIOD;

/// M\[i]\[k] = ((3i + 5k) mod 11) − 5.
pub fn m(i: u64, k: u64) -> i64 {
    ((3 * (i % M_PERIOD) + 5 * (k % M_PERIOD)) % M_PERIOD) as i64 - 5
}

/// N\[k]\[j] = ((7k + 2j) mod 13) − 6.
pub fn n(k: u64, j: u64) -> i64 {
    ((7 * (k % N_PERIOD) + 2 * (j % N_PERIOD)) % N_PERIOD) as i64 - 6
}

/// Where M and N come from: the periodic formulas above, or a seed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    pub seed: Option<u64>,
}

impl Inputs {
    /// M\[i]\[k] of a W-wide M (the seeded values depend on the width's
    /// flat index).
    pub fn m(self, width: u32, i: u64, k: u64) -> f32 {
        match self.seed {
            None => m(i, k) as f32,
            Some(seed) => seeded::drawn(seed, 3, i * u64::from(width) + k),
        }
    }

    /// N\[k]\[j] of a W-wide N.
    pub fn n(self, width: u32, k: u64, j: u64) -> f32 {
        match self.seed {
            None => n(k, j) as f32,
            Some(seed) => seeded::drawn(seed, 4, k * u64::from(width) + j),
        }
    }

    /// M and N as row-major f32 matrices.
    pub fn matrices(self, width: u32) -> Result<(Vec<f32>, Vec<f32>), HostAllocError> {
        let w = u64::from(width);
        Ok((
            host_memory::try_filled("M", w * w, |x| self.m(width, x / w, x % w))?,
            host_memory::try_filled("N", w * w, |x| self.n(width, x / w, x % w))?,
        ))
    }

    /// The weighted checksum Σ u_i·P\[i]\[j]·v_j of the exact P, computed in
    /// O(W²) as Σ_k (Σ_i u_i·M\[i]\[k])·(Σ_j N\[k]\[j]·v_j): the grader's own
    /// value, from the seed, for what [`checksum`] gives of the GPU's P
    /// (exactly, without a seed; within [`Inputs::checksum_bound`] with one).
    pub fn checksum(self, width: u32) -> f64 {
        self.weighted(width, |x| x)
    }

    /// How far [`checksum`] of a right P may lie from [`Inputs::checksum`]
    /// with drawn inputs: each entry within γ_W·S\[i]\[j] of the exact one
    /// ([`entry_limit`]), so the weighted sum within γ_W·Σ u_i·S\[i]\[j]·v_j,
    /// computed here in O(W²) as the checksum is, from |M| and |N|; with
    /// the f64 roundings of both checksums (W² + 3W + 3 at most, each) on
    /// top.
    pub fn checksum_bound(self, width: u32) -> f64 {
        let w = u64::from(width);
        let sums = w * w + 3 * w + 3;
        let limit =
            (1.0 + gamma(w, U_F32)) * (1.0 + gamma(sums, U_F64)) * (1.0 + gamma(sums, U_F64)) - 1.0;
        limit * self.weighted(width, f32::abs)
    }

    /// Σ_k (Σ_i u_i·f(M\[i]\[k]))·(Σ_j f(N\[k]\[j])·v_j) in f64.
    fn weighted(self, width: u32, f: impl Fn(f32) -> f32) -> f64 {
        let w = u64::from(width);
        (0..w)
            .map(|k| {
                let column: f64 = (0..w)
                    .map(|i| row_weight(i) * f64::from(f(self.m(width, i, k))))
                    .sum();
                let row: f64 = (0..w)
                    .map(|j| f64::from(f(self.n(width, k, j))) * column_weight(j))
                    .sum();
                column * row
            })
            .sum()
    }
}

/// The most a right entry of P may differ from the f64 reference, relative
/// to S\[i]\[j] = Σ_k |M\[i]\[k]·N\[k]\[j]| as the reference computes it:
/// γ_W in f32 (the kernel's W roundings, in any order), and the reference's
/// own W − 1 f64 additions in its value and in S, with the comparison's
/// subtraction: (1 + γ_W)(1 + γ_{W+1}')² − 1, γ' in f64.
pub fn entry_limit(width: u32) -> f64 {
    let w = u64::from(width);
    (1.0 + gamma(w, U_F32)) * (1.0 + gamma(w + 1, U_F64)) * (1.0 + gamma(w + 1, U_F64)) - 1.0
}

/// Freivalds' check of P against M × N, weighed by `x` (W weights, drawn
/// at random after P was made): row i passes when |Σ_j P\[i]\[j]·x_j −
/// Σ_k M\[i]\[k]·(Σ_j N\[k]\[j]·x_j)| is within [`freivalds_limit`]
/// times the row's scale Σ_k |M\[i]\[k]|·(Σ_j |N\[k]\[j]|·|x_j|) + Σ_k
/// |M\[i]\[k]|·|(N·x)_k| + Σ_j |P\[i]\[j]|·|x_j|. O(W²), all in f64.
/// A right P, summed in any order, passes: each of its entries is within
/// γ_W·Σ_k |M\[i]\[k]·N\[k]\[j]| of the exact one in f32 (the module's
/// note), so P·x within γ_W of the first term; the f64 sums of P·x, N·x and
/// M·(N·x) each add at most γ'_{W+1} of their own absolute sums (the other
/// two terms). A P that differs from the right one by more than the
/// roundings in row i passes only if the random weights happen to cancel
/// the difference, which for drawn weights does not happen. Returns the
/// first failing row with Σ P·x and Σ M·(N·x); NaN fails.
pub fn freivalds(
    m: &[f32],
    n: &[f32],
    p: &[f32],
    width: u32,
    x: &[f64],
) -> Option<(usize, f64, f64)> {
    let w = width as usize;
    if m.len() < w * w || n.len() < w * w || p.len() < w * w || x.len() < w {
        return Some((0, f64::NAN, f64::NAN));
    }
    let limit = freivalds_limit(width);
    let dot = |row: &[f32], v: &[f64]| -> (f64, f64) {
        row.iter().zip(v).fold((0.0, 0.0), |(s, a), (&r, &v)| {
            let t = f64::from(r) * v;
            (s + t, a + t.abs())
        })
    };
    let abs_x: Vec<f64> = x[..w].iter().map(|v| v.abs()).collect();
    let mut nx = vec![0.0f64; w];
    let mut n_abs_x = vec![0.0f64; w];
    for k in 0..w {
        let row = &n[k * w..(k + 1) * w];
        nx[k] = dot(row, x).0;
        n_abs_x[k] = dot(row, &abs_x).1;
    }
    let abs_nx: Vec<f64> = nx.iter().map(|v| v.abs()).collect();
    for i in 0..w {
        let m_row = &m[i * w..(i + 1) * w];
        let (px, p_abs) = dot(&p[i * w..(i + 1) * w], x);
        let (mnx, _) = dot(m_row, &nx);
        let (_, m_abs_nx) = dot(m_row, &abs_nx);
        let (_, scale) = dot(m_row, &n_abs_x);
        let bound = limit * (scale + m_abs_nx + p_abs);
        // A NaN entry makes the distance NaN, which is not within.
        let within = (px - mnx).abs() <= bound;
        if !within {
            return Some((i, px, mnx));
        }
    }
    None
}

/// The relative limit of [`freivalds`]: γ_W in f32 (the kernel's roundings
/// of each entry) and γ'_{2W+2} in f64 (the host's sums, each of at most W
/// products and W additions, and the sums of the scale), twice over, with
/// the comparison's own roundings: (1 + γ_W)(1 + γ'_{2W+2})² (1 + γ'_4) − 1.
pub fn freivalds_limit(width: u32) -> f64 {
    let w = u64::from(width);
    (1.0 + gamma(w, U_F32))
        * (1.0 + gamma(2 * w + 2, U_F64))
        * (1.0 + gamma(2 * w + 2, U_F64))
        * (1.0 + gamma(4, U_F64))
        - 1.0
}

/// The exact entries of M × N (rounded once to f64) and S\[i]\[j] = Σ_k
/// |M\[i]\[k]·N\[k]\[j]|, in f64, row-major: every product of two f32s is
/// exact in f64, and the sums are within γ_W in f64 (see [`entry_limit`]).
/// Summed in i-k-j order, the rows spread over the cores.
pub fn reference(m: &[f32], n: &[f32], width: u32) -> (Vec<f64>, Vec<f64>) {
    let w = width as usize;
    let mut value = vec![0.0f64; w * w];
    let mut scale = vec![0.0f64; w * w];
    if w == 0 {
        return (value, scale);
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let rows_each = w.div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        for (chunk, (values, scales)) in value
            .chunks_mut(rows_each * w)
            .zip(scale.chunks_mut(rows_each * w))
            .enumerate()
        {
            scope.spawn(move || {
                let first = chunk * rows_each;
                for (r, (v_row, s_row)) in values
                    .chunks_exact_mut(w)
                    .zip(scales.chunks_exact_mut(w))
                    .enumerate()
                {
                    let i = first + r;
                    for k in 0..w {
                        let mik = f64::from(m[i * w + k]);
                        let n_row = &n[k * w..(k + 1) * w];
                        for ((v, s), &nkj) in v_row.iter_mut().zip(s_row.iter_mut()).zip(n_row) {
                            let product = mik * f64::from(nkj);
                            *v += product;
                            *s += product.abs();
                        }
                    }
                }
            });
        }
    });
    (value, scale)
}

/// The checksum's weights: small, unequal, and different for rows and
/// columns, so a transposed or row-shifted P changes the sum.
fn row_weight(i: u64) -> f64 {
    (1 + i % 7) as f64
}

fn column_weight(j: u64) -> f64 {
    (1 + (j + 2) % 5) as f64
}

/// Σ u_i·P\[i]\[j]·v_j in f64 (weights 1 to 7 by row and 1 to 5 by column),
/// in index order. Exact for a right P of the default inputs up to W =
/// 8192 (integers, the total below 35·30·W³ < 2^53); for drawn inputs
/// within [`Inputs::checksum_bound`] of [`Inputs::checksum`]. NaN if any
/// entry is.
pub fn checksum(p: &[f32], width: u32) -> f64 {
    let w = u64::from(width);
    p.iter()
        .enumerate()
        .map(|(x, &v)| {
            let x = x as u64;
            row_weight(x / w) * f64::from(v) * column_weight(x % w)
        })
        .sum()
}

/// P = M × N for W-wide row-major M and N (see [`dense_product`]).
pub fn product(m: &[f32], n: &[f32], width: u32) -> Vec<f32> {
    let w = u64::from(width);
    dense_product(m, n, width, w, |i, k| i * w + k, |k, j| k * w + j)
}

/// P = M × N, row-major, summed in f32 in i-k-j order: exact for both kinds
/// of input (see the module's note), so equal to the product in any order.
/// `m_at(i, k)` and `n_at(k, j)` give the flat index read, which lets the
/// check build what a transposed read would produce; k runs below `depth`.
pub fn dense_product(
    m: &[f32],
    n: &[f32],
    width: u32,
    depth: u64,
    m_at: impl Fn(u64, u64) -> u64,
    n_at: impl Fn(u64, u64) -> u64,
) -> Vec<f32> {
    let w = width as usize;
    let mut p = vec![0.0f32; w * w];
    let mut n_row = vec![0.0f32; w];
    for k in 0..depth {
        for (j, slot) in n_row.iter_mut().enumerate() {
            *slot = n[n_at(k, j as u64) as usize];
        }
        for (i, p_row) in p.chunks_exact_mut(w).enumerate() {
            let mik = m[m_at(i as u64, k) as usize];
            for (acc, &nkj) in p_row.iter_mut().zip(&n_row) {
                *acc += mik * nkj;
            }
        }
    }
    p
}

/// Entries of a product of matrices whose entries depend on their row's
/// residue, their column's residue and k, all periodic: Σ_{k<depth} a(i,k)·b(k,j)
/// as a table over (i mod rows, j mod cols).
pub struct Table {
    rows: u64,
    cols: u64,
    values: Vec<i64>,
}

impl Table {
    /// Σ_{k < depth} a(i, k)·b(k, j) for every residue pair; a and b must
    /// repeat in i, j and k with the given periods (k: `K_PERIOD`, 143).
    pub fn new(
        rows: u64,
        cols: u64,
        depth: u64,
        a: impl Fn(u64, u64) -> i64,
        b: impl Fn(u64, u64) -> i64,
    ) -> Table {
        let (whole, rest) = (depth / K_PERIOD, depth % K_PERIOD);
        let mut values = Vec::with_capacity((rows * cols) as usize);
        for i in 0..rows {
            for j in 0..cols {
                let sum = |upto: u64| (0..upto).map(|k| a(i, k) * b(k, j)).sum::<i64>();
                values.push(whole as i64 * sum(K_PERIOD) + sum(rest));
            }
        }
        Table { rows, cols, values }
    }

    pub fn at(&self, i: u64, j: u64) -> i64 {
        self.values[((i % self.rows) * self.cols + j % self.cols) as usize]
    }
}

/// The closed form of P = M × N at this width.
pub fn expected(width: u32) -> Table {
    Table::new(M_PERIOD, N_PERIOD, u64::from(width), m, n)
}

/// What a matmul exercise runs with, as the report and the grader see it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    pub width: u32,
    /// The block's edge: blocks are block × block threads. For the tiled
    /// exercise, also the tile's edge.
    pub block: u32,
    pub runs: u32,
    /// The seed M and N were drawn from; absent for the default inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Parameters {
    pub fn inputs(&self) -> Inputs {
        Inputs { seed: self.seed }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    /// Root mean square of P − golden over the rows the golden model ran.
    pub rms_vs_golden: Real,
    /// Rows of P the CPU golden model computed: all for small widths,
    /// evenly spaced ones for large.
    pub golden_rows: u64,
    /// [`checksum`] of the GPU's P, which the grader recomputes from the seed.
    pub checksum: Real,
}

/// Rows of P the golden model computes: every row up to this width.
const GOLDEN_ALL_ROWS_UP_TO: u32 = 256;
/// Above it, this many rows, evenly spaced, first and last included.
const GOLDEN_SAMPLED_ROWS: u64 = 32;

/// The rows the golden model runs on.
pub fn golden_rows(width: u32) -> Vec<u64> {
    let w = u64::from(width);
    if width <= GOLDEN_ALL_ROWS_UP_TO {
        return (0..w).collect();
    }
    let last = w - 1;
    let mut rows: Vec<u64> = (0..GOLDEN_SAMPLED_ROWS)
        .map(|s| s * last / (GOLDEN_SAMPLED_ROWS - 1))
        .collect();
    rows.dedup();
    rows
}

/// The CPU golden model (the course notes' `comparef`): row i of M × N from
/// the same f32 inputs, multiplied and summed in f64.
pub fn golden_row(m: &[f32], n: &[f32], width: u32, i: u64) -> Vec<f64> {
    let w = width as usize;
    let row = &m[i as usize * w..(i as usize + 1) * w];
    let mut out = vec![0.0f64; w];
    for (k, &mk) in row.iter().enumerate() {
        let n_row = &n[k * w..(k + 1) * w];
        for (acc, &nk) in out.iter_mut().zip(n_row) {
            *acc += f64::from(mk) * f64::from(nk);
        }
    }
    out
}

/// √(mean((P − golden)²)) over the golden rows, and how many rows.
pub fn rms_vs_golden(p: &[f32], m: &[f32], n: &[f32], width: u32) -> (f64, u64) {
    let rows = golden_rows(width);
    let w = width as usize;
    let mut squares = 0.0;
    for &i in &rows {
        let golden = golden_row(m, n, width, i);
        let got = &p[i as usize * w..(i as usize + 1) * w];
        squares += got
            .iter()
            .zip(&golden)
            .map(|(&x, g)| (f64::from(x) - g).powi(2))
            .sum::<f64>();
    }
    let count = (rows.len() * w).max(1) as f64;
    ((squares / count).sqrt(), rows.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closed_form_matches_the_golden_model_for_many_widths() {
        for width in [1, 2, 7, 11, 13, 16, 17, 31, 33, 100, 143, 144, 300] {
            let (m_host, n_host) = Inputs::default().matrices(width).unwrap();
            let table = expected(width);
            for i in 0..u64::from(width) {
                let golden = golden_row(&m_host, &n_host, width, i);
                for (j, g) in golden.iter().enumerate() {
                    assert_eq!(table.at(i, j as u64) as f64, *g, "W {width}, P[{i}][{j}]");
                }
            }
        }
    }

    #[test]
    fn every_partial_sum_is_exact_in_f32_up_to_the_largest_width() {
        // |M| ≤ 5 and |N| ≤ 6: any sum of W products stays below 30·W.
        assert!(30 * u64::from(MAX_WIDTH) < 1 << 24);
        assert!(u64::from(MAX_WIDTH).pow(2) <= i32::MAX as u64 + 1);
    }

    #[test]
    fn the_inputs_are_asymmetric() {
        // Transposing either operand changes entries, for every residue.
        assert!((0..11).any(|i| (0..11).any(|k| m(i, k) != m(k, i))));
        assert!((0..13).any(|k| (0..13).any(|j| n(k, j) != n(j, k))));
        let table = expected(100);
        assert!((0..11).any(|i| (0..11).any(|j| table.at(i, j) != table.at(j, i))));
    }

    #[test]
    fn large_widths_sample_rows_including_both_ends() {
        assert_eq!(golden_rows(256).len(), 256);
        let rows = golden_rows(4096);
        assert_eq!(rows.len(), 32);
        assert_eq!((rows[0], rows[31]), (0, 4095));
    }

    #[test]
    fn rms_is_zero_for_the_exact_product_and_not_otherwise() {
        let width = 40;
        let (m_host, n_host) = Inputs::default().matrices(width).unwrap();
        let table = expected(width);
        let w = u64::from(width);
        let mut p: Vec<f32> = (0..w * w).map(|x| table.at(x / w, x % w) as f32).collect();
        assert_eq!(rms_vs_golden(&p, &m_host, &n_host, width), (0.0, 40));
        p[5] += 40.0;
        // One entry off by 40 among 1600: rms = 40/40 = 1.
        assert_eq!(rms_vs_golden(&p, &m_host, &n_host, width).0, 1.0);
    }

    #[test]
    fn the_dense_product_matches_the_closed_form_and_the_golden_model() {
        for width in [1, 7, 17, 144] {
            let w = u64::from(width);
            let (m_host, n_host) = Inputs::default().matrices(width).unwrap();
            let p = product(&m_host, &n_host, width);
            let table = expected(width);
            for x in 0..w * w {
                assert_eq!(p[x as usize], table.at(x / w, x % w) as f32, "W {width}");
            }
            // Drawn inputs round: within the bound of the exact product.
            let seeded = Inputs { seed: Some(11) };
            let (m_host, n_host) = seeded.matrices(width).unwrap();
            let p = product(&m_host, &n_host, width);
            let (value, scale) = reference(&m_host, &n_host, width);
            let limit = entry_limit(width);
            for (x, &got) in p.iter().enumerate() {
                assert!(
                    (f64::from(got) - value[x]).abs() <= limit * scale[x],
                    "W {width}"
                );
            }
        }
    }

    #[test]
    fn seeded_entries_are_drawn_values() {
        let inputs = Inputs { seed: Some(4) };
        let mut negative = 0;
        for x in 0..1000 {
            let (a, b) = (
                inputs.m(100, x / 100, x % 100),
                inputs.n(100, x / 100, x % 100),
            );
            assert!(a.fract() != 0.0 && b.fract() != 0.0, "{a} {b}");
            assert!(a.abs() < 16.0 && b.abs() >= 0.125);
            assert_ne!(seeded::rounded_to_significand(a, 11), a);
            negative += u32::from(a < 0.0);
        }
        assert!((400..600).contains(&negative), "{negative}");
    }

    #[test]
    fn the_checksum_from_the_inputs_bounds_the_checksum_of_p() {
        for seed in [None, Some(3)] {
            let inputs = Inputs { seed };
            for width in [1, 5, 33, 130] {
                let w = u64::from(width);
                let (m_host, n_host) = inputs.matrices(width).unwrap();
                let p = product(&m_host, &n_host, width);
                let (got, want) = (checksum(&p, width), inputs.checksum(width));
                match seed {
                    None => assert_eq!(got, want, "W {width}"),
                    Some(_) => assert!(
                        (got - want).abs() <= inputs.checksum_bound(width),
                        "W {width}: {got} {want} {}",
                        inputs.checksum_bound(width)
                    ),
                }
                // P transposed, a classic bug, has another checksum.
                let t: Vec<f32> = (0..w * w)
                    .map(|x| p[((x % w) * w + x / w) as usize])
                    .collect();
                let far = match seed {
                    None => 0.0,
                    Some(_) => 10.0 * inputs.checksum_bound(width),
                };
                if width > 1 {
                    let off = (checksum(&t, width) - want).abs();
                    assert!(off > far, "W {width} {seed:?}: {off} {far}");
                }
            }
        }
    }

    #[test]
    fn the_reference_is_the_f64_product_and_its_scale() {
        let inputs = Inputs { seed: Some(8) };
        let width = 37;
        let w = width as usize;
        let (m_host, n_host) = inputs.matrices(width).unwrap();
        let (value, scale) = reference(&m_host, &n_host, width);
        for i in [0, 17, 36] {
            let golden = golden_row(&m_host, &n_host, width, i as u64);
            for j in 0..w {
                assert_eq!(value[i * w + j], golden[j]);
                let s: f64 = (0..w)
                    .map(|k| (f64::from(m_host[i * w + k]) * f64::from(n_host[k * w + j])).abs())
                    .sum();
                assert_eq!(scale[i * w + j], s);
            }
        }
    }
}
