//! Floating-point instructions on f32 and f64: add, sub, mul, fma/mad, div,
//! sqrt, rcp, rsqrt, min, max, abs, neg and the `.approx` functions, with the
//! rounding modes `.rn .rz .rm .rp`, `.ftz` and `.sat`. Round-to-nearest
//! uses the host's IEEE operations; the directed modes take the exact result
//! as a rounded value plus the sign of its error and step once.

use crate::ir::{BinaryFn, TernaryFn, UnaryFn};

/// Rounding modes, as const parameters.
pub const RN: u8 = 0;
pub const RZ: u8 = 1;
pub const RM: u8 = 2;
pub const RP: u8 = 3;

pub fn rounding(mods: &[&str]) -> u8 {
    for m in mods {
        match *m {
            "rz" => return RZ,
            "rm" => return RM,
            "rp" => return RP,
            _ => {}
        }
    }
    RN
}

fn next_up32(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let bits = x.to_bits();
    f32::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

fn next_down32(x: f32) -> f32 {
    -next_up32(-x)
}

fn next_up64(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

fn next_down64(x: f64) -> f64 {
    -next_up64(-x)
}

/// Rounds the exact value `hi + lo` (|lo| tiny beside hi, or 0) to f32 in
/// `mode`.
pub fn round_f32(mode: u8, hi: f64, lo: f64) -> f32 {
    let r = hi as f32;
    if mode == RN || hi.is_nan() || hi.is_infinite() {
        return r;
    }
    // The sign of exact - r.
    let above = if f64::from(r) == hi {
        lo > 0.0
    } else {
        hi > f64::from(r)
    };
    let below = if f64::from(r) == hi {
        lo < 0.0
    } else {
        hi < f64::from(r)
    };
    match mode {
        RZ if r > 0.0 && below => next_down32(r),
        RZ if r < 0.0 && above => next_up32(r),
        RZ if r == 0.0 => r,
        RM if below => next_down32(r),
        RP if above => next_up32(r),
        _ => r,
    }
}

/// Rounds `r + err` (r already rounded to nearest, err the exact remainder's
/// sign carrier) to f64 in `mode`.
pub fn round_f64(mode: u8, r: f64, err: f64) -> f64 {
    if mode == RN || !r.is_finite() {
        return r;
    }
    match mode {
        RZ if r > 0.0 && err < 0.0 => next_down64(r),
        RZ if r < 0.0 && err > 0.0 => next_up64(r),
        RM if err < 0.0 => next_down64(r),
        RP if err > 0.0 => next_up64(r),
        _ => r,
    }
}

/// The exact sum's (rounded, error) pair.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn f32_of(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

/// The bits of an f32 result: a NaN is the canonical 0x7fffffff, as every
/// f32 instruction of an NVIDIA GPU makes it (f64 instructions propagate
/// NaN payloads, as the host's do).
pub fn out32(x: f32) -> u64 {
    if x.is_nan() {
        0x7fff_ffff
    } else {
        u64::from(x.to_bits())
    }
}

fn ftz32<const FTZ: bool>(x: f32) -> f32 {
    if FTZ && x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// A result of an f32 operation through `.ftz` and `.sat`.
fn finish32<const FTZ: bool, const SAT: bool>(x: f32) -> u64 {
    let x = ftz32::<FTZ>(x);
    let x = if SAT {
        if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
    } else {
        x
    };
    out32(x)
}

pub fn add32<const M: u8, const FTZ: bool, const SAT: bool>(a: u64, b: u64) -> u64 {
    let (a, b) = (ftz32::<FTZ>(f32_of(a)), ftz32::<FTZ>(f32_of(b)));
    let r = if M == RN {
        a + b
    } else {
        let (hi, lo) = two_sum(f64::from(a), f64::from(b));
        round_f32(M, hi, lo)
    };
    finish32::<FTZ, SAT>(r)
}

pub fn sub32<const M: u8, const FTZ: bool, const SAT: bool>(a: u64, b: u64) -> u64 {
    add32::<M, FTZ, SAT>(a, out32(-f32_of(b)))
}

pub fn mul32<const M: u8, const FTZ: bool, const SAT: bool>(a: u64, b: u64) -> u64 {
    let (a, b) = (ftz32::<FTZ>(f32_of(a)), ftz32::<FTZ>(f32_of(b)));
    // The product of two f32 is exact in f64.
    let r = if M == RN {
        a * b
    } else {
        round_f32(M, f64::from(a) * f64::from(b), 0.0)
    };
    finish32::<FTZ, SAT>(r)
}

pub fn fma32<const M: u8, const FTZ: bool, const SAT: bool>(a: u64, b: u64, c: u64) -> u64 {
    let (a, b, c) = (
        ftz32::<FTZ>(f32_of(a)),
        ftz32::<FTZ>(f32_of(b)),
        ftz32::<FTZ>(f32_of(c)),
    );
    let r = if M == RN {
        a.mul_add(b, c)
    } else {
        let (hi, lo) = two_sum(f64::from(a) * f64::from(b), f64::from(c));
        round_f32(M, hi, lo)
    };
    finish32::<FTZ, SAT>(r)
}

pub fn div32<const M: u8, const FTZ: bool>(a: u64, b: u64) -> u64 {
    let (a, b) = (ftz32::<FTZ>(f32_of(a)), ftz32::<FTZ>(f32_of(b)));
    let r = if M == RN {
        a / b
    } else {
        let (a, b) = (f64::from(a), f64::from(b));
        let q = a / b;
        // a - q*b exactly; its sign times b's says which side q is on.
        let rem = (-q).mul_add(b, a);
        round_f32(M, q, rem * b.signum())
    };
    finish32::<FTZ, false>(r)
}

/// `div.approx` and `div.full`: within 2 ulps of a / b, and like the
/// GPU's (a times an approximate reciprocal), zero when 1/b is subnormal
/// (|b| of 2^126 and more).
pub fn div_approx32<const FTZ: bool>(a: u64, b: u64) -> u64 {
    let (a, b) = (ftz32::<FTZ>(f32_of(a)), ftz32::<FTZ>(f32_of(b)));
    if b.is_finite() && b.abs() >= f32::powi(2.0, 126) {
        return finish32::<FTZ, false>(a * 0.0 * b.signum());
    }
    finish32::<FTZ, false>(a / b)
}

pub fn sqrt32<const M: u8, const FTZ: bool>(a: u64) -> u64 {
    let a = ftz32::<FTZ>(f32_of(a));
    let r = if M == RN {
        a.sqrt()
    } else {
        let s = f64::from(a).sqrt();
        round_f32(M, s, (-s).mul_add(s, f64::from(a)))
    };
    finish32::<FTZ, false>(r)
}

pub fn rcp32<const M: u8, const FTZ: bool>(a: u64) -> u64 {
    div32::<M, FTZ>(out32(1.0), a)
}

pub fn rsqrt32<const FTZ: bool>(a: u64) -> u64 {
    finish32::<FTZ, false>(1.0 / ftz32::<FTZ>(f32_of(a)).sqrt())
}

/// `.approx` transcendental functions, computed accurately.
pub fn ex2_32<const FTZ: bool>(a: u64) -> u64 {
    finish32::<FTZ, false>(ftz32::<FTZ>(f32_of(a)).exp2())
}
pub fn lg2_32<const FTZ: bool>(a: u64) -> u64 {
    finish32::<FTZ, false>(ftz32::<FTZ>(f32_of(a)).log2())
}
pub fn sin32<const FTZ: bool>(a: u64) -> u64 {
    finish32::<FTZ, false>(ftz32::<FTZ>(f32_of(a)).sin())
}
pub fn cos32<const FTZ: bool>(a: u64) -> u64 {
    finish32::<FTZ, false>(ftz32::<FTZ>(f32_of(a)).cos())
}
pub fn tanh32<const FTZ: bool>(a: u64) -> u64 {
    finish32::<FTZ, false>(ftz32::<FTZ>(f32_of(a)).tanh())
}

/// min/max as PTX defines them: a NaN operand yields the other, and -0 is
/// below +0.
fn minimum(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        // Equal: only the zeros' signs can differ.
        return if (a.is_sign_negative() && !max) || (b.is_sign_negative() && max) {
            a
        } else {
            b
        };
    }
    if (a < b) != max { a } else { b }
}
pub fn min32<const FTZ: bool>(a: u64, b: u64) -> u64 {
    let (a, b) = (ftz32::<FTZ>(f32_of(a)), ftz32::<FTZ>(f32_of(b)));
    finish32::<FTZ, false>(minimum(f64::from(a), f64::from(b), false) as f32)
}
pub fn max32<const FTZ: bool>(a: u64, b: u64) -> u64 {
    let (a, b) = (ftz32::<FTZ>(f32_of(a)), ftz32::<FTZ>(f32_of(b)));
    finish32::<FTZ, false>(minimum(f64::from(a), f64::from(b), true) as f32)
}
/// abs and neg change the sign bit alone, NaN payloads included.
pub fn abs32<const FTZ: bool>(a: u64) -> u64 {
    u64::from(ftz32::<FTZ>(f32_of(a)).to_bits() & 0x7fff_ffff)
}
pub fn neg32<const FTZ: bool>(a: u64) -> u64 {
    u64::from(ftz32::<FTZ>(f32_of(a)).to_bits() ^ 0x8000_0000)
}

fn f64_of(x: u64) -> f64 {
    f64::from_bits(x)
}

pub fn add64<const M: u8>(a: u64, b: u64) -> u64 {
    let (s, e) = two_sum(f64_of(a), f64_of(b));
    round_f64(M, s, e).to_bits()
}
pub fn sub64<const M: u8>(a: u64, b: u64) -> u64 {
    add64::<M>(a, (-f64_of(b)).to_bits())
}
pub fn mul64<const M: u8>(a: u64, b: u64) -> u64 {
    let (a, b) = (f64_of(a), f64_of(b));
    let p = a * b;
    round_f64(M, p, a.mul_add(b, -p)).to_bits()
}
pub fn fma64<const M: u8>(a: u64, b: u64, c: u64) -> u64 {
    let (a, b, c) = (f64_of(a), f64_of(b), f64_of(c));
    let r = a.mul_add(b, c);
    if M == RN || !r.is_finite() {
        return r.to_bits();
    }
    // exact = p + e + c with p + e = a*b exactly; its error against r.
    let p = a * b;
    let e = a.mul_add(b, -p);
    let (s, t) = two_sum(p, c);
    round_f64(M, r, ((s - r) + t) + e).to_bits()
}
pub fn div64<const M: u8>(a: u64, b: u64) -> u64 {
    let (a, b) = (f64_of(a), f64_of(b));
    let q = a / b;
    round_f64(M, q, (-q).mul_add(b, a) * b.signum()).to_bits()
}
pub fn sqrt64<const M: u8>(a: u64) -> u64 {
    let a = f64_of(a);
    let s = a.sqrt();
    round_f64(M, s, (-s).mul_add(s, a)).to_bits()
}
pub fn rcp64<const M: u8>(a: u64) -> u64 {
    div64::<M>(1f64.to_bits(), a)
}
pub fn min64(a: u64, b: u64) -> u64 {
    minimum(f64_of(a), f64_of(b), false).to_bits()
}
pub fn max64(a: u64, b: u64) -> u64 {
    minimum(f64_of(a), f64_of(b), true).to_bits()
}
pub fn abs64(a: u64) -> u64 {
    a & !(1 << 63)
}
pub fn neg64(a: u64) -> u64 {
    a ^ (1 << 63)
}
pub fn rsqrt64(a: u64) -> u64 {
    (1.0 / f64_of(a).sqrt()).to_bits()
}

/// Picks `f::<mode, ftz, sat>` for runtime flags.
macro_rules! pick3 {
    ($f:ident, $m:expr, $ftz:expr, $sat:expr) => {
        match ($m, $ftz, $sat) {
            (RN, false, false) => $f::<RN, false, false>,
            (RN, false, true) => $f::<RN, false, true>,
            (RN, true, false) => $f::<RN, true, false>,
            (RN, true, true) => $f::<RN, true, true>,
            (RZ, false, false) => $f::<RZ, false, false>,
            (RZ, false, true) => $f::<RZ, false, true>,
            (RZ, true, false) => $f::<RZ, true, false>,
            (RZ, true, true) => $f::<RZ, true, true>,
            (RM, false, false) => $f::<RM, false, false>,
            (RM, false, true) => $f::<RM, false, true>,
            (RM, true, false) => $f::<RM, true, false>,
            (RM, true, true) => $f::<RM, true, true>,
            (_, false, false) => $f::<RP, false, false>,
            (_, false, true) => $f::<RP, false, true>,
            (_, true, false) => $f::<RP, true, false>,
            (_, true, true) => $f::<RP, true, true>,
        }
    };
}

macro_rules! pick2 {
    ($f:ident, $m:expr, $ftz:expr) => {
        match ($m, $ftz) {
            (RN, false) => $f::<RN, false>,
            (RN, true) => $f::<RN, true>,
            (RZ, false) => $f::<RZ, false>,
            (RZ, true) => $f::<RZ, true>,
            (RM, false) => $f::<RM, false>,
            (RM, true) => $f::<RM, true>,
            (_, false) => $f::<RP, false>,
            (_, true) => $f::<RP, true>,
        }
    };
}

macro_rules! pick_ftz {
    ($f:ident, $ftz:expr) => {
        if $ftz { $f::<true> } else { $f::<false> }
    };
}

macro_rules! pick_mode {
    ($f:ident, $m:expr) => {
        match $m {
            RN => $f::<RN>,
            RZ => $f::<RZ>,
            RM => $f::<RM>,
            _ => $f::<RP>,
        }
    };
}

pub fn binary(base: &str, mods: &[&str], ty: &str) -> Option<BinaryFn> {
    let m = rounding(mods);
    let ftz = mods.contains(&"ftz");
    let sat = mods.contains(&"sat");
    Some(match (ty, base) {
        ("f32", "add") => pick3!(add32, m, ftz, sat),
        ("f32", "sub") => pick3!(sub32, m, ftz, sat),
        ("f32", "mul") => pick3!(mul32, m, ftz, sat),
        ("f32", "div") if mods.contains(&"approx") || mods.contains(&"full") => {
            pick_ftz!(div_approx32, ftz)
        }
        ("f32", "div") => pick2!(div32, m, ftz),
        ("f32", "min") => pick_ftz!(min32, ftz),
        ("f32", "max") => pick_ftz!(max32, ftz),
        ("f64", "add") => pick_mode!(add64, m),
        ("f64", "sub") => pick_mode!(sub64, m),
        ("f64", "mul") => pick_mode!(mul64, m),
        ("f64", "div") => pick_mode!(div64, m),
        ("f64", "min") => min64,
        ("f64", "max") => max64,
        _ => return None,
    })
}

pub fn unary(base: &str, mods: &[&str], ty: &str) -> Option<UnaryFn> {
    let m = rounding(mods);
    let ftz = mods.contains(&"ftz");
    let approx = mods.contains(&"approx");
    Some(match (ty, base) {
        ("f32", "sqrt") if approx => pick2!(sqrt32, RN, ftz),
        ("f32", "sqrt") => pick2!(sqrt32, m, ftz),
        ("f32", "rcp") if approx => pick2!(rcp32, RN, ftz),
        ("f32", "rcp") => pick2!(rcp32, m, ftz),
        ("f32", "rsqrt") => pick_ftz!(rsqrt32, ftz),
        ("f32", "ex2") => pick_ftz!(ex2_32, ftz),
        ("f32", "lg2") => pick_ftz!(lg2_32, ftz),
        ("f32", "sin") => pick_ftz!(sin32, ftz),
        ("f32", "cos") => pick_ftz!(cos32, ftz),
        ("f32", "tanh") => pick_ftz!(tanh32, ftz),
        ("f32", "abs") => pick_ftz!(abs32, ftz),
        ("f32", "neg") => pick_ftz!(neg32, ftz),
        ("f64", "sqrt") => pick_mode!(sqrt64, m),
        ("f64", "rcp") => pick_mode!(rcp64, if approx { RN } else { m }),
        ("f64", "rsqrt") => rsqrt64,
        ("f64", "abs") => abs64,
        ("f64", "neg") => neg64,
        _ => return None,
    })
}

/// `testp.op.type`: a property of a float, as a predicate.
pub fn testp(mods: &[&str], ty: &str) -> Option<UnaryFn> {
    macro_rules! tests {
        ($conv:expr) => {{
            fn finite(a: u64) -> u64 {
                u64::from(($conv)(a).is_finite())
            }
            fn infinite(a: u64) -> u64 {
                u64::from(($conv)(a).is_infinite())
            }
            fn number(a: u64) -> u64 {
                u64::from(!($conv)(a).is_nan())
            }
            fn notanumber(a: u64) -> u64 {
                u64::from(($conv)(a).is_nan())
            }
            fn normal(a: u64) -> u64 {
                u64::from(($conv)(a).is_normal())
            }
            fn subnormal(a: u64) -> u64 {
                u64::from(($conv)(a).is_subnormal())
            }
            match *mods.first()? {
                "finite" => finite as UnaryFn,
                "infinite" => infinite,
                "number" => number,
                "notanumber" => notanumber,
                "normal" => normal,
                "subnormal" => subnormal,
                _ => return None,
            }
        }};
    }
    Some(match ty {
        "f32" => tests!(f32_of),
        "f64" => tests!(f64_of),
        _ => return None,
    })
}

/// fma and mad (fused on every GPU the course targets).
pub fn ternary(base: &str, mods: &[&str], ty: &str) -> Option<TernaryFn> {
    let m = rounding(mods);
    let ftz = mods.contains(&"ftz");
    let sat = mods.contains(&"sat");
    Some(match (ty, base) {
        ("f32", "fma" | "mad") => pick3!(fma32, m, ftz, sat),
        ("f64", "fma" | "mad") => pick_mode!(fma64, m),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u64 {
        out32(x)
    }
    fn back(x: u64) -> f32 {
        f32_of(x)
    }

    #[test]
    fn add_rounds_in_each_named_mode() {
        let one = 1.0f32;
        let tiny = f32::EPSILON / 4.0; // below half an ulp of 1.0
        let add = |mods: &[&str]| binary("add", mods, "f32").unwrap()(f(one), f(tiny));
        assert_eq!(back(add(&["rn"])), 1.0);
        assert_eq!(back(add(&["rz"])), 1.0);
        assert_eq!(back(add(&["rm"])), 1.0);
        assert_eq!(back(add(&["rp"])), 1.0 + f32::EPSILON);
        let sub = binary("add", &["rm"], "f32").unwrap()(f(one), f(-tiny));
        assert_eq!(back(sub), 1.0 - f32::EPSILON / 2.0);
        let rz = binary("add", &["rz"], "f32").unwrap()(f(-one), f(-tiny));
        assert_eq!(back(rz), -1.0);
    }

    #[test]
    fn nan_and_infinities_propagate() {
        let add = binary("add", &[], "f32").unwrap();
        assert!(back(add(f(f32::NAN), f(1.0))).is_nan());
        assert!(back(add(f(f32::INFINITY), f(f32::NEG_INFINITY))).is_nan());
        assert_eq!(back(add(f(f32::MAX), f(f32::MAX))), f32::INFINITY);
        let rz = binary("add", &["rz"], "f32").unwrap();
        assert_eq!(
            back(rz(f(f32::MAX), f(f32::MAX))),
            f32::MAX,
            "rz never overflows to inf"
        );
        let div = binary("div", &["rn"], "f32").unwrap();
        assert_eq!(back(div(f(1.0), f(0.0))), f32::INFINITY);
        assert!(back(div(f(0.0), f(0.0))).is_nan());
        let min = binary("min", &[], "f32").unwrap();
        assert_eq!(back(min(f(f32::NAN), f(2.0))), 2.0, "min ignores one NaN");
        let max = binary("max", &[], "f32").unwrap();
        assert_eq!(max(f(-0.0), f(0.0)), f(0.0), "-0 is below +0");
        assert_eq!(max(f(0.0), f(-0.0)), f(0.0));
        assert_eq!(min(f(0.0), f(-0.0)), f(-0.0));
        assert!(back(unary("sqrt", &["rn"], "f32").unwrap()(f(-1.0))).is_nan());
    }

    #[test]
    fn fma_is_fused_and_directed() {
        let a = 1.0 + f32::EPSILON;
        let fma = ternary("fma", &["rn"], "f32").unwrap();
        // (1+e)(1-e) - 1 = -e^2: lost without fusing.
        let fused = back(fma(f(a), f(1.0 - f32::EPSILON), f(-1.0)));
        assert_eq!(fused, -(f32::EPSILON * f32::EPSILON));
        let down = ternary("fma", &["rm"], "f32").unwrap()(f(1.0), f(1.0), f(-1e-30));
        assert_eq!(back(down), 1.0 - f32::EPSILON / 2.0);
        let up = ternary("fma", &["rp"], "f32").unwrap()(f(1.0), f(1.0), f(1e-30));
        assert_eq!(back(up), 1.0 + f32::EPSILON);
    }

    #[test]
    fn division_and_sqrt_in_directed_modes() {
        let third = |mods: &[&str]| back(binary("div", mods, "f32").unwrap()(f(1.0), f(3.0)));
        assert_eq!(third(&["rn"]), 1.0 / 3.0);
        assert!(third(&["rm"]) < third(&["rp"]));
        assert_eq!(next_up32(third(&["rm"])), third(&["rp"]));
        assert!(f64::from(third(&["rm"])) < 1.0 / 3.0 && f64::from(third(&["rp"])) > 1.0 / 3.0);
        let sqrt2 = |mods: &[&str]| back(unary("sqrt", mods, "f32").unwrap()(f(2.0)));
        assert_eq!(sqrt2(&["rz"]), sqrt2(&["rm"]));
        assert_eq!(next_up32(sqrt2(&["rm"])), sqrt2(&["rp"]));
        let exact = back(unary("sqrt", &["rm"], "f32").unwrap()(f(4.0)));
        assert_eq!(exact, 2.0, "an exact result is not stepped");
    }

    #[test]
    fn ftz_and_sat() {
        let sub = f32::from_bits(1);
        let add = binary("add", &["ftz"], "f32").unwrap();
        assert_eq!(back(add(f(sub), f(0.0))).to_bits(), 0);
        let keep = binary("add", &[], "f32").unwrap();
        assert_eq!(back(keep(f(sub), f(0.0))), sub);
        let sat = binary("mul", &["sat"], "f32").unwrap();
        assert_eq!(back(sat(f(3.0), f(2.0))), 1.0);
        assert_eq!(back(sat(f(f32::NAN), f(2.0))), 0.0);
    }

    #[test]
    fn f64_directed_modes() {
        let third = |m: &str| {
            f64::from_bits(binary("div", &[m], "f64").unwrap()(
                1f64.to_bits(),
                3f64.to_bits(),
            ))
        };
        assert_eq!(third("rn"), 1.0 / 3.0);
        assert_eq!(next_up64(third("rm")), third("rp"));
        let add = binary("add", &["rp"], "f64").unwrap();
        assert_eq!(
            f64::from_bits(add(1f64.to_bits(), 1e-30f64.to_bits())),
            next_up64(1.0)
        );
    }
}
