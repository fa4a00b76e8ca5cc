//! Running decoded kernels: the instruction families (one module each), the
//! thread interpreter, the block scheduler, and launches.

pub mod access;
pub mod atomic;
pub mod bits;
pub mod block;
pub mod carry_on;
pub mod compare;
pub mod convert;
pub mod fault;
pub mod float;
pub mod global_load;
pub mod half;
pub mod int;
pub mod launch;
pub mod limits;
pub mod printf;
pub mod race;
pub mod taint;
pub mod thread;
pub mod warp;
