//! Half precision (`.f16`, and `.f16x2` pairs in a 32-bit register): the
//! conversions to and from it in each rounding mode, and its arithmetic and
//! comparisons. Values are worked on exactly in f64 (a sum or product of
//! halves is exact there; fma is rounded once, from an exact pair), then
//! rounded to half as PTX says. A NaN result is the canonical 0x7fff.

use super::float::{RN, RP, RZ};
use crate::ir::{BinaryFn, CompareFn, TernaryFn, UnaryFn};

const CANONICAL_NAN: u64 = 0x7fff;

/// A half's value.
pub fn to_f64(bits: u64) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = ((bits >> 10) & 0x1f) as i32;
    let fraction = (bits & 0x3ff) as f64;
    sign * match exponent {
        0 => fraction * f64::powi(2.0, -24),
        31 if fraction == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1024.0 + fraction) * f64::powi(2.0, e - 25),
    }
}

/// The exact value `hi + lo` (hi the nearest f64, lo the rest) rounded to
/// half in `mode`.
pub fn round(hi: f64, lo: f64, mode: u8) -> u64 {
    if hi.is_nan() {
        return CANONICAL_NAN;
    }
    let sign = if hi.is_sign_negative() { 0x8000 } else { 0 };
    let negative = sign != 0;
    if hi.is_infinite() {
        return sign | 0x7c00;
    }
    let magnitude = hi.abs();
    // The rest, as seen from the magnitude: positive when the exact
    // magnitude is above `magnitude`.
    let rest = if negative { -lo } else { lo };
    let away = |up: bool| match mode {
        RN => up,
        RZ => false,
        RP => !negative,
        _ => negative,
    };
    // Past the largest half (65504), or the boundary it rounds to.
    let largest = 65504.0;
    let overflow = |rounds_up: bool| {
        if rounds_up {
            sign | 0x7c00
        } else {
            sign | 0x7bff
        }
    };
    if magnitude >= 65536.0 {
        return overflow(match mode {
            RN => true,
            _ => away(true),
        });
    }
    // The quantum of halves near `magnitude`: 2^-24 for subnormals.
    let exponent = if magnitude < f64::powi(2.0, -14) {
        -14
    } else {
        magnitude.log2().floor() as i32
    };
    let quantum = f64::powi(2.0, exponent - 10);
    let scaled = magnitude / quantum;
    let whole = scaled.floor();
    let fraction = scaled - whole;
    let value = if fraction == 0.0 {
        // A half itself, unless the rest moves a directed rounding off it:
        // below a power of two the step down is half as long.
        if rest < 0.0 && mode != RN && !away(true) {
            let step = if whole == 1024.0 && exponent > -14 {
                quantum / 2.0
            } else {
                quantum
            };
            magnitude - step
        } else if rest > 0.0 && mode != RN && away(true) {
            magnitude + quantum
        } else {
            magnitude
        }
    } else {
        let up = match mode {
            RN => {
                fraction > 0.5
                    || (fraction == 0.5 && (rest > 0.0 || (rest == 0.0 && whole % 2.0 == 1.0)))
            }
            _ => away(true),
        };
        (whole + f64::from(u8::from(up))) * quantum
    };
    if value > largest {
        return overflow(true);
    }
    if value == 0.0 {
        return sign;
    }
    if value < f64::powi(2.0, -14) {
        return sign | (value / f64::powi(2.0, -24)) as u64;
    }
    let e = value.log2().floor() as i32;
    let mantissa = (value / f64::powi(2.0, e - 10)) as u64 - 1024;
    sign | ((e + 15) as u64) << 10 | mantissa
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn is_nan(bits: u64) -> bool {
    bits & 0x7c00 == 0x7c00 && bits & 0x3ff != 0
}

fn add<const M: u8>(a: u64, b: u64) -> u64 {
    let (s, e) = two_sum(to_f64(a), to_f64(b));
    round(s, e, M)
}
fn sub<const M: u8>(a: u64, b: u64) -> u64 {
    add::<M>(a, b ^ 0x8000)
}
fn mul<const M: u8>(a: u64, b: u64) -> u64 {
    // The product of two halves has at most 22 bits: exact in f64.
    round(to_f64(a) * to_f64(b), 0.0, M)
}
fn fma<const M: u8>(a: u64, b: u64, c: u64) -> u64 {
    let (s, e) = two_sum(to_f64(a) * to_f64(b), to_f64(c));
    round(s, e, M)
}
fn neg(a: u64) -> u64 {
    (a ^ 0x8000) & 0xffff
}
fn abs(a: u64) -> u64 {
    a & 0x7fff
}
/// min/max: a NaN operand gives the other; -0 is below +0.
fn min(a: u64, b: u64) -> u64 {
    pick(a, b, |x, y, a_negative| x < y || (x == y && a_negative))
}
fn max(a: u64, b: u64) -> u64 {
    pick(a, b, |x, y, a_negative| x > y || (x == y && !a_negative))
}
/// `a` where neither is NaN and `keeps_a(a, b, a's sign)`, else `b`.
fn pick(a: u64, b: u64, keeps_a: fn(f64, f64, bool) -> bool) -> u64 {
    match (is_nan(a), is_nan(b)) {
        (true, true) => CANONICAL_NAN,
        (true, false) => b,
        (false, true) => a,
        _ if keeps_a(to_f64(a), to_f64(b), a & 0x8000 != 0) => a,
        _ => b,
    }
}

/// `f` on each half of two packed pairs.
macro_rules! pairwise {
    ($name:ident, $f:expr) => {
        fn $name(a: u64, b: u64) -> u64 {
            let lo = $f(a & 0xffff, b & 0xffff);
            let hi = $f((a >> 16) & 0xffff, (b >> 16) & 0xffff);
            lo | hi << 16
        }
    };
}
pairwise!(add2, add::<RN>);
pairwise!(sub2, sub::<RN>);
pairwise!(mul2, mul::<RN>);
pairwise!(min2, min);
pairwise!(max2, max);
fn fma2(a: u64, b: u64, c: u64) -> u64 {
    let lo = fma::<RN>(a & 0xffff, b & 0xffff, c & 0xffff);
    let hi = fma::<RN>((a >> 16) & 0xffff, (b >> 16) & 0xffff, (c >> 16) & 0xffff);
    lo | hi << 16
}
fn neg2(a: u64) -> u64 {
    (a ^ 0x8000_8000) & 0xffff_ffff
}
fn abs2(a: u64) -> u64 {
    a & 0x7fff_7fff
}

fn rounding(mods: &[&str]) -> u8 {
    super::float::rounding(mods)
}

pub fn binary(base: &str, mods: &[&str], ty: &str) -> Option<BinaryFn> {
    let m = rounding(mods);
    Some(match (ty, base, m) {
        ("f16", "add", RN) => add::<RN>,
        ("f16", "add", RZ) => add::<RZ>,
        ("f16", "sub", RN) => sub::<RN>,
        ("f16", "sub", RZ) => sub::<RZ>,
        ("f16", "mul", RN) => mul::<RN>,
        ("f16", "mul", RZ) => mul::<RZ>,
        ("f16", "min", _) => min,
        ("f16", "max", _) => max,
        ("f16x2", "add", RN) => add2,
        ("f16x2", "sub", RN) => sub2,
        ("f16x2", "mul", RN) => mul2,
        ("f16x2", "min", _) => min2,
        ("f16x2", "max", _) => max2,
        _ => return None,
    })
}

pub fn ternary(base: &str, mods: &[&str], ty: &str) -> Option<TernaryFn> {
    let m = rounding(mods);
    Some(match (ty, base, m) {
        ("f16", "fma", RN) => fma::<RN>,
        ("f16", "fma", RZ) => fma::<RZ>,
        ("f16x2", "fma", RN) => fma2,
        _ => return None,
    })
}

pub fn unary(base: &str, ty: &str) -> Option<UnaryFn> {
    Some(match (ty, base) {
        ("f16", "neg") => neg,
        ("f16", "abs") => abs,
        ("f16x2", "neg") => neg2,
        ("f16x2", "abs") => abs2,
        _ => return None,
    })
}

macro_rules! compares {
    ($($name:ident: $test:expr, $unordered:literal;)*) => {
        $(fn $name(a: u64, b: u64) -> bool {
            if is_nan(a) || is_nan(b) {
                return $unordered;
            }
            ($test)(to_f64(a), to_f64(b))
        })*
    };
}
compares! {
    eq: |x, y| x == y, false;
    ne: |x, y| x != y, false;
    lt: |x, y| x < y, false;
    le: |x, y| x <= y, false;
    gt: |x, y| x > y, false;
    ge: |x, y| x >= y, false;
    equ: |x, y| x == y, true;
    neu: |x, y| x != y, true;
    ltu: |x, y| x < y, true;
    leu: |x, y| x <= y, true;
    gtu: |x, y| x > y, true;
    geu: |x, y| x >= y, true;
    num: |_, _| true, false;
    nan: |_, _| false, true;
}

/// `setp.cmp.f16` (and the low halves of `.f16x2`).
pub fn compare(cmp: &str) -> Option<CompareFn> {
    Some(match cmp {
        "eq" => eq,
        "ne" => ne,
        "lt" => lt,
        "le" => le,
        "gt" => gt,
        "ge" => ge,
        "equ" => equ,
        "neu" => neu,
        "ltu" => ltu,
        "leu" => leu,
        "gtu" => gtu,
        "geu" => geu,
        "num" => num,
        "nan" => nan,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::value::float::RM;

    fn f(x: f64) -> u64 {
        round(x, 0.0, RN)
    }

    #[test]
    fn values_round_trip_and_round_in_each_mode() {
        for bits in [
            0u64, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x3555, 0x7c00,
        ] {
            assert_eq!(round(to_f64(bits), 0.0, RN), bits, "{bits:#x}");
        }
        assert_eq!(f(1.0), 0x3c00);
        assert_eq!(f(65504.0), 0x7bff);
        assert_eq!(f(65519.0), 0x7bff, "below the midpoint to 65536");
        assert_eq!(f(65520.0), 0x7c00, "the midpoint rounds to infinity");
        assert_eq!(round(65520.0, 0.0, RZ), 0x7bff);
        assert_eq!(round(-1e9, 0.0, RP), 0xfbff);
        assert_eq!(round(-1e9, 0.0, RM), 0xfc00);
        assert_eq!(
            f(f64::powi(2.0, -25)),
            0,
            "half the smallest subnormal rounds to even"
        );
        assert_eq!(f(f64::powi(2.0, -25) * 1.5), 1);
        assert_eq!(round(f64::powi(2.0, -30), 0.0, RP), 1);
        assert_eq!(round(-f64::powi(2.0, -30), 0.0, RP), 0x8000);
        // 1 + 2^-11 is halfway between 1 and the next half: to even (1),
        // unless the rest says it is above.
        let mid = 1.0 + f64::powi(2.0, -11);
        assert_eq!(f(mid), 0x3c00);
        assert_eq!(round(mid, 1e-30, RN), 0x3c01);
        assert_eq!(
            round(1.0, -1e-30, RZ),
            0x3bff,
            "below a power of two, a half step down"
        );
        assert_eq!(round(3.0, -1e-30, RZ), 0x41ff);
        assert_eq!(round(f64::NAN, 0.0, RN), CANONICAL_NAN);
    }

    #[test]
    fn arithmetic_and_comparisons() {
        assert_eq!(add::<RN>(0x3c00, 0x4000), 0x4200, "1 + 2 = 3");
        assert_eq!(mul::<RN>(0x4000, 0xc000), 0xc400, "2 * -2 = -4");
        assert_eq!(fma::<RN>(0x3c00, 0x3c00, 0x3c00), 0x4000);
        assert_eq!(add::<RN>(0x7c00, 0xfc00), CANONICAL_NAN);
        assert_eq!(add2(0x3c00_4000, 0x3c00_3c00), 0x4000_4200);
        assert!(lt(0x3c00, 0x4000) && !lt(0x7e00, 0x4000) && ltu(0x7e00, 0x4000));
        assert!(eq(0x0000, 0x8000), "zeros compare equal");
        assert_eq!(max(0x7e00, 0x3c00), 0x3c00);
    }
}
