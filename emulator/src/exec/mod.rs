//! Running decoded kernels: the instruction families (one module each), the
//! thread interpreter, the block scheduler, and launches.

pub mod access;
pub mod block;
pub mod compare;
pub mod convert;
pub mod float;
pub mod int;
pub mod launch;
pub mod race;
pub mod thread;
pub mod warp;
