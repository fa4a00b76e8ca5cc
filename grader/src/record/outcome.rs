//! Every way a run can end and why, as results.json keeps it: typed, made
//! by the rooms that run and judge (`run`, `judge`), worded only by
//! [`render`](super::render), so rewording feedback needs no regrading.

use serde::{Deserialize, Serialize};

/// Which memory a run above 2^31 elements needs room in.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Memory {
    Host,
    Gpu,
}

/// Why a run above 2^31 elements is not made on this node now: never a
/// student's loss.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Shortfall {
    /// How much is free could not be read.
    Unread { of: Memory, why: String },
    /// It needs `need` bytes, and `have` are free.
    Short { of: Memory, need: u64, have: u64 },
}
