//! Bit-field and multi-word integer instructions, as PTX defines them:
//! bit fields (`bfe`, `bfi`, `bfind`), funnel shifts (`shf`), byte permutes
//! (`prmt`), dot products (`dp4a`, `dp2a`), sums of absolute differences
//! (`sad`, `vabsdiff2/4`) and the carry chain (`add.cc`, `addc`, `sub.cc`,
//! `subc`, `mad.cc`, `madc`) that multi-word arithmetic is made of.

use crate::ir::{BinaryFn, CarryFn, QuaternaryFn, TernaryFn, UnaryFn};

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn sign_extend(value: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((value << shift) as i64) >> shift
}

/// `bfe`: `len` bits of `a` from bit `pos` (both taken mod 256); bits past
/// the field, and field bits past `a`'s top, are the sign bit (the field's
/// top bit, or `a`'s when the field runs past it) for signed types, 0 for
/// unsigned, as PTX defines it.
fn bfe<const BITS: u32, const SIGNED: bool>(a: u64, pos: u64, len: u64) -> u64 {
    let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
    let msb = BITS - 1;
    let bit = |i: u32| (a >> i) & 1;
    let sign = if SIGNED && len > 0 {
        bit((pos + len - 1).min(msb))
    } else {
        0
    };
    (0..BITS).fold(0, |d, i| {
        let value = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sign
        };
        d | value << i
    })
}

/// `bfi`: `b` with `len` bits at `pos` replaced by the low bits of `a`.
fn bfi<const BITS: u32>(a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
    if pos >= BITS || len == 0 {
        return b & mask(BITS);
    }
    let field = mask(len.min(BITS - pos)) << pos;
    ((b & !field) | ((a << pos) & field)) & mask(BITS)
}

/// `bfind`: the position of the most significant non-sign bit (of a set
/// bit for unsigned), 0xffffffff when there is none; with `.shiftamt` the
/// left shift that would bring it to the top.
fn bfind<const BITS: u32, const SIGNED: bool, const SHIFT: bool>(a: u64) -> u64 {
    let a = a & mask(BITS);
    let v = if SIGNED && (a >> (BITS - 1)) & 1 != 0 {
        !a & mask(BITS)
    } else {
        a
    };
    if v == 0 {
        return 0xffff_ffff;
    }
    let top = 63 - v.leading_zeros();
    u64::from(if SHIFT { BITS - 1 - top } else { top })
}

/// `shf.l` / `shf.r`: the 64-bit `b:a` shifted, 32 bits kept; `.wrap`
/// takes the amount mod 32, `.clamp` caps it at 32.
fn shf<const LEFT: bool, const WRAP: bool>(a: u64, b: u64, c: u64) -> u64 {
    let n = if WRAP {
        c & 31
    } else {
        (c & 0xffff_ffff).min(32)
    };
    let wide = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    if LEFT {
        ((wide << n) >> 32) & 0xffff_ffff
    } else {
        (wide >> n) & 0xffff_ffff
    }
}

/// `prmt.b32` in its default mode: each of d's bytes picked from the eight
/// bytes of `b:a` by a nibble of `c`, whose top bit replicates the picked
/// byte's sign instead.
fn prmt(a: u64, b: u64, c: u64) -> u64 {
    let bytes = ((b & 0xffff_ffff) << 32 | (a & 0xffff_ffff)).to_le_bytes();
    let mut out = 0u64;
    for i in 0..4 {
        let selector = (c >> (4 * i)) & 0xf;
        let byte = bytes[(selector & 7) as usize];
        let byte = if selector & 8 != 0 {
            if byte & 0x80 != 0 { 0xff } else { 0 }
        } else {
            byte
        };
        out |= u64::from(byte) << (8 * i);
    }
    out
}

/// `prmt` with a mode: forward and backward 4-byte extracts, replicate 8
/// and 16, edge clamps; the selector is `c`'s low two bits.
fn prmt_mode<const MODE: u8>(a: u64, b: u64, c: u64) -> u64 {
    let bytes = ((b & 0xffff_ffff) << 32 | (a & 0xffff_ffff)).to_le_bytes();
    let s = (c & 3) as usize;
    let pick: [usize; 4] = match MODE {
        // .f4e: forward 4 extract.
        0 => [s, s + 1, s + 2, s + 3],
        // .b4e: backward 4 extract.
        1 => [s, (s + 7) % 8, (s + 6) % 8, (s + 5) % 8],
        // .rc8: replicate byte s.
        2 => [s; 4],
        // .ecl: edge clamp left.
        3 => [s, s.max(1), s.max(2), 3],
        // .ecr: edge clamp right.
        4 => [0, s.min(1), s.min(2), s],
        // .rc16: replicate the halfword s & 1.
        _ => {
            let h = (s & 1) * 2;
            [h, h + 1, h, h + 1]
        }
    };
    pick.iter()
        .enumerate()
        .map(|(i, &p)| u64::from(bytes[p % 8]) << (8 * i))
        .sum()
}

/// `dp4a`: the sum of four byte products, plus `c`.
fn dp4a<const A_SIGNED: bool, const B_SIGNED: bool>(a: u64, b: u64, c: u64) -> u64 {
    let lane = |x: u64, i: u32, signed: bool| {
        let byte = (x >> (8 * i)) & 0xff;
        if signed {
            sign_extend(byte, 8)
        } else {
            byte as i64
        }
    };
    let mut sum = c as u32 as i32 as i64;
    for i in 0..4 {
        sum = sum.wrapping_add(lane(a, i, A_SIGNED) * lane(b, i, B_SIGNED));
    }
    sum as u64 & 0xffff_ffff
}

/// `dp2a.lo` / `dp2a.hi`: two 16-bit lanes of `a` times two bytes of `b`
/// (its low or high half), plus `c`.
fn dp2a<const A_SIGNED: bool, const B_SIGNED: bool, const HI: bool>(a: u64, b: u64, c: u64) -> u64 {
    let half = |i: u32| {
        let h = (a >> (16 * i)) & 0xffff;
        if A_SIGNED {
            sign_extend(h, 16)
        } else {
            h as i64
        }
    };
    let byte = |i: u32| {
        let x = (b >> (8 * (i + if HI { 2 } else { 0 }))) & 0xff;
        if B_SIGNED {
            sign_extend(x, 8)
        } else {
            x as i64
        }
    };
    let sum = (c as u32 as i32 as i64)
        .wrapping_add(half(0) * byte(0))
        .wrapping_add(half(1) * byte(1));
    sum as u64 & 0xffff_ffff
}

/// `sad`: |a - b| + c.
fn sad<const BITS: u32, const SIGNED: bool>(a: u64, b: u64, c: u64) -> u64 {
    let (a, b) = if SIGNED {
        (sign_extend(a, BITS) as i128, sign_extend(b, BITS) as i128)
    } else {
        (i128::from(a & mask(BITS)), i128::from(b & mask(BITS)))
    };
    ((a - b).unsigned_abs() as u64).wrapping_add(c) & mask(BITS)
}

/// `vabsdiff4` / `vabsdiff2`: |a - b| in each of `LANES` lanes; with
/// `.add`, their sum plus `c`.
fn vabsdiff<const LANES: u32, const SIGNED: bool, const ADD: bool>(a: u64, b: u64, c: u64) -> u64 {
    let bits = 32 / LANES;
    let lane = |x: u64, i: u32| {
        let v = (x >> (bits * i)) & mask(bits);
        if SIGNED {
            sign_extend(v, bits)
        } else {
            v as i64
        }
    };
    let mut packed = 0u64;
    let mut sum = c as u32 as u64;
    for i in 0..LANES {
        let d = (lane(a, i) - lane(b, i)).unsigned_abs();
        packed |= (d & mask(bits)) << (bits * i);
        sum = sum.wrapping_add(d);
    }
    if ADD { sum & 0xffff_ffff } else { packed }
}

/// `add.cc`, `addc`, `addc.cc`: the sum of `BITS` bits and the carry out.
fn add_carry<const BITS: u32, const CARRY_IN: bool>(
    a: u64,
    b: u64,
    _: u64,
    cin: u64,
) -> (u64, u64) {
    let wide =
        u128::from(a & mask(BITS)) + u128::from(b & mask(BITS)) + u128::from(CARRY_IN && cin != 0);
    (wide as u64 & mask(BITS), u64::from(wide >> BITS != 0))
}

/// `sub.cc`, `subc`, `subc.cc`: a - (b + borrow in), and the borrow out.
fn sub_carry<const BITS: u32, const CARRY_IN: bool>(
    a: u64,
    b: u64,
    _: u64,
    cin: u64,
) -> (u64, u64) {
    let subtrahend = u128::from(b & mask(BITS)) + u128::from(CARRY_IN && cin != 0);
    let a = u128::from(a & mask(BITS));
    (
        (a.wrapping_sub(subtrahend)) as u64 & mask(BITS),
        u64::from(a < subtrahend),
    )
}

/// `mad.lo.cc`, `mad.hi.cc`, `madc.lo`, `madc.hi` (`.cc` or not): the low or
/// high half of a*b, plus c and the carry in, and the carry out.
fn mad_carry<const BITS: u32, const HI: bool, const SIGNED: bool, const CARRY_IN: bool>(
    a: u64,
    b: u64,
    c: u64,
    cin: u64,
) -> (u64, u64) {
    let product = if SIGNED {
        (i128::from(sign_extend(a, BITS)) * i128::from(sign_extend(b, BITS))) as u128
    } else {
        u128::from(a & mask(BITS)) * u128::from(b & mask(BITS))
    };
    let half = if HI { product >> BITS } else { product } as u64 & mask(BITS);
    let wide = u128::from(half) + u128::from(c & mask(BITS)) + u128::from(CARRY_IN && cin != 0);
    (wide as u64 & mask(BITS), u64::from(wide >> BITS != 0))
}

/// The bit-field family (`bfe`, `bfind`, `shf`, `prmt`, `dp4a`, `dp2a`,
/// `sad`, `vabsdiff`) as ternary and unary functions.
pub fn ternary(base: &str, mods: &[&str], types: &[&str]) -> Option<TernaryFn> {
    let ty = *types.last()?;
    let has = |m: &str| mods.contains(&m);
    Some(match (base, ty) {
        ("bfe", "u32") => bfe::<32, false>,
        ("bfe", "s32") => bfe::<32, true>,
        ("bfe", "u64") => bfe::<64, false>,
        ("bfe", "s64") => bfe::<64, true>,
        ("shf", "b32") => match (has("l"), has("wrap")) {
            (true, true) => shf::<true, true>,
            (true, false) => shf::<true, false>,
            (false, true) => shf::<false, true>,
            (false, false) => shf::<false, false>,
        },
        ("prmt", "b32") if mods.is_empty() => prmt,
        ("prmt", "b32") => match *mods.first()? {
            "f4e" => prmt_mode::<0>,
            "b4e" => prmt_mode::<1>,
            "rc8" => prmt_mode::<2>,
            "ecl" => prmt_mode::<3>,
            "ecr" => prmt_mode::<4>,
            "rc16" => prmt_mode::<5>,
            _ => return None,
        },
        ("dp4a", _) => match (types.first()?.starts_with('s'), ty.starts_with('s')) {
            (false, false) => dp4a::<false, false>,
            (false, true) => dp4a::<false, true>,
            (true, false) => dp4a::<true, false>,
            (true, true) => dp4a::<true, true>,
        },
        ("dp2a", _) => {
            let a_signed = types.first()?.starts_with('s');
            match (a_signed, ty.starts_with('s'), has("hi")) {
                (false, false, false) => dp2a::<false, false, false>,
                (false, false, true) => dp2a::<false, false, true>,
                (false, true, false) => dp2a::<false, true, false>,
                (false, true, true) => dp2a::<false, true, true>,
                (true, false, false) => dp2a::<true, false, false>,
                (true, false, true) => dp2a::<true, false, true>,
                (true, true, false) => dp2a::<true, true, false>,
                (true, true, true) => dp2a::<true, true, true>,
            }
        }
        ("sad", "u16") => sad::<16, false>,
        ("sad", "s16") => sad::<16, true>,
        ("sad", "u32") => sad::<32, false>,
        ("sad", "s32") => sad::<32, true>,
        ("sad", "u64") => sad::<64, false>,
        ("sad", "s64") => sad::<64, true>,
        ("vabsdiff4" | "vabsdiff2", _) if !has("sat") => {
            let signed = types.iter().skip(1).any(|t| t.starts_with('s'));
            match (base == "vabsdiff4", signed, has("add")) {
                (true, false, false) => vabsdiff::<4, false, false>,
                (true, false, true) => vabsdiff::<4, false, true>,
                (true, true, false) => vabsdiff::<4, true, false>,
                (true, true, true) => vabsdiff::<4, true, true>,
                (false, false, false) => vabsdiff::<2, false, false>,
                (false, false, true) => vabsdiff::<2, false, true>,
                (false, true, false) => vabsdiff::<2, true, false>,
                (false, true, true) => vabsdiff::<2, true, true>,
            }
        }
        _ => return None,
    })
}

pub fn unary(base: &str, mods: &[&str], ty: &str) -> Option<UnaryFn> {
    let shift = mods.contains(&"shiftamt");
    Some(match (base, ty, shift) {
        ("bfind", "u32", false) => bfind::<32, false, false>,
        ("bfind", "u32", true) => bfind::<32, false, true>,
        ("bfind", "s32", false) => bfind::<32, true, false>,
        ("bfind", "s32", true) => bfind::<32, true, true>,
        ("bfind", "u64", false) => bfind::<64, false, false>,
        ("bfind", "u64", true) => bfind::<64, false, true>,
        ("bfind", "s64", false) => bfind::<64, true, false>,
        ("bfind", "s64", true) => bfind::<64, true, true>,
        _ => return None,
    })
}

pub fn quaternary(base: &str, ty: &str) -> Option<QuaternaryFn> {
    Some(match (base, ty) {
        ("bfi", "b32") => bfi::<32>,
        ("bfi", "b64") => bfi::<64>,
        _ => return None,
    })
}

/// The carry family: `add.cc`, `addc[.cc]`, `sub.cc`, `subc[.cc]`,
/// `mad.lo.cc`, `mad.hi.cc`, `madc.lo[.cc]`, `madc.hi[.cc]`.
pub fn carry(base: &str, mods: &[&str], ty: &str) -> Option<CarryFn> {
    let bits = match ty {
        "u32" | "s32" | "b32" => 32,
        "u64" | "s64" | "b64" => 64,
        _ => return None,
    };
    let signed = ty.starts_with('s');
    let hi = mods.contains(&"hi");
    macro_rules! mad {
        ($bits:literal, $cin:literal) => {
            match (hi, signed) {
                (false, _) => mad_carry::<$bits, false, false, $cin>,
                (true, false) => mad_carry::<$bits, true, false, $cin>,
                (true, true) => mad_carry::<$bits, true, true, $cin>,
            }
        };
    }
    Some(match (base, bits) {
        ("add", 32) => add_carry::<32, false>,
        ("add", _) => add_carry::<64, false>,
        ("addc", 32) => add_carry::<32, true>,
        ("addc", _) => add_carry::<64, true>,
        ("sub", 32) => sub_carry::<32, false>,
        ("sub", _) => sub_carry::<64, false>,
        ("subc", 32) => sub_carry::<32, true>,
        ("subc", _) => sub_carry::<64, true>,
        ("mad", 32) => mad!(32, false),
        ("mad", _) => mad!(64, false),
        ("madc", 32) => mad!(32, true),
        ("madc", _) => mad!(64, true),
        _ => return None,
    })
}

/// `copysign.f32 d, a, b`: b's magnitude with a's sign.
pub fn copysign(ty: &str) -> Option<BinaryFn> {
    fn f32_(a: u64, b: u64) -> u64 {
        (a & 0x8000_0000) | (b & 0x7fff_ffff)
    }
    fn f64_(a: u64, b: u64) -> u64 {
        (a & (1 << 63)) | (b & !(1 << 63))
    }
    match ty {
        "f32" => Some(f32_),
        "f64" => Some(f64_),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_fields_extract_insert_and_find() {
        assert_eq!(bfe::<32, false>(0xabcd_1234, 8, 8), 0x12);
        assert_eq!(bfe::<32, true>(0x0000_8000, 8, 8), 0xffff_ff80);
        assert_eq!(
            bfe::<32, true>(0x8000_0000, 28, 8),
            0xffff_fff8,
            "sign from a's top bit"
        );
        // A field running past bit 31: its missing bits are the sign too.
        assert_eq!(bfe::<32, true>(0xae00_0000, 25, 9), 0xffff_ffd7);
        assert_eq!(bfe::<32, false>(0xffff_ffff, 40, 8), 0);
        assert_eq!(bfe::<32, true>(5, 0, 0), 0);
        assert_eq!(bfi::<32>(0xff, 0, 4, 8), 0xff0);
        assert_eq!(bfi::<32>(0xff, 0xffff_ffff, 28, 8), 0xffff_ffff);
        assert_eq!(bfi::<32>(0, 0xffff_ffff, 28, 8), 0x0fff_ffff);
        assert_eq!(bfind::<32, false, false>(0x10), 4);
        assert_eq!(bfind::<32, false, true>(0x10), 27);
        assert_eq!(bfind::<32, false, false>(0), 0xffff_ffff);
        assert_eq!(
            bfind::<32, true, false>(0xffff_fff0),
            3,
            "the top bit that differs from the sign"
        );
        assert_eq!(bfind::<64, false, false>(1 << 40), 40);
    }

    #[test]
    fn funnel_shifts_and_permutes() {
        assert_eq!(shf::<true, true>(0x8000_0000, 0x1, 1), 0x3);
        assert_eq!(shf::<false, true>(0x1, 0x1, 1), 0x8000_0000);
        assert_eq!(
            shf::<true, true>(0, 5, 33),
            10,
            "wrap takes the amount mod 32"
        );
        assert_eq!(
            shf::<true, false>(0xdead, 5, 40),
            0xdead,
            "clamp shifts by 32 at most"
        );
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x3210), 0x4433_2211);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x7654), 0x8877_6655);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x0123), 0x1122_3344);
        assert_eq!(
            prmt(0x0000_0080, 0, 0x8888),
            0xffff_ffff,
            "sign replication"
        );
        assert_eq!(prmt_mode::<2>(0x4433_2211, 0, 1), 0x2222_2222);
    }

    #[test]
    fn dot_products_and_absolute_differences() {
        // (1*1 + 2*2 + 3*3 + 4*4) + 10
        assert_eq!(dp4a::<false, false>(0x0403_0201, 0x0403_0201, 10), 40);
        assert_eq!(dp4a::<true, true>(0xff, 0x02, 0), (-2i32) as u32 as u64);
        assert_eq!(
            dp2a::<false, false, false>(0x0002_0003, 0x0000_0504, 1),
            3 * 4 + 2 * 5 + 1
        );
        assert_eq!(
            dp2a::<false, false, true>(0x0002_0003, 0x0504_0000, 0),
            3 * 4 + 2 * 5
        );
        assert_eq!(sad::<32, true>((-3i32) as u32 as u64, 4, 1), 8);
        assert_eq!(sad::<32, false>(3, 4, 1), 2);
        assert_eq!(
            vabsdiff::<4, false, false>(0x0110_ff00, 0x0210_00ff, 0),
            0x0100_ffff
        );
        assert_eq!(
            vabsdiff::<4, false, true>(0x0110_ff00, 0x0210_00ff, 1),
            1 + 255 + 255 + 1
        );
    }

    #[test]
    fn carry_chains_add_and_subtract_across_words() {
        // 0xffffffff_ffffffff + 1 in two 32-bit words.
        let (lo, c) = add_carry::<32, false>(0xffff_ffff, 1, 0, 0);
        let (hi, c2) = add_carry::<32, true>(0xffff_ffff, 0, 0, c);
        assert_eq!((lo, c, hi, c2), (0, 1, 0, 1));
        // 0x1_00000000 - 1.
        let (lo, b) = sub_carry::<32, false>(0, 1, 0, 0);
        let (hi, b2) = sub_carry::<32, true>(1, 0, 0, b);
        assert_eq!((lo, b, hi, b2), (0xffff_ffff, 1, 0, 0));
        let (d, c) = mad_carry::<32, true, false, true>(0xffff_ffff, 2, 0xffff_ffff, 1);
        assert_eq!((d, c), (1, 1));
    }
}
