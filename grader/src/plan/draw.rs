//! What several families' plans share: the flags of a run with the values
//! its report must echo ([`Flags`]), sizes one off a multiple, odd blocks,
//! one wave of blocks, sizes past 2^31, how many launches a
//! timed run takes the median of, and n capped for the CPU emulator.

use serde_json::Value;

/// Every run whose verdict reads a time is the median of this many: one
/// slow launch does not decide the speed point, nor one slow pipeline
/// streams' overlap. (With one pipeline each, the solution's streams run
/// past the grid measured overlapped/serial 0.65 to 0.73 in 61 runs and
/// 0.88 once, over the limit of 0.8: an H200 alone, 2026-11-29,
/// `bench/runs/2026-11-29-h200-jobs-and-gate`.)
pub const TIMED_RUNS: u32 = 5;

/// Blocks of a timed run "about one wave": 1024 blocks of 256 threads are
/// the 132 multiprocessors of an H100 at 8 blocks each, nearly; smaller
/// GPUs take two waves.
pub const ONE_WAVE_BLOCKS: u32 = 1024;

/// A block size that is no power of two: odd, from 33 to 1023, so its last
/// warp is partial too.
pub fn odd_block(rng: &mut fastrand::Rng) -> u32 {
    rng.u32(16..512) * 2 + 1
}

/// n one off a multiple of `unit` (a block's threads, or a grid's): `unit`
/// times a number drawn from `times`, plus or minus one, so the last block,
/// or the grid's last pass, is partly idle.
pub fn near_multiple(rng: &mut fastrand::Rng, unit: u64, times: std::ops::Range<u64>) -> u64 {
    let n = unit * rng.u64(times.start.max(1)..times.end.max(2));
    if rng.bool() { n + 1 } else { n - 1 }
}

/// Elements above 2^31, so that an `int` index overflows before the end:
/// by 1 to 4 Mi (odd), enough elements past the limit to be seen missing.
pub fn past_int(rng: &mut fastrand::Rng) -> u64 {
    (1 << 31) + (rng.u64(1 << 20..1 << 22) | 1)
}

/// Bytes a run of `n` elements of three float arrays needs in host memory
/// and again in GPU memory.
pub fn three_arrays(n: u64) -> u64 {
    3 * 4 * n
}

/// n at most about a million on the emulator: small ones kept, larger ones
/// into [2^18, 2^19) or [2^19, 2^20) by their remainder, so parity and
/// order are kept and the grid (at most 40 × 1024 threads, 4 elements
/// each) is still smaller than n.
pub fn shrink_n(n: u64) -> u64 {
    match n {
        ..65_536 => n,
        65_536..16_777_216 => (1 << 18) + n % (1 << 18),
        _ => (1 << 19) + n % (1 << 19),
    }
}

/// A run's flags in order, each with the value its report must echo: a
/// number for sizes and counts, a string for `--a`, `--b` and `--pattern`.
/// `--runs` is passed and not echoed.
#[derive(Debug, Default)]
pub struct Flags(Vec<(&'static str, Value)>);

impl Flags {
    /// `--flag value`, a number.
    pub fn num(mut self, flag: &'static str, value: impl Into<u64>) -> Flags {
        self.0.push((flag, Value::from(value.into())));
        self
    }

    /// `--flag value`, a number, when there is one.
    pub fn num_if(self, flag: &'static str, value: Option<impl Into<u64>>) -> Flags {
        match value {
            Some(value) => self.num(flag, value),
            None => self,
        }
    }

    /// `--flag value`, text, when there is one.
    pub fn text_if(mut self, flag: &'static str, value: Option<impl ToString>) -> Flags {
        if let Some(value) = value {
            self.0.push((flag, Value::from(value.to_string())));
        }
        self
    }

    /// `--flag` alone, when `on`: a switch that says how the course's binary
    /// makes the run, not what it runs, so the report need not echo it.
    pub fn switch_if(mut self, flag: &'static str, on: bool) -> Flags {
        if on {
            self.0.push((flag, Value::Bool(true)));
        }
        self
    }

    /// The command line, without `--json` (the runner adds it).
    pub fn args(&self) -> Vec<String> {
        self.0
            .iter()
            .flat_map(|(flag, value)| {
                let value = match value {
                    Value::Bool(_) => None,
                    Value::String(text) => Some(text.clone()),
                    other => Some(other.to_string()),
                };
                std::iter::once(format!("--{flag}")).chain(value)
            })
            .collect()
    }

    /// What the report must echo: every flag but `--runs` and the switches, under the name
    /// the report gives it (`echo` renames a flag, as matmul-tiled's
    /// `--tile` is reported as `block`).
    pub fn expect(
        &self,
        echo: impl Fn(&'static str) -> &'static str,
    ) -> Vec<(&'static str, Value)> {
        self.0
            .iter()
            .filter(|(flag, value)| *flag != "runs" && !value.is_boolean())
            .map(|(flag, value)| (echo(flag), value.clone()))
            .collect()
    }
}
