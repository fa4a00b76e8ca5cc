//! Why the grader's own recheck of a passing report disagrees with it: the
//! report did not run what was asked, or its result is not the one the
//! grader computes from the run's parameters. A student's failure, kept in
//! results.json as it was found (its words are `record::render`'s).

use kernels::checksum::Checksum;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Disagreement {
    /// A parameter the report echoes is not the one the grader asked for.
    Echo {
        key: String,
        got: Value,
        asked: Value,
    },
    /// A field the report must have is missing or not a number.
    Missing { field: String },
    /// The report's parameters do not read as the exercise's.
    Parameters { why: String },
    /// The report compared another number of values than the run produces.
    Compared { got: u64, want: u64 },
    /// vecadd-anyN's checksum of c.
    Sum { got: f64, want: f64 },
    /// A dot product outside the tolerance of the exact one.
    Dot {
        got: f64,
        /// The exact value in decimal: it may pass 2^63.
        exact: String,
        /// |got − exact| / Σ|a·b|.
        error: f64,
        limit: f64,
    },
    /// P differs from the report's own CPU golden model.
    Rms { rms: f64 },
    /// A width that is no width.
    Width { width: u64 },
    /// The weighted checksum of matmul's P.
    WeightedSum { got: f64, want: f64 },
    /// A report without the checksum of every value copied back.
    NoChecksum,
    /// A checksum that does not read as one.
    BadChecksum { why: String },
    /// The values copied back are not the ones the run produces.
    Values { got: Checksum, want: Checksum },
    /// A run of the canary build whose result is not the canary kernel's
    /// (the course's host code running the same PTX says `want`).
    Canary {
        field: String,
        got: Value,
        want: Value,
    },
}

/// The number at `value` in a report, or the disagreement that names
/// `field` as missing.
pub fn number(value: &Value, field: &str) -> Result<f64, Disagreement> {
    value.as_f64().ok_or_else(|| missing(field))
}

/// The count at `value` in a report, or the disagreement that names
/// `field` as missing.
pub fn count(value: &Value, field: &str) -> Result<u64, Disagreement> {
    value.as_u64().ok_or_else(|| missing(field))
}

fn missing(field: &str) -> Disagreement {
    Disagreement::Missing {
        field: field.to_owned(),
    }
}

/// The report compared `want` values, as many as the run produces.
pub fn compared(report: &Value, want: u64) -> Result<(), Disagreement> {
    let got = count(&report["check"]["compared"], "check.compared")?;
    if got == want {
        Ok(())
    } else {
        Err(Disagreement::Compared { got, want })
    }
}

/// The report's parameters as the exercise's own type.
pub fn parameters<P: serde::de::DeserializeOwned>(report: &Value) -> Result<P, Disagreement> {
    serde_json::from_value(report["parameters"].clone()).map_err(|err| Disagreement::Parameters {
        why: err.to_string(),
    })
}

/// The report's checksum of every output value against the one the grader
/// computes from the run's parameters: the values themselves, not a count.
pub fn values(report: &Value, want: Checksum) -> Result<(), Disagreement> {
    let field = &report["results"]["checksum"];
    if field.is_null() {
        return Err(Disagreement::NoChecksum);
    }
    let got: Checksum =
        serde_json::from_value(field.clone()).map_err(|err| Disagreement::BadChecksum {
            why: err.to_string(),
        })?;
    if got == want {
        Ok(())
    } else {
        Err(Disagreement::Values { got, want })
    }
}
