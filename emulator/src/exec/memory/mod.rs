//! The memory model: what a launch, a block and a thread see (`state`),
//! each access checked for bounds, alignment and initialisation and
//! tracked for races (`access`, the conflict shadows in `race`), atomics
//! (`atomic`), uninitialised shared memory followed to global memory
//! (`taint`), the fast global load (`global_load`), and what the grader's
//! runs carry on past (`carry_on`). Faults come back typed
//! (`exec::error::AccessError`).

pub mod access;
pub mod atomic;
pub mod carry_on;
pub mod global_load;
pub mod race;
pub mod state;
pub mod taint;
