//! What the broker is asked to do for one session: the backend, the caps,
//! the canary. A value; the command line (`cli`) makes it.

use std::path::PathBuf;

use crate::kernel_params::Canary;

/// Page-locked host memory one client may hold, unless told otherwise:
/// streams-overlap's largest run holds 512 MiB.
pub const DEFAULT_HOST_MEMORY_CAP: u64 = 4 << 30;

pub struct Config {
    /// The `libcuda.so.1` the broker calls: the real driver or the CPU
    /// emulator's library.
    pub driver: PathBuf,
    /// The most device memory the client may hold; None for the device's.
    pub memory_cap: Option<u64>,
    /// The most page-locked host memory the client may hold.
    pub host_memory_cap: u64,
    /// The grader's canary, loaded in place of the exercise's module.
    pub canary: Option<Canary>,
    /// Frees reach the driver only when the session ends (a batch of runs:
    /// no run is handed memory an earlier run wrote).
    pub keep_frees: bool,
}

impl Config {
    /// One line for the record's head.
    pub fn describe(&self) -> String {
        let cap = self
            .memory_cap
            .map_or("the device's".to_owned(), |cap| format!("{cap} bytes"));
        let canary = self
            .canary
            .as_ref()
            .map_or("none".to_owned(), |c| c.names.join(","));
        format!(
            "device memory {cap}, page-locked memory {} bytes, canary for {canary}{}",
            self.host_memory_cap,
            if self.keep_frees { ", frees kept" } else { "" }
        )
    }
}
