//! Inputs drawn from a seed: the grader passes `--seed` so every graded run
//! has its own inputs, which no kernel can write without reading them. Each
//! value is a function of (seed, stream, index), so the exercise binary and
//! the grader compute the same value for any element without storing them.
//!
//! A drawn value is ± (1 + m/2^23) · 2^e: a sign, 23 mantissa bits and an
//! exponent e in [`MIN_EXPONENT`]..=[`MAX_EXPONENT`], all taken from a hash
//! of (seed, stream, index), so both signs and seven magnitudes mix, and no
//! few elements reveal the others (there is no formula to extrapolate). The
//! mantissa's last bit is always 1: every value needs all 24 bits of an
//! f32's significand, so none is exact in half precision (11 bits) or
//! bfloat16 (8 bits), and a kernel that computes in either changes every
//! input it reads. Every value is a multiple of 2^−26 (the ulp of the
//! smallest binade), below 2^4 in magnitude: sums and products of them are
//! exact in fixed point, which is how the course computes exact answers
//! (`vecadd::exact_sum`, `dot::Exact`).

/// splitmix64's finaliser: a bijection on u64 whose outputs pass as random.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The smallest and largest exponent of a drawn value: magnitudes from
/// 1/8 to just below 16.
pub const MIN_EXPONENT: i32 = -3;
pub const MAX_EXPONENT: i32 = 3;

/// Every drawn value is a whole multiple of 2^−`RESOLUTION_BITS`.
pub const RESOLUTION_BITS: i32 = 23 - MIN_EXPONENT;

/// Element `index` of stream `stream` under `seed`: ± (1 + m/2^23) · 2^e,
/// m odd, e in [`MIN_EXPONENT`]..=[`MAX_EXPONENT`] (see the module's note).
pub fn drawn(seed: u64, stream: u64, index: u64) -> f32 {
    let h = mix(mix(seed ^ mix(stream)) ^ index);
    let mantissa = (h as u32 & 0x007f_ffff) | 1;
    let span = (MAX_EXPONENT - MIN_EXPONENT + 1) as u64;
    let exponent = MIN_EXPONENT + ((h >> 32) % span) as i32;
    let sign = ((h >> 63) as u32) << 31;
    f32::from_bits(sign | (((exponent + 127) as u32) << 23) | mantissa)
}

/// `x` rounded to nearest (ties to even) with `bits` bits of significand,
/// the leading one included: what half precision (11) or bfloat16 (8)
/// keeps of a value in their normal range. For the tests of kernels that
/// compute in those formats.
pub fn rounded_to_significand(x: f32, bits: u32) -> f32 {
    let drop = 24 - bits;
    let raw = x.to_bits();
    let half = 1u32 << (drop - 1);
    let odd = (raw >> drop) & 1;
    let rounded = raw.wrapping_add(half - 1 + odd) & !((1u32 << drop) - 1);
    f32::from_bits(rounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_have_both_signs_every_magnitude_and_all_24_bits() {
        let mut exponents = std::collections::BTreeSet::new();
        let (mut negative, mut count) = (0, 0);
        for i in 0..10_000 {
            let v = drawn(7, 1, i);
            let exponent = v.abs().log2().floor() as i32;
            assert!((MIN_EXPONENT..=MAX_EXPONENT).contains(&exponent), "{v}");
            exponents.insert(exponent);
            negative += u32::from(v < 0.0);
            count += 1;
            // A whole multiple of 2^−26, and no multiple of 2^−(exponent + 23) more.
            let units = f64::from(v) * 2f64.powi(RESOLUTION_BITS);
            assert_eq!(units.fract(), 0.0, "{v}");
            assert_eq!(v.to_bits() & 1, 1, "{v}");
        }
        assert_eq!(exponents.len(), 7);
        assert!(negative > count * 45 / 100 && negative < count * 55 / 100);
    }

    #[test]
    fn no_value_is_exact_in_half_precision_or_bfloat16() {
        let (mut f16_changed, mut bf16_changed, mut count) = (0, 0, 0);
        for seed in [1, 2, 2026] {
            for i in 0..20_000 {
                let v = drawn(seed, 3, i);
                count += 1;
                f16_changed += u32::from(rounded_to_significand(v, 11) != v);
                bf16_changed += u32::from(rounded_to_significand(v, 8) != v);
            }
        }
        // Every one, by construction (the last mantissa bit is set).
        assert_eq!(f16_changed, count);
        assert_eq!(bf16_changed, count);
    }

    #[test]
    fn rounding_to_a_shorter_significand_is_to_nearest() {
        let one_and = |m: u32| f32::from_bits(0x3f80_0000 | m);
        // 1 + 2^−23 rounds down to 1 in 11 bits; 1 + 2^−11 + 2^−23 rounds up.
        assert_eq!(rounded_to_significand(one_and(1), 11), 1.0);
        assert_eq!(
            rounded_to_significand(one_and((1 << 12) | 1), 11),
            1.0 + 2f32.powi(-10)
        );
        // A tie goes to the even significand.
        assert_eq!(rounded_to_significand(one_and(1 << 12), 11), 1.0);
        assert_eq!(rounded_to_significand(-1.5, 8), -1.5);
    }

    #[test]
    fn two_elements_reveal_nothing_of_a_third() {
        // No affine or geometric pattern: the third element is not what a
        // line or a ratio through the first two predicts.
        for seed in 0..50 {
            let x: Vec<f32> = (0..3).map(|i| drawn(seed, 1, i)).collect();
            assert_ne!(x[2], 2.0 * x[1] - x[0]);
            assert_ne!(x[2], x[1] * x[1] / x[0]);
        }
    }

    #[test]
    fn seeds_streams_and_indices_each_change_the_values() {
        let run = |seed, stream| (0..64).map(|i| drawn(seed, stream, i)).collect::<Vec<_>>();
        assert_ne!(run(1, 1), run(2, 1));
        assert_ne!(run(1, 1), run(1, 2));
        assert_eq!(run(1, 1), run(1, 1));
        let one = run(3, 1);
        assert!(one.windows(2).all(|w| w[0] != w[1]));
    }
}
