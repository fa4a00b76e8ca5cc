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
//! different numbers. P[i][j] depends only on i mod 11 and j mod 13 (and W),
//! which makes the closed form a table of 143 values.

use serde::{Deserialize, Serialize};

use crate::host_memory::{self, HostAllocError};
use crate::protocol::Real;

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
    pub fn name(self) -> &'static str {
        match self {
            Variant::Naive => "matmul-naive",
            Variant::Tiled => "matmul-tiled",
        }
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

/// M[i][k] = ((3i + 5k) mod 11) − 5.
pub fn m(i: u64, k: u64) -> i64 {
    ((3 * (i % M_PERIOD) + 5 * (k % M_PERIOD)) % M_PERIOD) as i64 - 5
}

/// N[k][j] = ((7k + 2j) mod 13) − 6.
pub fn n(k: u64, j: u64) -> i64 {
    ((7 * (k % N_PERIOD) + 2 * (j % N_PERIOD)) % N_PERIOD) as i64 - 6
}

/// M and N as row-major f32 matrices.
pub fn inputs(width: u32) -> Result<(Vec<f32>, Vec<f32>), HostAllocError> {
    let w = u64::from(width);
    Ok((
        host_memory::try_filled("M", w * w, |x| m(x / w, x % w) as f32)?,
        host_memory::try_filled("N", w * w, |x| n(x / w, x % w) as f32)?,
    ))
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
    /// repeat in i, j and k with the given periods (k: [`K_PERIOD`]).
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
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    /// Root mean square of P − golden over the rows the golden model ran.
    pub rms_vs_golden: Real,
    /// Rows of P the CPU golden model computed: all for small widths,
    /// evenly spaced ones for large.
    pub golden_rows: u64,
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
            let (m_host, n_host) = inputs(width).unwrap();
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
        let (m_host, n_host) = inputs(width).unwrap();
        let table = expected(width);
        let w = u64::from(width);
        let mut p: Vec<f32> = (0..w * w).map(|x| table.at(x / w, x % w) as f32).collect();
        assert_eq!(rms_vs_golden(&p, &m_host, &n_host, width), (0.0, 40));
        p[5] += 40.0;
        // One entry off by 40 among 1600: rms = 40/40 = 1.
        assert_eq!(rms_vs_golden(&p, &m_host, &n_host, width).0, 1.0);
    }
}
