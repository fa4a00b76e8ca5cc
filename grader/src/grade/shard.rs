//! `grader run --shard K/N`: which students the K-th of N slices of a
//! bundle holds, and the record a shard's results.json keeps of itself so
//! that `grader merge` can tell its shards belong together.
//!
//! The slices are cut from the bundle's student ids in sorted order, the
//! i-th id going to slice i mod N: the folder's listing order does not
//! matter, every student is in exactly one slice, and slices differ in size
//! by at most one (a hash of the id would leave some slices empty in a
//! small class, and the slowest slice sets the wall time).

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use crate::build::bundle::Bundle;
use crate::build::digest;
use crate::error::{Error, Result};
use crate::record::results::{Results, ShardRecord};

/// The K-th (1-based) of N slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// The most slices a class is cut into.
pub const MAX_SHARDS: u32 = 10_000;

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `K/N`, 1 ≤ K ≤ N ≤ [`MAX_SHARDS`]. A String error: this is
/// clap's value parser, and clap shows the string as it is.
pub fn parse(text: &str) -> std::result::Result<Shard, String> {
    let usage = || format!("'{text}' is not K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/8");
    let (k, n) = text.split_once('/').ok_or_else(usage)?;
    let number = |part: &str| {
        part.parse::<u32>()
            .ok()
            .filter(|_| part.bytes().all(|b| b.is_ascii_digit()))
    };
    match (number(k), number(n)) {
        (Some(index), Some(count)) if 1 <= index && index <= count && count <= MAX_SHARDS => {
            Ok(Shard { index, count })
        }
        _ => Err(usage()),
    }
}

/// The students of `shard` among `students` (any order, repeats allowed),
/// sorted.
pub fn slice<'a>(students: impl IntoIterator<Item = &'a str>, shard: Shard) -> Vec<String> {
    let sorted: BTreeSet<&str> = students.into_iter().collect();
    sorted
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i as u64 % u64::from(shard.count) == u64::from(shard.index - 1))
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// The identity of the bundle at `bundle_dir`: its bundle.json's digest.
pub fn bundle_identity(bundle_dir: &Path) -> Result<String> {
    let path = bundle_dir.join("bundle.json");
    digest::file(&path).map_err(Error::io(&path))
}

/// Readies `out` to grade `shard` of `bundle` (read from `bundle_dir`): results.json holding the
/// shard's record, fresh, or as it is with `resume` when it is this very
/// shard's. `sandbox` is how its runs are confined. Returns the students
/// of the shard, which may be none in a class smaller than the shards.
pub fn begin(
    bundle: &Bundle,
    bundle_dir: &Path,
    out: &Path,
    shard: Shard,
    resume: bool,
    sandbox: Option<String>,
    emulated: bool,
) -> Result<Vec<String>> {
    let record = ShardRecord {
        index: shard.index,
        count: shard.count,
        bundle: bundle_identity(bundle_dir)?,
        students: slice(bundle.items.iter().map(|i| i.student.as_str()), shard),
    };
    let path = out.join("results.json");
    if resume && path.exists() {
        let earlier = Results::load(&path)?;
        if earlier.shard.as_ref() == Some(&record) {
            return Ok(record.students);
        }
        return Err(Error::Usage(format!(
            "--resume: {} is not shard {shard} of this bundle; grade it again without --resume",
            path.display()
        )));
    }
    let students = record.students.clone();
    // How it is graded, as every shard's results say: an empty shard's
    // results must merge with the others'.
    let fresh = Results {
        sandbox,
        emulated,
        shard: Some(record),
        ..Results::new(bundle.seed)
    };
    fresh.save(&path)?;
    Ok(students)
}

/// Refuses shards (their output folders) that are not exactly the
/// partition of the bundle at `bundle_dir`: another bundle, a student
/// vanished from a shard or one that is not in it, records a shard's own
/// list does not name. `grader merge` asks this before joining them; a
/// results.json is as writable as the folder it is in.
pub fn check_partition(bundle_dir: &Path, shards: &[std::path::PathBuf]) -> Result<()> {
    let identity = bundle_identity(bundle_dir)?;
    let bundle = crate::build::bundle::load(bundle_dir)?;
    let class: BTreeSet<&str> = bundle.items.iter().map(|i| i.student.as_str()).collect();
    for dir in shards {
        let results = Results::load(&dir.join("results.json"))?;
        let Some(record) = &results.shard else {
            return Err(Error::Usage(format!(
                "{} holds the results of a whole class, not of a shard (grader run --shard K/N)",
                dir.display()
            )));
        };
        if record.bundle != identity {
            return Err(Error::Usage(format!(
                "{} is a shard of another bundle (bundle.json sha256 {}), not of {}",
                dir.display(),
                record.bundle,
                bundle_dir.display()
            )));
        }
        let shard = Shard {
            index: record.index,
            count: record.count,
        };
        let want = slice(class.iter().copied(), shard);
        let named: BTreeSet<&str> = record.students.iter().map(String::as_str).collect();
        let graded: BTreeSet<&str> = results.students.keys().map(String::as_str).collect();
        for student in &want {
            if !graded.contains(student.as_str()) || !named.contains(student.as_str()) {
                return Err(Error::Usage(format!(
                    "{} (shard {shard}) has no record of {student}, who is in that shard of the \
                     bundle; grade the shard again",
                    dir.display()
                )));
            }
        }
        if let Some(extra) = graded
            .iter()
            .chain(&named)
            .find(|s| !want.iter().any(|w| w == *s))
        {
            return Err(Error::Usage(format!(
                "{} (shard {shard}) holds {extra}, who is not in that shard of the bundle{}; \
                 grade the shard again",
                dir.display(),
                if class.contains(extra) {
                    ""
                } else {
                    " (nor in the class)"
                }
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("student-{i:03}")).collect()
    }

    #[test]
    fn shards_are_a_partition_of_nearly_equal_sizes() {
        for students in [0, 1, 4, 17, 100] {
            let all = ids(students);
            for count in 1..=7 {
                let mut seen: Vec<String> = Vec::new();
                let mut sizes = Vec::new();
                for index in 1..=count {
                    let part = slice(all.iter().map(String::as_str), Shard { index, count });
                    sizes.push(part.len());
                    seen.extend(part);
                }
                seen.sort();
                assert_eq!(seen, all, "{students} students in {count} shards");
                let (min, max) = (sizes.iter().min(), sizes.iter().max());
                assert!(max.unwrap() - min.unwrap() <= 1, "{sizes:?}");
            }
        }
    }

    #[test]
    fn a_shard_does_not_depend_on_the_order_of_the_submissions() {
        let all = ids(23);
        let mut shuffled = all.clone();
        let mut rng = fastrand::Rng::with_seed(5);
        rng.shuffle(&mut shuffled);
        // Each student once per exercise in a bundle: repeats too.
        shuffled.extend(all.iter().rev().cloned());
        assert_ne!(shuffled[..23], all[..]);
        for index in 1..=4 {
            let shard = Shard { index, count: 4 };
            assert_eq!(
                slice(shuffled.iter().map(String::as_str), shard),
                slice(all.iter().map(String::as_str), shard)
            );
        }
    }

    #[test]
    fn shard_arguments_are_k_of_n() {
        assert_eq!(parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(parse("1/1"), Ok(Shard { index: 1, count: 1 }));
        assert_eq!(parse("3/3").unwrap().to_string(), "3/3");
        for bad in [
            "0/3", "4/3", "3", "/3", "1/", "a/b", "1/0", "+1/3", "1/3/4", " 1/3", "1/20000",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains("is not K/N"), "{bad}: {err}");
        }
    }
}
