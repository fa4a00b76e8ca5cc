//! Integer and bitwise instructions: add, sub, mul (lo/hi/wide), mad, div,
//! rem, min, max, abs, neg, not, and/or/xor, shifts, popc, clz, brev, as PTX
//! defines them for 8 to 64 bits, signed and unsigned.

use crate::ir::{BinaryFn, TernaryFn, UnaryFn};

/// Integer element types by PTX name: (bits, signed).
pub fn int_type(name: &str) -> Option<(u32, bool)> {
    Some(match name {
        "u8" | "b8" => (8, false),
        "s8" => (8, true),
        "u16" | "b16" => (16, false),
        "s16" => (16, true),
        "u32" | "b32" => (32, false),
        "s32" => (32, true),
        "u64" | "b64" => (64, false),
        "s64" => (64, true),
        _ => return None,
    })
}

macro_rules! width {
    ($m:ident, $u:ty, $s:ty, $wide_u:ty, $wide_s:ty) => {
        pub mod $m {
            const BITS: u32 = <$u>::BITS;
            #[inline]
            fn u(x: u64) -> $u {
                x as $u
            }
            #[inline]
            fn s(x: u64) -> $s {
                x as $u as $s
            }
            #[inline]
            fn out_s(x: $s) -> u64 {
                x as $u as u64
            }
            pub fn add(a: u64, b: u64) -> u64 {
                u(a).wrapping_add(u(b)) as u64
            }
            pub fn add_sat(a: u64, b: u64) -> u64 {
                out_s(s(a).saturating_add(s(b)))
            }
            pub fn sub(a: u64, b: u64) -> u64 {
                u(a).wrapping_sub(u(b)) as u64
            }
            pub fn sub_sat(a: u64, b: u64) -> u64 {
                out_s(s(a).saturating_sub(s(b)))
            }
            pub fn mul_lo(a: u64, b: u64) -> u64 {
                u(a).wrapping_mul(u(b)) as u64
            }
            pub fn mul_hi_u(a: u64, b: u64) -> u64 {
                ((u(a) as $wide_u * u(b) as $wide_u) >> BITS) as $u as u64
            }
            pub fn mul_hi_s(a: u64, b: u64) -> u64 {
                ((s(a) as $wide_s * s(b) as $wide_s) >> BITS) as $u as u64
            }
            pub fn mul_wide_u(a: u64, b: u64) -> u64 {
                (u(a) as $wide_u * u(b) as $wide_u) as u64
            }
            pub fn mul_wide_s(a: u64, b: u64) -> u64 {
                (s(a) as $wide_s * s(b) as $wide_s) as u64 & (u64::MAX >> (64 - 2 * BITS.min(32)))
            }
            pub fn mad_lo(a: u64, b: u64, c: u64) -> u64 {
                u(a).wrapping_mul(u(b)).wrapping_add(u(c)) as u64
            }
            pub fn mad_hi_u(a: u64, b: u64, c: u64) -> u64 {
                u(mul_hi_u(a, b)).wrapping_add(u(c)) as u64
            }
            pub fn mad_hi_s(a: u64, b: u64, c: u64) -> u64 {
                u(mul_hi_s(a, b)).wrapping_add(u(c)) as u64
            }
            pub fn mad_wide_u(a: u64, b: u64, c: u64) -> u64 {
                mul_wide_u(a, b).wrapping_add(c)
            }
            pub fn mad_wide_s(a: u64, b: u64, c: u64) -> u64 {
                let mask = u64::MAX >> (64 - 2 * BITS.min(32));
                mul_wide_s(a, b).wrapping_add(c) & mask
            }
            /// Division by zero gives all ones, as NVIDIA GPUs do (PTX leaves
            /// it unspecified).
            pub fn div_u(a: u64, b: u64) -> u64 {
                u(a).checked_div(u(b)).unwrap_or(<$u>::MAX) as u64
            }
            /// By zero: -1; MIN / -1 wraps to MIN.
            pub fn div_s(a: u64, b: u64) -> u64 {
                if s(b) == 0 {
                    out_s(-1)
                } else {
                    out_s(s(a).wrapping_div(s(b)))
                }
            }
            /// By zero: the dividend.
            pub fn rem_u(a: u64, b: u64) -> u64 {
                u(a).checked_rem(u(b)).unwrap_or(u(a)) as u64
            }
            pub fn rem_s(a: u64, b: u64) -> u64 {
                if s(b) == 0 {
                    out_s(s(a))
                } else {
                    out_s(s(a).wrapping_rem(s(b)))
                }
            }
            pub fn min_u(a: u64, b: u64) -> u64 {
                u(a).min(u(b)) as u64
            }
            pub fn min_s(a: u64, b: u64) -> u64 {
                out_s(s(a).min(s(b)))
            }
            pub fn max_u(a: u64, b: u64) -> u64 {
                u(a).max(u(b)) as u64
            }
            pub fn max_s(a: u64, b: u64) -> u64 {
                out_s(s(a).max(s(b)))
            }
            pub fn and(a: u64, b: u64) -> u64 {
                (u(a) & u(b)) as u64
            }
            pub fn or(a: u64, b: u64) -> u64 {
                (u(a) | u(b)) as u64
            }
            pub fn xor(a: u64, b: u64) -> u64 {
                (u(a) ^ u(b)) as u64
            }
            /// Shift amounts are unsigned 32-bit and clamp at the width.
            pub fn shl(a: u64, b: u64) -> u64 {
                let n = b as u32;
                if n >= BITS { 0 } else { (u(a) << n) as u64 }
            }
            pub fn shr_u(a: u64, b: u64) -> u64 {
                let n = b as u32;
                if n >= BITS { 0 } else { (u(a) >> n) as u64 }
            }
            pub fn shr_s(a: u64, b: u64) -> u64 {
                out_s(s(a) >> (b as u32).min(BITS - 1))
            }
            pub fn neg(a: u64) -> u64 {
                out_s(s(a).wrapping_neg())
            }
            pub fn abs(a: u64) -> u64 {
                out_s(s(a).wrapping_abs())
            }
            pub fn not(a: u64) -> u64 {
                (!u(a)) as u64
            }
            pub fn cnot(a: u64) -> u64 {
                (u(a) == 0) as u64
            }
            pub fn popc(a: u64) -> u64 {
                u(a).count_ones() as u64
            }
            pub fn clz(a: u64) -> u64 {
                u(a).leading_zeros() as u64
            }
            pub fn brev(a: u64) -> u64 {
                u(a).reverse_bits() as u64
            }
        }
    };
}

width!(w8, u8, i8, u16, i16);
width!(w16, u16, i16, u32, i32);
width!(w32, u32, i32, u64, i64);
width!(w64, u64, i64, u128, i128);

/// The 48-bit product of two 24-bit operands (`mul24`, `mad24`): the low
/// 24 bits of each, sign-extended for signed types.
fn product24(a: u64, b: u64, signed: bool) -> i64 {
    let take = |x: u64| {
        let low = x & 0xff_ffff;
        if signed {
            ((low << 40) as i64) >> 40
        } else {
            low as i64
        }
    };
    take(a) * take(b)
}
fn mul24_lo_u(a: u64, b: u64) -> u64 {
    product24(a, b, false) as u64 & 0xffff_ffff
}
fn mul24_lo_s(a: u64, b: u64) -> u64 {
    product24(a, b, true) as u64 & 0xffff_ffff
}
/// `.hi`: bits 16 to 47 of the product.
fn mul24_hi_u(a: u64, b: u64) -> u64 {
    (product24(a, b, false) >> 16) as u64 & 0xffff_ffff
}
fn mul24_hi_s(a: u64, b: u64) -> u64 {
    (product24(a, b, true) >> 16) as u64 & 0xffff_ffff
}
fn mad24_lo_u(a: u64, b: u64, c: u64) -> u64 {
    mul24_lo_u(a, b).wrapping_add(c) & 0xffff_ffff
}
fn mad24_lo_s(a: u64, b: u64, c: u64) -> u64 {
    mul24_lo_s(a, b).wrapping_add(c) & 0xffff_ffff
}
fn mad24_hi_u(a: u64, b: u64, c: u64) -> u64 {
    mul24_hi_u(a, b).wrapping_add(c) & 0xffff_ffff
}
fn mad24_hi_s(a: u64, b: u64, c: u64) -> u64 {
    mul24_hi_s(a, b).wrapping_add(c) & 0xffff_ffff
}

/// Picks `$f` from the width module for `$bits`.
macro_rules! by_width {
    ($bits:expr, $f:ident) => {
        match $bits {
            8 => w8::$f,
            16 => w16::$f,
            32 => w32::$f,
            _ => w64::$f,
        }
    };
}

/// `op` (the opcode with its modifiers, type last) as a binary function.
pub fn binary(base: &str, mods: &[&str], ty: &str) -> Option<BinaryFn> {
    let (bits, signed) = int_type(ty)?;
    let has = |m: &str| mods.contains(&m);
    Some(match base {
        "add" if has("sat") => by_width!(bits, add_sat),
        "add" => by_width!(bits, add),
        "sub" if has("sat") => by_width!(bits, sub_sat),
        "sub" => by_width!(bits, sub),
        "mul" if has("wide") && bits < 64 => match signed {
            true => by_width!(bits, mul_wide_s),
            false => by_width!(bits, mul_wide_u),
        },
        "mul" if has("hi") => match signed {
            true => by_width!(bits, mul_hi_s),
            false => by_width!(bits, mul_hi_u),
        },
        "mul" if has("lo") || mods.is_empty() => by_width!(bits, mul_lo),
        "mul24" if bits == 32 => match (has("hi"), signed) {
            (false, false) => mul24_lo_u,
            (false, true) => mul24_lo_s,
            (true, false) => mul24_hi_u,
            (true, true) => mul24_hi_s,
        },
        "div" if signed => by_width!(bits, div_s),
        "div" => by_width!(bits, div_u),
        "rem" if signed => by_width!(bits, rem_s),
        "rem" => by_width!(bits, rem_u),
        "min" if signed => by_width!(bits, min_s),
        "min" => by_width!(bits, min_u),
        "max" if signed => by_width!(bits, max_s),
        "max" => by_width!(bits, max_u),
        "and" => by_width!(bits, and),
        "or" => by_width!(bits, or),
        "xor" => by_width!(bits, xor),
        "shl" => by_width!(bits, shl),
        "shr" if signed => by_width!(bits, shr_s),
        "shr" => by_width!(bits, shr_u),
        _ => return None,
    })
}

pub fn unary(base: &str, ty: &str) -> Option<UnaryFn> {
    let (bits, _) = int_type(ty)?;
    Some(match base {
        "neg" => by_width!(bits, neg),
        "abs" => by_width!(bits, abs),
        "not" => by_width!(bits, not),
        "cnot" => by_width!(bits, cnot),
        "popc" => by_width!(bits, popc),
        "clz" => by_width!(bits, clz),
        "brev" => by_width!(bits, brev),
        _ => return None,
    })
}

pub fn ternary(base: &str, mods: &[&str], ty: &str) -> Option<TernaryFn> {
    let (bits, signed) = int_type(ty)?;
    let has = |m: &str| mods.contains(&m);
    Some(match base {
        "mad" if has("wide") && bits < 64 => match signed {
            true => by_width!(bits, mad_wide_s),
            false => by_width!(bits, mad_wide_u),
        },
        "mad" if has("hi") => match signed {
            true => by_width!(bits, mad_hi_s),
            false => by_width!(bits, mad_hi_u),
        },
        "mad" if has("lo") => by_width!(bits, mad_lo),
        "mad24" if bits == 32 && !has("sat") => match (has("hi"), signed) {
            (false, false) => mad24_lo_u,
            (false, true) => mad24_lo_s,
            (true, false) => mad24_hi_u,
            (true, true) => mad24_hi_s,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(op: &str, mods: &[&str], ty: &str) -> BinaryFn {
        binary(op, mods, ty).unwrap_or_else(|| panic!("{op} {ty}"))
    }
    fn s32(x: i32) -> u64 {
        x as u32 as u64
    }

    #[test]
    fn add_and_sub_wrap_on_signed_overflow_and_saturate_with_sat() {
        assert_eq!(bin("add", &[], "s32")(s32(i32::MAX), 1), s32(i32::MIN));
        assert_eq!(bin("add", &["sat"], "s32")(s32(i32::MAX), 1), s32(i32::MAX));
        assert_eq!(bin("sub", &[], "u32")(0, 1), u32::MAX as u64);
        assert_eq!(bin("add", &[], "s64")(i64::MAX as u64, 1), i64::MIN as u64);
    }

    #[test]
    fn multiplies_lo_hi_and_wide() {
        assert_eq!(bin("mul", &["wide"], "s32")(s32(-3), 4), (-12i64) as u64);
        assert_eq!(
            bin("mul", &["wide"], "u32")(u32::MAX as u64, 2),
            2 * u32::MAX as u64
        );
        assert_eq!(bin("mul", &["hi"], "u32")(1 << 31, 4), 2);
        assert_eq!(bin("mul", &["hi"], "s32")(s32(-1), 1), s32(-1));
        assert_eq!(bin("mul", &["lo"], "s32")(s32(-3), 5), s32(-15));
        let mad = ternary("mad", &["lo"], "s32").unwrap();
        assert_eq!(mad(s32(7), s32(6), s32(-2)), 40);
        let wide = ternary("mad", &["wide"], "s16").unwrap();
        assert_eq!(wide(0xffff, 2, 0), (-2i32) as u32 as u64);
        // mul24 takes the low 24 bits, sign-extended for .s32.
        let m24 = bin("mul24", &["lo"], "s32");
        assert_eq!(m24(0x0180_0000, 2), s32(-0x0100_0000));
        assert_eq!(bin("mul24", &["lo"], "u32")(0x0180_0000, 2), 0x0100_0000);
        assert_eq!(
            bin("mul24", &["hi"], "u32")(0xff_ffff, 0xff_ffff),
            0xffff_fe00
        );
    }

    #[test]
    fn division_by_zero_and_overflow() {
        assert_eq!(bin("div", &[], "u32")(7, 0), u32::MAX as u64);
        assert_eq!(bin("div", &[], "s32")(7, 0), s32(-1));
        assert_eq!(
            bin("div", &[], "s32")(s32(i32::MIN), s32(-1)),
            s32(i32::MIN)
        );
        assert_eq!(
            bin("div", &[], "s32")(s32(-7), 2),
            s32(-3),
            "truncates toward zero"
        );
        assert_eq!(bin("rem", &[], "s32")(s32(-7), 2), s32(-1));
        assert_eq!(bin("rem", &[], "u32")(7, 0), 7);
    }

    #[test]
    fn shifts_of_the_width_or_more_clamp() {
        assert_eq!(bin("shl", &[], "b32")(1, 31), 1 << 31);
        assert_eq!(bin("shl", &[], "b32")(1, 32), 0);
        assert_eq!(bin("shr", &[], "u32")(u32::MAX as u64, 40), 0);
        assert_eq!(bin("shr", &[], "s32")(s32(-8), 40), s32(-1));
        assert_eq!(bin("shr", &[], "s32")(s32(-8), 1), s32(-4));
        assert_eq!(bin("shl", &[], "b64")(1, 63), 1 << 63);
        assert_eq!(bin("shl", &[], "b64")(1, 64), 0);
    }

    #[test]
    fn min_max_and_bit_counts() {
        assert_eq!(bin("min", &[], "s32")(s32(-1), 1), s32(-1));
        assert_eq!(bin("min", &[], "u32")(s32(-1), 1), 1);
        assert_eq!(unary("popc", "b32").unwrap()(0xf0f0), 8);
        assert_eq!(unary("clz", "b32").unwrap()(1), 31);
        assert_eq!(unary("clz", "b64").unwrap()(0), 64);
        assert_eq!(unary("brev", "b32").unwrap()(1), 1 << 31);
        assert_eq!(unary("abs", "s32").unwrap()(s32(i32::MIN)), s32(i32::MIN));
        assert_eq!(unary("neg", "s32").unwrap()(5), s32(-5));
        assert_eq!(unary("not", "b16").unwrap()(0), 0xffff);
    }
}
