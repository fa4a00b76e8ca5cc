//! Comparisons for `setp` (and `set`): signed, unsigned and floating point,
//! ordered and unordered.

use super::int::int_type;
use crate::ir::CompareFn;

macro_rules! compare_fns {
    ($name:ident, $conv:expr) => {
        pub mod $name {
            fn v(x: u64) -> impl PartialOrd {
                ($conv)(x)
            }
            pub fn eq(a: u64, b: u64) -> bool {
                v(a) == v(b)
            }
            pub fn ne(a: u64, b: u64) -> bool {
                v(a) != v(b)
            }
            pub fn lt(a: u64, b: u64) -> bool {
                v(a) < v(b)
            }
            pub fn le(a: u64, b: u64) -> bool {
                v(a) <= v(b)
            }
            pub fn gt(a: u64, b: u64) -> bool {
                v(a) > v(b)
            }
            pub fn ge(a: u64, b: u64) -> bool {
                v(a) >= v(b)
            }
        }
    };
}

compare_fns!(u8_, |x: u64| x as u8);
compare_fns!(s8_, |x: u64| x as u8 as i8);
compare_fns!(u16_, |x: u64| x as u16);
compare_fns!(s16_, |x: u64| x as u16 as i16);
compare_fns!(u32_, |x: u64| x as u32);
compare_fns!(s32_, |x: u64| x as u32 as i32);
compare_fns!(u64_, |x: u64| x);
compare_fns!(s64_, |x: u64| x as i64);

macro_rules! float_compare_fns {
    ($name:ident, $conv:expr) => {
        pub mod $name {
            fn v(x: u64) -> f64 {
                ($conv)(x)
            }
            fn nan(a: u64, b: u64) -> bool {
                v(a).is_nan() || v(b).is_nan()
            }
            // Ordered: false when either is NaN (`ne` too).
            pub fn eq(a: u64, b: u64) -> bool {
                v(a) == v(b)
            }
            pub fn ne(a: u64, b: u64) -> bool {
                !nan(a, b) && v(a) != v(b)
            }
            pub fn lt(a: u64, b: u64) -> bool {
                v(a) < v(b)
            }
            pub fn le(a: u64, b: u64) -> bool {
                v(a) <= v(b)
            }
            pub fn gt(a: u64, b: u64) -> bool {
                v(a) > v(b)
            }
            pub fn ge(a: u64, b: u64) -> bool {
                v(a) >= v(b)
            }
            // Unordered: true when either is NaN.
            pub fn equ(a: u64, b: u64) -> bool {
                nan(a, b) || v(a) == v(b)
            }
            pub fn neu(a: u64, b: u64) -> bool {
                v(a) != v(b)
            }
            pub fn ltu(a: u64, b: u64) -> bool {
                nan(a, b) || v(a) < v(b)
            }
            pub fn leu(a: u64, b: u64) -> bool {
                nan(a, b) || v(a) <= v(b)
            }
            pub fn gtu(a: u64, b: u64) -> bool {
                nan(a, b) || v(a) > v(b)
            }
            pub fn geu(a: u64, b: u64) -> bool {
                nan(a, b) || v(a) >= v(b)
            }
            pub fn num(a: u64, b: u64) -> bool {
                !nan(a, b)
            }
            pub fn nan_(a: u64, b: u64) -> bool {
                nan(a, b)
            }
        }
    };
}

float_compare_fns!(f32_, |x: u64| f64::from(f32::from_bits(x as u32)));
float_compare_fns!(f64_, f64::from_bits);

macro_rules! int_cmp {
    ($m:ident, $cmp:expr) => {
        match $cmp {
            "eq" => $m::eq,
            "ne" => $m::ne,
            "lt" | "lo" => $m::lt,
            "le" | "ls" => $m::le,
            "gt" | "hi" => $m::gt,
            "ge" | "hs" => $m::ge,
            _ => return None,
        }
    };
}

macro_rules! float_cmp {
    ($m:ident, $cmp:expr) => {
        match $cmp {
            "eq" => $m::eq,
            "ne" => $m::ne,
            "lt" => $m::lt,
            "le" => $m::le,
            "gt" => $m::gt,
            "ge" => $m::ge,
            "equ" => $m::equ,
            "neu" => $m::neu,
            "ltu" => $m::ltu,
            "leu" => $m::leu,
            "gtu" => $m::gtu,
            "geu" => $m::geu,
            "num" => $m::num,
            "nan" => $m::nan_,
            _ => return None,
        }
    };
}

/// The comparison `cmp` (`lt`, `hs`, `neu` ...) on type `ty`. `lo/ls/hi/hs`
/// compare unsigned; `lt` on an unsigned type does too.
pub fn compare(cmp: &str, ty: &str) -> Option<CompareFn> {
    let unsigned_name = matches!(cmp, "lo" | "ls" | "hi" | "hs");
    Some(match ty {
        "f32" => float_cmp!(f32_, cmp),
        "f64" => float_cmp!(f64_, cmp),
        "pred" => int_cmp!(u8_, cmp),
        _ => {
            let (bits, signed) = int_type(ty)?;
            match (bits, signed && !unsigned_name) {
                (8, false) => int_cmp!(u8_, cmp),
                (8, true) => int_cmp!(s8_, cmp),
                (16, false) => int_cmp!(u16_, cmp),
                (16, true) => int_cmp!(s16_, cmp),
                (32, false) => int_cmp!(u32_, cmp),
                (32, true) => int_cmp!(s32_, cmp),
                (64, false) => int_cmp!(u64_, cmp),
                _ => int_cmp!(s64_, cmp),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s32(x: i32) -> u64 {
        x as u32 as u64
    }
    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn signed_and_unsigned_integers() {
        assert!(compare("lt", "s32").unwrap()(s32(-1), 0));
        assert!(!compare("lt", "u32").unwrap()(s32(-1), 0));
        assert!(!compare("lo", "s32").unwrap()(s32(-1), 0), "lo is unsigned");
        assert!(compare("ge", "u64").unwrap()(u64::MAX, 1));
        assert!(compare("lt", "s64").unwrap()(u64::MAX, 1));
        assert!(compare("eq", "s16").unwrap()(0xffff, 0xffff));
    }

    #[test]
    fn nan_is_unordered() {
        let nan = f(f32::NAN);
        for cmp in ["eq", "ne", "lt", "le", "gt", "ge", "num"] {
            assert!(!compare(cmp, "f32").unwrap()(nan, f(1.0)), "{cmp}");
        }
        for cmp in ["equ", "neu", "ltu", "leu", "gtu", "geu", "nan"] {
            assert!(compare(cmp, "f32").unwrap()(nan, f(1.0)), "{cmp}");
        }
        assert!(compare("lt", "f32").unwrap()(
            f(f32::NEG_INFINITY),
            f(-1e38)
        ));
        assert!(compare("eq", "f32").unwrap()(f(0.0), f(-0.0)));
        assert!(compare("gt", "f64").unwrap()(
            2f64.to_bits(),
            1f64.to_bits()
        ));
    }
}
