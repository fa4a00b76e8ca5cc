//! The GPU broker (issue 50): the one process that reaches the GPU for a
//! student's binary. The binary runs in a sandbox without `/dev/nvidia*`
//! and loads the course's client `libcuda.so.1` (`broker-client/`), which
//! forwards each driver call over a socket the grader set up
//! (`kernels::broker_wire`, whose head holds the threat model); the broker
//! makes the call on its backend (the real driver, or the CPU emulator's
//! library: the same C ABI), owning the only context, and records every
//! call with the GPU times it measured itself (`kernels::trace_record`'s
//! grammar). Everything the client sends is checked against the broker's
//! own tables: handles are tokens, device ranges must be the program's,
//! GPU memory is capped, and the exercise's module is replaced by the
//! grader's canary, whose text never reaches the program.
//!
//! Rooms: [`cli`] and [`config`] (what to do), [`driver`] (the backend),
//! [`session`] (the loop and the calls, by family), its tables
//! ([`tables`], [`device_memory`], [`shared_memory`], [`staging`],
//! [`kernel_params`]),
//! [`timing`] and [`record`] (the evidence), [`socket`] and [`spawn`] (the
//! ends of the socket).

pub mod bench;
pub mod cli;
pub mod config;
pub mod device_memory;
pub mod driver;
pub mod entry_point;
pub mod kernel_params;
pub mod record;
pub mod session;
pub mod shared_memory;
pub mod socket;
pub mod spawn;
pub mod staging;
pub mod tables;
pub mod timing;
