//! Running decoded kernels, in layers from the bottom up: the values
//! instructions compute (`value`), the faults, typed and with no CUDA code
//! (`error`), the memory model every access goes through (`memory`), the
//! thread interpreter and the block scheduler over it (`schedule`), and a
//! launch over the host's cores (`launch`). Only `driver` turns a fault
//! into a CUDA error code and words.

pub mod error;
pub mod launch;
pub mod memory;
pub mod schedule;
pub mod value;
