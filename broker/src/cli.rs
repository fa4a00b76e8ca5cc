//! The command line: parsed, then checked, then turned into a [`Config`]
//! and what to serve. No I/O but reading the canary's file.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use crate::config::{Config, DEFAULT_HOST_MEMORY_CAP};

/// The variables a parent that passes descriptors and files by name (the
/// grader's sandbox does) sets in place of `--fd`, `--record-fd` and
/// `--canary`.
pub const SERVE_FD_VARIABLE: &str = "CUDA_COURSE_BROKER_SERVE_FD";
pub const RECORD_FD_VARIABLE: &str = "CUDA_COURSE_BROKER_RECORD_FD";
pub const CANARY_VARIABLE: &str = "CUDA_COURSE_BROKER_CANARY";
use crate::kernel_params::Canary;

/// The GPU broker: serves one program's driver calls on the GPU (or the
/// CPU emulator) from outside its sandbox, and records them.
#[derive(Parser, Debug)]
#[command(name = "cuda-course-broker", version)]
pub struct Cli {
    /// The backend driver library: the real driver or the CPU emulator's.
    #[arg(long, value_name = "PATH", default_value = "libcuda.so.1")]
    pub driver: PathBuf,
    /// The most GPU memory the program may allocate (bytes; K, M, G, KiB,
    /// MiB, GiB allowed); past it, CUDA_ERROR_OUT_OF_MEMORY.
    #[arg(long, value_name = "BYTES", value_parser = bytes)]
    pub memory_cap: Option<u64>,
    /// The most page-locked host memory the program may hold.
    #[arg(long, value_name = "BYTES", value_parser = bytes, default_value_t = DEFAULT_HOST_MEMORY_CAP)]
    pub host_memory_cap: u64,
    /// PTX loaded in place of any module that defines one of --entries.
    #[arg(long, value_name = "PTX_FILE", requires = "entries", env = CANARY_VARIABLE)]
    pub canary: Option<PathBuf>,
    /// The exercise's kernel entries the canary stands in for.
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        requires = "canary"
    )]
    pub entries: Vec<String>,
    /// Keep device frees from the driver until the session ends (a batch
    /// of runs in one process).
    #[arg(long)]
    pub keep_frees: bool,
    /// Where the record goes, written when the session ends.
    #[arg(long, value_name = "PATH", conflicts_with = "record_fd")]
    pub record: Option<PathBuf>,
    /// Or write the record, when the session ends, to this inherited
    /// descriptor (a pipe its reader bounds).
    #[arg(long, value_name = "N", env = RECORD_FD_VARIABLE)]
    pub record_fd: Option<i32>,
    /// Serve the client on this inherited socket descriptor.
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "program",
        required_unless_present = "program",
        env = SERVE_FD_VARIABLE
    )]
    pub fd: Option<i32>,
    /// Or start this program with a socket of its own, serve it, and exit
    /// with its exit code (125 where the broker itself failed).
    #[arg(last = true, value_name = "PROGRAM")]
    pub program: Vec<OsString>,
}

/// A size in bytes: digits, then an optional K, M, G (powers of 1000) or
/// KiB, MiB, GiB (of 1024).
pub fn bytes(text: &str) -> Result<u64, String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let scale: u64 = match &text[digits.len()..] {
        "" => 1,
        "K" => 1000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => return Err(format!("unit {other:?} is not K, M, G, KiB, MiB or GiB")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("{text:?} is not a number of bytes"))
}

impl Cli {
    /// The session's configuration (reads and checks the canary).
    pub fn config(&self) -> Result<Config, String> {
        let canary = match &self.canary {
            Some(path) => Some(Canary::load(path, self.entries.clone())?),
            None => None,
        };
        Ok(Config {
            driver: self.driver.clone(),
            memory_cap: self.memory_cap,
            host_memory_cap: self.host_memory_cap,
            canary,
            keep_frees: self.keep_frees,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_the_usual_units_and_refuse_the_rest() {
        assert_eq!(bytes("4096"), Ok(4096));
        assert_eq!(bytes("2GiB"), Ok(2 << 30));
        assert_eq!(bytes("3M"), Ok(3_000_000));
        assert!(bytes("2GB").unwrap_err().contains("unit \"GB\""));
        assert!(bytes("-1").is_err() && bytes("").is_err());
        assert!(bytes("99999999999999GiB").is_err());
    }

    #[test]
    fn a_socket_or_a_program_and_never_both() {
        assert!(Cli::try_parse_from(["b", "--fd", "3"]).is_ok());
        assert!(Cli::try_parse_from(["b", "--", "true"]).is_ok());
        assert!(Cli::try_parse_from(["b"]).is_err());
        assert!(Cli::try_parse_from(["b", "--fd", "3", "--", "true"]).is_err());
        assert!(Cli::try_parse_from(["b", "--fd", "3", "--canary", "c.ptx"]).is_err());
        assert!(
            Cli::try_parse_from(["b", "--fd", "3", "--record", "r", "--record-fd", "4"]).is_err()
        );
    }
}
