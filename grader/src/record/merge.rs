//! `grader merge OUT SHARD_DIRS...`: the shards of one bundle
//! (`grader run --shard K/N`) joined into the results.json one
//! `grader run` would have written. Shards that do not belong together are
//! refused: another bundle or seed, another confinement, the same shard
//! twice, one missing or unfinished. OUT keeps what it holds unless the
//! merge holds all of it again; the reports are written there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::record::reports;
use crate::record::results::Results;
use crate::record::results::ShardRecord;

/// `grader merge OUT SHARDS...`: the shards' results.json joined into
/// OUT's, which loses nothing it held, and the reports written there.
pub fn merge(out: &Path, shards: &[PathBuf]) -> Result<Results> {
    let mut loaded = Vec::new();
    for dir in shards {
        if dir == out {
            return Err(Error::Usage(format!(
                "{} is a shard; merge into another folder",
                dir.display()
            )));
        }
        loaded.push((dir.clone(), Results::load(&dir.join("results.json"))?));
    }
    let merged = join(&loaded)?;
    let path = out.join("results.json");
    if path.exists() {
        check_out(out, &Results::load(&path)?, &merged)?;
    }
    merged.save(&path)?;
    reports::write(&merged, out).map_err(Error::io(out))?;
    eprintln!(
        "grader: merged {} shards ({} students) into {}",
        shards.len(),
        merged.students.len(),
        out.display()
    );
    Ok(merged)
}

/// The shards' results joined, without a shard record; `shards` are the
/// shard folders and their results.json as loaded.
pub fn join(shards: &[(PathBuf, Results)]) -> Result<Results> {
    let mut records: Vec<(&Path, &Results, &ShardRecord)> = Vec::new();
    for (dir, results) in shards {
        let record = results.shard.as_ref().ok_or_else(|| {
            Error::Usage(format!(
                "{} holds the results of a whole class, not of a shard (grader run --shard K/N)",
                dir.display()
            ))
        })?;
        records.push((dir, results, record));
    }
    let Some(&(first_dir, first, first_record)) = records.first() else {
        return Err(Error::Usage("no shard folders were given".to_owned()));
    };
    let mut by_index: BTreeMap<u32, &Path> = BTreeMap::new();
    for &(dir, results, record) in &records {
        same_grading((first_dir, first, first_record), (dir, results, record))?;
        if let Some(other) = by_index.insert(record.index, dir) {
            return Err(Error::Usage(format!(
                "{} and {} are both shard {}/{}; give each shard once",
                other.display(),
                dir.display(),
                record.index,
                record.count
            )));
        }
        let graded = results.students.len();
        if graded != record.students.len()
            || !record
                .students
                .iter()
                .all(|s| results.students.contains_key(s))
        {
            return Err(Error::Usage(format!(
                "{} (shard {}/{}) is unfinished: {graded} of its {} students graded; run it \
                 again with --resume",
                dir.display(),
                record.index,
                record.count,
                record.students.len()
            )));
        }
    }
    let missing: Vec<String> = (1..=first_record.count)
        .filter(|k| !by_index.contains_key(k))
        .map(|k| format!("{k}/{}", first_record.count))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "shard {} missing: every shard of the bundle is needed",
            missing.join(", ")
        )));
    }
    let mut merged = Results {
        shard: None,
        students: BTreeMap::new(),
        ..first.clone()
    };
    for (dir, results, _) in records {
        for (student, record) in &results.students {
            if merged
                .students
                .insert(student.clone(), record.clone())
                .is_some()
            {
                return Err(Error::Usage(format!(
                    "{student} is graded in two shards, one of them {}",
                    dir.display()
                )));
            }
        }
    }
    Ok(merged)
}

/// Refuses `this` shard where it is not of the same grading as the
/// `first`: another bundle, seed, grader build, shard count, confinement
/// or device.
fn same_grading(
    (first_dir, first, first_record): (&Path, &Results, &ShardRecord),
    (dir, results, record): (&Path, &Results, &ShardRecord),
) -> Result<()> {
    let differs = |what: &str, this: String, that: String| {
        Error::Usage(format!(
            "{} and {} are shards of different gradings: {what} {this} and {that}",
            first_dir.display(),
            dir.display()
        ))
    };
    if record.bundle != first_record.bundle {
        return Err(differs(
            "bundles (bundle.json sha256)",
            short(&first_record.bundle),
            short(&record.bundle),
        ));
    }
    if results.seed != first.seed {
        return Err(differs(
            "seeds",
            first.seed.to_string(),
            results.seed.to_string(),
        ));
    }
    if results.grader != first.grader {
        let build = |g: &Option<String>| g.clone().unwrap_or_else(|| "unnamed".to_owned());
        return Err(differs(
            "graders",
            build(&first.grader),
            build(&results.grader),
        ));
    }
    if record.count != first_record.count {
        return Err(differs(
            "shard counts",
            first_record.count.to_string(),
            record.count.to_string(),
        ));
    }
    if results.sandbox != first.sandbox {
        return Err(differs(
            "confinements",
            confinement(&first.sandbox),
            confinement(&results.sandbox),
        ));
    }
    if results.emulated != first.emulated {
        let device = |emulated: bool| {
            if emulated {
                "the CPU emulator"
            } else {
                "a GPU"
            }
            .to_owned()
        };
        return Err(differs(
            "devices",
            device(first.emulated),
            device(results.emulated),
        ));
    }
    Ok(())
}

/// Why an OUT that holds results.json already must not be overwritten by
/// `merged`, if it must not: it is a shard, or holds records the merge
/// does not (another class, another seed).
pub fn check_out(out: &Path, earlier: &Results, merged: &Results) -> Result<()> {
    let path = out.join("results.json");
    if earlier.shard.is_some() {
        return Err(Error::Usage(format!(
            "{} is a shard's; merge into another folder",
            path.display()
        )));
    }
    let lost: Vec<&String> = earlier
        .students
        .keys()
        .filter(|s| !merged.students.contains_key(*s))
        .collect();
    if earlier.seed != merged.seed || !lost.is_empty() {
        return Err(Error::Usage(format!(
            "{} holds another grading (seed {}{}); merge into another folder, or remove it",
            path.display(),
            earlier.seed,
            match lost.first() {
                Some(student) => format!(", student {student} who is in no shard"),
                None => String::new(),
            }
        )));
    }
    Ok(())
}

fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}

fn confinement(sandbox: &Option<String>) -> String {
    match sandbox {
        Some(sandbox) => format!("'{sandbox}'"),
        None => "'--no-sandbox'".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::results::Student;

    const CLASS: [&str; 5] = ["ann", "bob", "cy", "dee", "eve"];

    /// Shard K of N of CLASS as `grader run --shard` would leave it.
    fn shard(index: u32, count: u32) -> (PathBuf, Results) {
        // Every count-th student from the index-th, as `grader run --shard` slices.
        let students: Vec<String> = CLASS
            .iter()
            .skip(index as usize - 1)
            .step_by(count as usize)
            .map(|s| s.to_string())
            .collect();
        let mut results = Results::new(9);
        results.sandbox = Some("bubblewrap, as nobody".into());
        for student in &students {
            let record = Student {
                problems: vec![format!("{student}'s own record")],
                exercises: BTreeMap::new(),
            };
            results.students.insert(student.clone(), record);
        }
        results.shard = Some(ShardRecord {
            index,
            count,
            bundle: "ab".repeat(32),
            students,
        });
        (PathBuf::from(format!("shards/{index}")), results)
    }

    #[test]
    fn the_shards_of_a_class_join_into_the_whole_class() {
        let merged = join(&[shard(2, 3), shard(1, 3), shard(3, 3)]).unwrap();
        assert_eq!(merged.shard, None);
        assert_eq!(merged.seed, 9);
        assert_eq!(merged.sandbox.as_deref(), Some("bubblewrap, as nobody"));
        assert_eq!(merged.students.keys().collect::<Vec<_>>(), CLASS);
        assert_eq!(merged.students["dee"].problems, ["dee's own record"]);
    }

    fn refused(shards: &[(PathBuf, Results)]) -> String {
        match join(shards) {
            Err(Error::Usage(why)) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn shards_that_do_not_belong_together_are_refused() {
        let mut other_bundle = shard(2, 3);
        other_bundle.1.shard.as_mut().unwrap().bundle = "cd".repeat(32);
        assert!(refused(&[shard(1, 3), other_bundle, shard(3, 3)]).contains(
            "different gradings: bundles (bundle.json sha256) abababababab and cdcdcdcdcdcd"
        ));
        let mut other_seed = shard(2, 3);
        other_seed.1.seed = 10;
        assert!(refused(&[shard(1, 3), other_seed, shard(3, 3)]).contains("seeds 9 and 10"));
        let mut emulated = shard(3, 3);
        emulated.1.emulated = true;
        assert!(
            refused(&[shard(1, 3), shard(2, 3), emulated])
                .contains("devices a GPU and the CPU emulator")
        );
        let mut unsandboxed = shard(3, 3);
        unsandboxed.1.sandbox = None;
        assert!(
            refused(&[shard(1, 3), shard(2, 3), unsandboxed])
                .contains("confinements 'bubblewrap, as nobody' and '--no-sandbox'")
        );
        assert!(refused(&[shard(1, 3), shard(2, 2)]).contains("shard counts 3 and 2"));
    }

    #[test]
    fn a_shard_given_twice_missing_or_unfinished_is_refused() {
        assert_eq!(
            refused(&[shard(1, 3), shard(3, 3), shard(1, 3)]),
            "shards/1 and shards/1 are both shard 1/3; give each shard once"
        );
        assert_eq!(
            refused(&[shard(1, 4), shard(3, 4)]),
            "shard 2/4, 4/4 missing: every shard of the bundle is needed"
        );
        let mut unfinished = shard(2, 3);
        unfinished.1.students.pop_first();
        assert_eq!(
            refused(&[shard(1, 3), unfinished, shard(3, 3)]),
            "shards/2 (shard 2/3) is unfinished: 1 of its 2 students graded; run it again \
             with --resume"
        );
        let mut whole = shard(1, 1);
        whole.1.shard = None;
        assert!(refused(&[whole]).contains("not of a shard"));
        assert_eq!(refused(&[]), "no shard folders were given");
    }

    #[test]
    fn out_is_overwritten_only_when_the_merge_holds_all_it_held() {
        let merged = join(&[shard(1, 2), shard(2, 2)]).unwrap();
        let out = Path::new("out");
        assert!(check_out(out, &merged, &merged).is_ok());
        let mut fewer = merged.clone();
        fewer.students.remove("ann");
        assert!(check_out(out, &fewer, &merged).is_ok());
        let mut more = merged.clone();
        more.students
            .insert("zed".into(), merged.students["ann"].clone());
        assert!(
            check_out(out, &more, &merged)
                .unwrap_err()
                .to_string()
                .contains("holds another grading (seed 9, student zed who is in no shard)")
        );
        let mut reseeded = merged.clone();
        reseeded.seed = 1;
        assert!(check_out(out, &reseeded, &merged).is_err());
        assert!(
            check_out(out, &shard(1, 2).1, &merged)
                .unwrap_err()
                .to_string()
                .ends_with("is a shard's; merge into another folder")
        );
    }
}
