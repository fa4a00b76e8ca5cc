//! A planned run as a value: its stable tag (from the catalogue), its typed
//! parameters (each family's own), its points, and what it needs; its
//! command line, the parameters its report must echo and its description
//! are derived from them. A run is made in a [`Role`]: the student's kernel
//! in the course's host code, or the student's own binary.

pub use kernels::catalogue::RunTag as Tag;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::draw::Flags;
use crate::plan::{dot, matmul, memspace, streams, vecadd};

/// One planned run of an exercise binary.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Run {
    pub tag: Tag,
    pub params: Params,
    /// What it earns when it passes, the kernel's share and the host's.
    pub points: u32,
    /// Bytes the run reserves in host memory and again in GPU memory, when
    /// that is more than a GPU node can be assumed to have (above 2^31
    /// elements); 0 otherwise. The grader skips the run, saying why, where
    /// either is short. (With its inputs made on the GPU such a run holds at
    /// most a third of it on the host, c; the reservation stays whole:
    /// more than the run holds, never less.)
    pub memory: u64,
    /// The run whose kernel time the speed point compares with the course's
    /// own kernel's, in the course's host code, on the same GPU.
    pub timed: bool,
}

/// A run's arguments, by the exercise's family.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "family", rename_all = "kebab-case")]
pub enum Params {
    Vecadd(vecadd::Params),
    Dot(dot::Params),
    Matmul(matmul::Params),
    Memspace(memspace::Params),
    Streams(streams::Params),
}

/// What a run of a binary is for.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The student's PTX loaded by the course's own binary in place of its
    /// kernel (`kernels::KERNEL_PTX_ENV`): the kernel's points, from host
    /// code the student did not write.
    KernelInCourseHost,
    /// The student's own binary, through the grader's broker, which loads
    /// the canary kernel in place of theirs: the host's points, when its
    /// report carries the canary's result and the broker's record shows
    /// the work.
    StudentHost,
}

impl Params {
    fn flags(&self) -> Flags {
        match self {
            Params::Vecadd(p) => p.flags(),
            Params::Dot(p) => p.flags(),
            Params::Matmul(p) => p.flags(),
            Params::Memspace(p) => p.flags(),
            Params::Streams(p) => p.flags(),
        }
    }

    /// The number of elements, for the families that have one.
    pub fn n(&self) -> Option<u64> {
        match self {
            Params::Vecadd(p) => Some(p.n),
            Params::Dot(p) => Some(p.n),
            Params::Streams(p) => Some(p.n),
            Params::Matmul(_) | Params::Memspace(_) => None,
        }
    }

    /// The run as compute-sanitizer's racecheck makes it, where that is
    /// not the run itself: memspace-timing's grid of blocks that each do
    /// the same work, cut to a few ([`memspace::Params::racechecked`]).
    /// With the run's parameters, the number of blocks.
    pub fn racechecked(&self) -> Option<(Params, u32)> {
        match self {
            Params::Memspace(p) => p
                .racechecked()
                .map(|(cut, blocks)| (Params::Memspace(cut), blocks)),
            Params::Vecadd(_) | Params::Dot(_) | Params::Matmul(_) | Params::Streams(_) => None,
        }
    }

    /// The run as every compute-sanitizer tool makes it, where that is not
    /// the run itself: streams-overlap's uneven chunks at a million
    /// elements, not tens of millions ([`streams::Params::sanitized`]).
    /// With the run's parameters, the number of elements.
    pub fn sanitized(&self) -> Option<(Params, u64)> {
        match self {
            Params::Streams(p) => p
                .sanitized()
                .map(|(cut, elements)| (Params::Streams(cut), elements)),
            Params::Vecadd(_) | Params::Dot(_) | Params::Matmul(_) | Params::Memspace(_) => None,
        }
    }

    /// At sizes the CPU emulator runs in seconds, one timed launch.
    pub fn cap(&mut self) {
        match self {
            Params::Vecadd(p) => p.cap(),
            Params::Dot(p) => p.cap(),
            Params::Matmul(p) => p.cap(),
            Params::Memspace(p) => p.cap(),
            Params::Streams(p) => p.cap(),
        }
    }
}

impl Run {
    /// The command line, without `--json` (the runner adds it).
    pub fn args(&self) -> Vec<String> {
        self.params.flags().args()
    }

    /// The parameters the report must echo back: the binary ran what was
    /// asked. Both matmul exercises report the block's edge as `block`;
    /// the tiled one's flag for it is `--tile`.
    pub fn expect(&self) -> Vec<(&'static str, Value)> {
        self.params
            .flags()
            .expect(|flag| if flag == "tile" { "block" } else { flag })
    }

    /// What the run is about, for the feedback.
    pub fn about(&self) -> String {
        let about = match &self.params {
            Params::Vecadd(p) => p.about(self.tag),
            Params::Dot(p) => p.about(self.tag),
            Params::Matmul(p) => p.about(self.tag),
            Params::Memspace(p) => p.about(self.tag),
            Params::Streams(p) => p.about(self.tag),
        };
        // A tag its family does not plan (a results.json edited by hand):
        // the arguments say what it was.
        about.unwrap_or_else(|| format!("{}: {}", self.tag, self.args().join(" ")))
    }

    /// The value of `--flag` in the command line, if it has one.
    pub fn arg(&self, flag: &str) -> Option<u64> {
        let args = self.args();
        let at = args.iter().position(|a| *a == format!("--{flag}"))?;
        args.get(at + 1)?.parse().ok()
    }
}
