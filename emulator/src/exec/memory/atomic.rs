//! The read-modify-write of each atomic operation (`atom`, `red`), on 16-,
//! 32- and 64-bit cells of device memory, returning the old value.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::exec::value::float::RN;
use crate::exec::value::half;
use crate::ir::AtomicOp;

/// `$name`: one atomic read-modify-write on `$atomic` cells of `$uint`
/// (`$int` signed); `$float_add` is the float add of that width, the other
/// width's float add leaves the cell as it is (decoding never pairs them).
macro_rules! read_modify_write {
    ($name:ident, $atomic:ty, $uint:ty, $int:ty, $float_add:expr, $float_op:expr) => {
        pub(super) fn $name(cell: &$atomic, op: AtomicOp, b: $uint, c: $uint) -> $uint {
            let update = |old: $uint| -> $uint {
                match op {
                    AtomicOp::Add => old.wrapping_add(b),
                    AtomicOp::AddF32 | AtomicOp::AddF64 if op == $float_op => $float_add(old, b),
                    AtomicOp::AddF16 | AtomicOp::AddF32 | AtomicOp::AddF64 => old,
                    AtomicOp::MinU => old.min(b),
                    AtomicOp::MaxU => old.max(b),
                    AtomicOp::MinS => (old as $int).min(b as $int) as $uint,
                    AtomicOp::MaxS => (old as $int).max(b as $int) as $uint,
                    AtomicOp::Inc => {
                        if old >= b {
                            0
                        } else {
                            old + 1
                        }
                    }
                    AtomicOp::Dec => {
                        if old == 0 || old > b {
                            b
                        } else {
                            old - 1
                        }
                    }
                    AtomicOp::And => old & b,
                    AtomicOp::Or => old | b,
                    AtomicOp::Xor => old ^ b,
                    AtomicOp::Exch => b,
                    AtomicOp::Cas => {
                        if old == b {
                            c
                        } else {
                            old
                        }
                    }
                }
            };
            match cell.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| Some(update(old))) {
                Ok(old) | Err(old) => old,
            }
        }
    };
}

read_modify_write!(
    rmw32,
    AtomicU32,
    u32,
    i32,
    |old: u32, b: u32| (f32::from_bits(old) + f32::from_bits(b)).to_bits(),
    AtomicOp::AddF32
);
read_modify_write!(
    rmw64,
    AtomicU64,
    u64,
    i64,
    |old: u64, b: u64| (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
    AtomicOp::AddF64
);

/// A 16-bit atomic (cas, or half add) on the half at `shift` of a 32-bit
/// cell; returns the old half.
pub(super) fn rmw16(cell: &AtomicU32, shift: u32, op: AtomicOp, b: u16, c: u16) -> u16 {
    let update = |word: u32| -> u32 {
        let old = (word >> shift) as u16;
        let new = match op {
            AtomicOp::AddF16 => {
                let sum = half::to_f64(u64::from(old)) + half::to_f64(u64::from(b));
                half::round(sum, 0.0, RN) as u16
            }
            AtomicOp::Cas if old == b => c,
            _ => old,
        };
        (word & !(0xffff << shift)) | u32::from(new) << shift
    };
    match cell.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| Some(update(w))) {
        Ok(old) | Err(old) => (old >> shift) as u16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_operations_return_the_old_value() {
        let cell = AtomicU32::new(5);
        assert_eq!(rmw32(&cell, AtomicOp::Add, 3, 0), 5);
        assert_eq!(cell.load(Ordering::Relaxed), 8);
        assert_eq!(rmw32(&cell, AtomicOp::Cas, 8, 1), 8);
        assert_eq!(cell.load(Ordering::Relaxed), 1);
        assert_eq!(rmw32(&cell, AtomicOp::Inc, 1, 0), 1);
        assert_eq!(cell.load(Ordering::Relaxed), 0, "inc wraps at b");
        let f = AtomicU32::new(1.5f32.to_bits());
        rmw32(&f, AtomicOp::AddF32, 2.25f32.to_bits(), 0);
        assert_eq!(f32::from_bits(f.load(Ordering::Relaxed)), 3.75);
        let s = AtomicU32::new((-3i32) as u32);
        rmw32(&s, AtomicOp::MaxS, 2, 0);
        assert_eq!(s.load(Ordering::Relaxed), 2);
    }
}
