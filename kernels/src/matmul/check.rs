//! The matmul check: every entry of P against its closed form, exactly, and
//! hints that name a classic bug when the whole of P is what that bug would
//! produce.

use super::{Parameters, Table, Variant, expected, m, n};
use crate::protocol::{Check, Failure, Real};

/// Wrong entries listed in a check; the rest are only counted.
const LISTED_FAILURES: usize = 5;

/// Compares every entry of `p` with its closed form.
pub fn check(variant: Variant, params: &Parameters, p: &[f32]) -> Check {
    let w = u64::from(params.width);
    let criterion = "every P[i][j] equals Σ_k M[i][k]·N[k][j] exactly".to_owned();
    if p.len() as u64 != w * w {
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
    let table = expected(params.width);
    let mut wrong = 0;
    let mut failures = Vec::new();
    for (x, &got) in p.iter().enumerate() {
        let (i, j) = (x as u64 / w, x as u64 % w);
        let want = table.at(i, j) as f32;
        // Exact: entries are small integers. NaN (never written) never equals.
        if got != want {
            wrong += 1;
            if failures.len() < LISTED_FAILURES {
                failures.push(Failure {
                    at: format!("P[{i}][{j}]"),
                    expected: Real(f64::from(want)),
                    got: Real(f64::from(got)),
                });
            }
        }
    }
    Check {
        passed: wrong == 0,
        criterion,
        compared: w * w,
        wrong,
        failures,
        tolerance: None,
        hint: (wrong > 0).then(|| hint(variant, params, p, &table)),
    }
}

/// The first classic bug whose output is exactly `p`, or a general hint.
fn hint(variant: Variant, params: &Parameters, p: &[f32], table: &Table) -> String {
    let width = params.width;
    let w = u64::from(width);
    let edge = u64::from(params.block);
    let whole = |i: u64, j: u64| table.at(i, j) as f32;
    let is = |predict: &dyn Fn(u64, u64) -> f32| {
        p.iter().enumerate().all(|(x, &got)| {
            let want = predict(x as u64 / w, x as u64 % w);
            got == want || (got.is_nan() && want.is_nan())
        })
    };

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
    let transposed_m = Table::new(11, 13, w, |i, k| m(k, i), n);
    if is(&|i, j| transposed_m.at(i, j) as f32) {
        return "M is read transposed: M[row][k] is at m[row * width + k]".into();
    }
    let transposed_n = Table::new(11, 13, w, m, |k, j| n(j, k));
    if is(&|i, j| transposed_n.at(i, j) as f32) {
        return "N is read transposed: N[k][col] is at n[k * width + col]".into();
    }
    if variant == Variant::Tiled && covered < w {
        let full_tiles_only = Table::new(11, 13, covered, m, n);
        if is(&|i, j| full_tiles_only.at(i, j) as f32) {
            return format!(
                "the last tile along k, only {} wide, was skipped: loop over ⌈W / TILE⌉ tiles and \
                 load zeros where a tile reaches past the matrix",
                w - covered
            );
        }
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
                           the zeros past the edge, and the two __syncthreads() per phase"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::inputs;

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
        width: u32,
        depth: u64,
        m_at: impl Fn(u64, u64) -> Option<u64>,
        n_at: impl Fn(u64, u64) -> Option<u64>,
    ) -> Vec<f32> {
        let (m_host, n_host) = inputs(width).unwrap();
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
        }
    }

    const WIDTHS: [u32; 6] = [7, 17, 31, 33, 100, 129];

    #[test]
    fn the_right_product_passes() {
        for width in WIDTHS {
            let w = u64::from(width);
            let p = sum_with(width, w, |i, k| Some(i * w + k), |k, j| Some(k * w + j));
            assert!(
                check(Variant::Tiled, &params(width, 16), &p).passed,
                "W {width}"
            );
        }
    }

    /// Each classic bug, as the matrix it produces, is rejected with its hint.
    #[test]
    fn each_classic_bug_is_rejected_with_its_hint() {
        for width in WIDTHS {
            let w = u64::from(width);
            for tile in [16u32, 32] {
                let t = u64::from(tile);
                let full = w - w % t;
                let bugs: Vec<(&str, Variant, Vec<f32>, &str)> = vec![
                    (
                        "M transposed",
                        Variant::Naive,
                        sum_with(width, w, |i, k| Some(k * w + i), |k, j| Some(k * w + j)),
                        "M is read transposed",
                    ),
                    (
                        "N transposed",
                        Variant::Naive,
                        sum_with(width, w, |i, k| Some(i * w + k), |k, j| Some(j * w + k)),
                        "N is read transposed",
                    ),
                    (
                        "row and column swapped",
                        Variant::Naive,
                        {
                            let right =
                                sum_with(width, w, |i, k| Some(i * w + k), |k, j| Some(k * w + j));
                            computed(width, |i, j| right[(j * w + i) as usize])
                        },
                        "transposed",
                    ),
                    (
                        "grid of ⌊W / block⌋ blocks",
                        Variant::Naive,
                        {
                            let right =
                                sum_with(width, w, |i, k| Some(i * w + k), |k, j| Some(k * w + j));
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
                        sum_with(width, full, |i, k| Some(i * w + k), |k, j| Some(k * w + j)),
                        "last tile along k",
                    ),
                    (
                        "tile loads without the edge test (read on past the row)",
                        Variant::Tiled,
                        sum_with(
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
                    let check = check(variant, &params(width, tile), &p);
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
        let check = check(Variant::Naive, &params(4, 16), &[0.0; 3]);
        assert!(!check.passed);
        assert!(check.hint.unwrap().contains("3 entries"));
    }
}
