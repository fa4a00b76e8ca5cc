//! `cvt`: between integer widths (truncating, extending, saturating), from
//! integers to floats and back (with the named rounding), and between f16,
//! f32 and f64.

use super::float::{RM, RN, RP, RZ, round_f32, round_f64};
use super::half;
use super::int::int_type;
use crate::ir::{Conversion, Num};

impl Num {
    pub fn parse(ty: &str) -> Option<Num> {
        match ty {
            "f16" => Some(Num::F16),
            "f32" => Some(Num::F32),
            "f64" => Some(Num::F64),
            _ => int_type(ty).map(|(bits, signed)| Num::Int { bits, signed }),
        }
    }
}

impl Conversion {
    /// `cvt[.mods].dty.aty`; None for types or modifiers not supported.
    pub fn new(mods: &[&str], dty: &str, aty: &str) -> Option<Conversion> {
        let mut conversion = Conversion {
            to: Num::parse(dty)?,
            from: Num::parse(aty)?,
            int_mode: None,
            float_mode: RN,
            sat: false,
            ftz: false,
        };
        for m in mods {
            match *m {
                "rni" => conversion.int_mode = Some(RN),
                "rzi" => conversion.int_mode = Some(RZ),
                "rmi" => conversion.int_mode = Some(RM),
                "rpi" => conversion.int_mode = Some(RP),
                "rn" => conversion.float_mode = RN,
                "rz" => conversion.float_mode = RZ,
                "rm" => conversion.float_mode = RM,
                "rp" => conversion.float_mode = RP,
                "sat" => conversion.sat = true,
                "ftz" => conversion.ftz = true,
                _ => return None,
            }
        }
        Some(conversion)
    }

    pub fn apply(&self, x: u64) -> u64 {
        match (self.to, self.from) {
            (Num::Int { bits, signed }, Num::Int { .. }) => {
                let v = self.read_int(x);
                let v = if self.sat { clamp(v, bits, signed) } else { v };
                truncate(v, bits)
            }
            (Num::Int { bits, signed }, _) => {
                let f = self.read_float(x);
                if f.is_nan() {
                    // As NVIDIA GPUs convert it: 0, or 2^63 into 64 bits.
                    return if bits == 64 { 1 << 63 } else { 0 };
                }
                let r = round_integral(f, self.int_mode.unwrap_or(RZ));
                // Float to integer always saturates in PTX.
                let v = if r >= 1e38 {
                    i128::MAX
                } else if r <= -1e38 {
                    i128::MIN
                } else {
                    r as i128
                };
                truncate(clamp(v, bits, signed), bits)
            }
            (Num::F16, from) => {
                let (hi, lo) = match from {
                    Num::Int { .. } => {
                        let v = self.read_int(x);
                        let hi = v as f64;
                        (hi, (v - hi as i128) as f64)
                    }
                    _ => {
                        let f = self.read_float(x);
                        (self.int_mode.map_or(f, |mode| round_integral(f, mode)), 0.0)
                    }
                };
                let bits = half::round(hi, lo, self.float_mode);
                if self.sat {
                    half::round(self.saturate(half::to_f64(bits)), 0.0, RN)
                } else {
                    bits
                }
            }
            (Num::F32, from) => {
                let r = match from {
                    Num::Int { .. } => {
                        let v = self.read_int(x);
                        let hi = v as f64;
                        let lo = (v - hi as i128) as f64;
                        if self.float_mode == RN {
                            v as f32
                        } else {
                            round_f32(self.float_mode, hi, lo)
                        }
                    }
                    // A half is exact in f32.
                    Num::F32 | Num::F16 => {
                        let f = self.read_float(x);
                        match self.int_mode {
                            Some(mode) => round_integral(f, mode) as f32,
                            None => f as f32,
                        }
                    }
                    Num::F64 => round_f32(self.float_mode, self.read_float(x), 0.0),
                };
                let r = if self.ftz && r.is_subnormal() {
                    0.0f32.copysign(r)
                } else {
                    r
                };
                // A NaN keeps its payload, as the GPU converts it, except
                // from a half, which gives the canonical NaN.
                let r = self.saturate(f64::from(r)) as f32;
                if self.from == Num::F16 {
                    super::float::out32(r)
                } else {
                    u64::from(r.to_bits())
                }
            }
            (Num::F64, from) => {
                let r = match from {
                    Num::Int { .. } => {
                        let v = self.read_int(x);
                        let r = v as f64;
                        round_f64(self.float_mode, r, (v - r as i128) as f64)
                    }
                    _ => {
                        let f = self.read_float(x);
                        match self.int_mode {
                            Some(mode) => round_integral(f, mode),
                            None => f,
                        }
                    }
                };
                self.saturate(r).to_bits()
            }
        }
    }

    fn saturate(&self, r: f64) -> f64 {
        if !self.sat {
            r
        } else if r.is_nan() {
            0.0
        } else {
            r.clamp(0.0, 1.0)
        }
    }

    fn read_int(&self, x: u64) -> i128 {
        let Num::Int { bits, signed } = self.from else {
            return 0;
        };
        let raw = if bits == 64 {
            x
        } else {
            x & ((1u64 << bits) - 1)
        };
        if !signed {
            i128::from(raw)
        } else {
            let shift = 64 - bits;
            i128::from(((raw << shift) as i64) >> shift)
        }
    }

    fn read_float(&self, x: u64) -> f64 {
        match self.from {
            Num::F16 => half::to_f64(x & 0xffff),
            Num::F32 => {
                let f = f32::from_bits(x as u32);
                let f = if self.ftz && f.is_subnormal() {
                    0.0f32.copysign(f)
                } else {
                    f
                };
                f64::from(f)
            }
            _ => f64::from_bits(x),
        }
    }
}

fn clamp(v: i128, bits: u32, signed: bool) -> i128 {
    let (min, max) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    v.clamp(min, max)
}

fn truncate(v: i128, bits: u32) -> u64 {
    let v = v as u64;
    if bits == 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

fn round_integral(x: f64, mode: u8) -> f64 {
    match mode {
        RZ => x.trunc(),
        RM => x.floor(),
        RP => x.ceil(),
        _ => x.round_ties_even(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cvt(mods: &[&str], d: &str, a: &str, x: u64) -> u64 {
        Conversion::new(mods, d, a).unwrap().apply(x)
    }
    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn integer_widths_extend_truncate_and_saturate() {
        assert_eq!(cvt(&[], "s64", "s32", 0xffff_ffff), u64::MAX);
        assert_eq!(cvt(&[], "u64", "u32", 0xffff_ffff), 0xffff_ffff);
        assert_eq!(cvt(&[], "u8", "u32", 0x1ff), 0xff);
        assert_eq!(cvt(&["sat"], "u8", "s32", 0x1ff), 0xff);
        assert_eq!(cvt(&["sat"], "u8", "s32", (-5i32) as u32 as u64), 0);
        assert_eq!(cvt(&["sat"], "s8", "s32", 200), 127);
    }

    #[test]
    fn float_to_integer_rounds_as_named_and_saturates() {
        assert_eq!(cvt(&["rzi"], "s32", "f32", f(-2.7)), (-2i32) as u32 as u64);
        assert_eq!(cvt(&["rmi"], "s32", "f32", f(-2.2)), (-3i32) as u32 as u64);
        assert_eq!(cvt(&["rpi"], "s32", "f32", f(2.2)), 3);
        assert_eq!(cvt(&["rni"], "s32", "f32", f(2.5)), 2, "ties to even");
        assert_eq!(cvt(&["rzi"], "s32", "f32", f(f32::NAN)), 0);
        assert_eq!(
            cvt(&["rzi"], "s32", "f32", f(f32::INFINITY)),
            i32::MAX as u64
        );
        assert_eq!(cvt(&["rzi"], "u32", "f32", f(-1.0)), 0);
        assert_eq!(
            cvt(&["rzi"], "s64", "f64", 1e300f64.to_bits()),
            i64::MAX as u64
        );
    }

    #[test]
    fn integer_to_float_rounds_as_named() {
        let big = (1u64 << 24) + 1; // not representable in f32
        assert_eq!(
            f32::from_bits(cvt(&["rn"], "f32", "u32", big) as u32),
            16_777_216.0
        );
        assert_eq!(
            f32::from_bits(cvt(&["rp"], "f32", "u32", big) as u32),
            16_777_218.0
        );
        assert_eq!(
            f32::from_bits(cvt(&["rn"], "f32", "s32", (-3i32) as u32 as u64) as u32),
            -3.0
        );
        assert_eq!(f64::from_bits(cvt(&["rn"], "f64", "s64", u64::MAX)), -1.0);
    }

    #[test]
    fn between_floats() {
        assert_eq!(
            f64::from_bits(cvt(&[], "f64", "f32", f(0.1))),
            f64::from(0.1f32)
        );
        let third = (1.0f64 / 3.0).to_bits();
        let down = f32::from_bits(cvt(&["rm"], "f32", "f64", third) as u32);
        let up = f32::from_bits(cvt(&["rp"], "f32", "f64", third) as u32);
        assert!(f64::from(down) < 1.0 / 3.0 && f64::from(up) > 1.0 / 3.0);
        assert_eq!(
            f32::from_bits(cvt(&["rni"], "f32", "f32", f(1.5)) as u32),
            2.0
        );
        assert!(f32::from_bits(cvt(&["rn"], "f32", "f64", f64::NAN.to_bits()) as u32).is_nan());
        assert_eq!(
            f32::from_bits(cvt(&["rn", "sat"], "f32", "f64", 2f64.to_bits()) as u32),
            1.0
        );
    }
}
