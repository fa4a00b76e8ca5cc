//! Making the runs: whether the kernels run on a GPU or the CPU emulator
//! ([`device`]), whether a run above 2^31 elements fits the node
//! ([`memory`]), the driver-call trace of a student's binary ([`trace`],
//! [`traced`]), and compute-sanitizer over a kernel ([`sanitizer`]).

pub mod device;
pub mod memory;
pub mod sanitizer;
pub mod trace;
pub mod traced;
