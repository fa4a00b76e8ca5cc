//! The words of every typed outcome: what the feedback, the terminal and
//! `grader report` say of each. Outcomes are kept in results.json as they
//! were found; rewording one here rewords every report made from then on,
//! old results included, with no regrading.

use std::fmt;

use crate::build::reference::Changed;
use crate::plan::disagreement::Disagreement;
use crate::record::outcome::{Memory, Shortfall};

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disagreement::Echo { key, got, asked } => write!(
                f,
                "the report says {key} = {got}, but the grader asked for {asked}"
            ),
            Disagreement::Missing { field } => write!(f, "the report has no {field}"),
            Disagreement::Parameters { why } => write!(f, "the report's parameters: {why}"),
            Disagreement::Compared { got, want } => write!(
                f,
                "the report compared {got} values, not the {want} the run produces"
            ),
            Disagreement::Sum { got, want } => {
                write!(f, "the checksum of c is {got}; the grader computes {want}")
            }
            Disagreement::Dot {
                got,
                exact,
                error,
                limit,
            } => write!(
                f,
                "the dot is {got}; the grader computes {exact}, off by {error:.2e} of Σ|a·b| \
                 (limit {limit:.2e})"
            ),
            Disagreement::Rms { rms } => {
                write!(f, "P differs from the CPU golden model by an RMS of {rms}")
            }
            Disagreement::Width { width } => write!(f, "the width {width} is not a width"),
            Disagreement::WeightedSum { got, want } => write!(
                f,
                "the weighted checksum of P is {got}; the grader computes {want}"
            ),
            Disagreement::NoChecksum => f.write_str(
                "the report has no results.checksum: the course's driver writes one from the \
                 values copied back, so this report came from other code",
            ),
            Disagreement::BadChecksum { why } => {
                write!(f, "the report's results.checksum: {why}")
            }
            Disagreement::Values { got, want } => {
                f.write_str(&got.mismatch(want).unwrap_or_default())
            }
        }
    }
}

impl fmt::Display for Changed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not the file that was built (sha256 {} expected, {} found)",
            self.path.display(),
            self.expected,
            self.found.as_deref().unwrap_or("unreadable"),
        )
    }
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gib = |b: u64| format!("{:.1} GiB", b as f64 / f64::from(1 << 30));
        f.write_str("skipped, no points either way: ")?;
        match self {
            Shortfall::Unread {
                of: Memory::Host,
                why,
            } => write!(f, "the host's available memory could not be read ({why})"),
            Shortfall::Unread {
                of: Memory::Gpu,
                why,
            } => write!(f, "the GPU's free memory could not be read ({why})"),
            Shortfall::Short {
                of: Memory::Host,
                need,
                have,
            } => write!(
                f,
                "it needs {} of host memory, and this node has {} available",
                gib(*need),
                gib(*have)
            ),
            Shortfall::Short {
                of: Memory::Gpu,
                need,
                have,
            } => write!(
                f,
                "it needs {} of GPU memory, and the GPU has {} free",
                gib(*need),
                gib(*have)
            ),
        }
    }
}
