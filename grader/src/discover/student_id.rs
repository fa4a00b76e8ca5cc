//! Student ids: each submission folder's name made into an id that is safe
//! as a file name on any file system, a CSV cell and a terminal line, and
//! unique in the class even where names fold together (`zoë` and `zoé`,
//! `Ann` and `ann`, two Latin-1 names that are not UTF-8).

use std::collections::BTreeMap;
use std::ffi::OsStr;

/// The longest id: a feedback file name stays far below 255 bytes.
pub const MAX_ID_CHARS: usize = 64;

/// The id a folder is graded under, and why it is not the folder's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assigned {
    pub id: String,
    /// The folder's name as far as it decodes, for people to read.
    pub folder: String,
    /// Why the id differs from the name, when it does.
    pub note: Option<String>,
}

/// A name kept as it is: ASCII letters, digits, '.', '_' and '-', not
/// starting with '.' or '-', 1 to [`MAX_ID_CHARS`] characters.
pub fn is_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_ID_CHARS
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// Ids for a class's folder names, in the order given. A safe name is its
/// own id; any other becomes its safe characters ('_' for the rest, cut to
/// fit) and a digest of its bytes, so it is the same in every batch. Names
/// that would share a file on a case-insensitive file system get digests
/// too, all but the first lower-case one.
pub fn assign(names: &[&OsStr]) -> Vec<Assigned> {
    let mut assigned: Vec<Assigned> = names.iter().map(|name| one(name)).collect();
    let mut by_folded: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, a) in assigned.iter().enumerate() {
        by_folded
            .entry(a.id.to_ascii_lowercase())
            .or_default()
            .push(i);
    }
    // Which names fold to one file name: the unsafe ones by their kept
    // characters, the others by case.
    let mut by_base: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, a) in assigned.iter().enumerate() {
        let base = a.id.rsplit_once('-').filter(|_| a.note.is_some());
        let base = base.map_or(a.id.as_str(), |(b, _)| b);
        by_base
            .entry(base.to_ascii_lowercase())
            .or_default()
            .push(i);
    }
    for group in by_folded.values().filter(|g| g.len() > 1) {
        let keeper = group
            .iter()
            .copied()
            .find(|&i| assigned[i].id == assigned[i].id.to_ascii_lowercase())
            .unwrap_or(group[0]);
        for &i in group.iter().filter(|&&i| i != keeper) {
            let id = format!("{}-{}", assigned[i].id, digest(names[i]));
            assigned[i].note = Some(format!("graded as {id}"));
            assigned[i].id = id;
        }
    }
    for group in by_base.values().filter(|g| g.len() > 1) {
        for &i in group {
            let others: Vec<String> = group
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| quoted(&assigned[j].folder))
                .collect();
            if let Some(note) = &mut assigned[i].note {
                note.push_str(&format!(
                    "; its name folds to the same file name as {}, graded apart",
                    others.join(", ")
                ));
            }
        }
    }
    assigned
}

fn one(name: &OsStr) -> Assigned {
    let folder = name.to_string_lossy().into_owned();
    if name.to_str().is_some_and(is_safe) {
        return Assigned {
            id: folder.clone(),
            folder,
            note: None,
        };
    }
    let mut kept: String = folder
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(MAX_ID_CHARS - 9)
        .collect();
    if kept.starts_with(['.', '-']) || kept.is_empty() {
        kept.insert(0, '_');
    }
    let id = format!("{kept}-{}", digest(name));
    let why = if name.to_str().is_none() {
        "is not UTF-8"
    } else {
        "is not safe as a file name"
    };
    Assigned {
        note: Some(format!(
            "the folder name {} {why}; graded as {id}",
            quoted(&folder)
        )),
        id,
        folder,
    }
}

/// A folder name for a line of text: quoted, control characters escaped.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.escape_debug())
}

/// Eight hex digits of the name's bytes (FNV-1a): stable across batches
/// and grader versions, which a std hasher does not promise.
fn digest(name: &OsStr) -> String {
    let bytes = name.as_encoded_bytes();
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{:08x}", (hash >> 32) ^ (hash & 0xffff_ffff))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn ids(names: &[&str]) -> Vec<Assigned> {
        let names: Vec<&OsStr> = names.iter().map(OsStr::new).collect();
        assign(&names)
    }

    #[test]
    fn safe_names_are_their_own_ids() {
        let got = ids(&["ada", "s1234-B", "target", "x.y_z"]);
        assert!(got.iter().all(|a| a.id == a.folder && a.note.is_none()));
    }

    #[test]
    fn names_that_fold_together_are_graded_apart_and_reported() {
        // zoë in NFC and in NFD, zoé, and a name differing only in case.
        let got = ids(&["zo\u{eb}", "zoe\u{308}", "zo\u{e9}", "Ann", "ann"]);
        let unique: BTreeSet<String> = got.iter().map(|a| a.id.to_ascii_lowercase()).collect();
        assert_eq!(unique.len(), got.len(), "{got:?}");
        for a in &got {
            assert!(is_safe(&a.id), "{a:?}");
        }
        assert!(got[0].id.starts_with("zo_-"), "{got:?}");
        assert!(got[1].id.starts_with("zoe_-"), "{got:?}");
        let note = got[0].note.as_deref().unwrap();
        assert!(note.contains("graded as zo_-"), "{note}");
        assert!(note.contains("same file name as \"zoé\""), "{note}");
        // The lower-case name keeps its id; the other is told its own.
        assert_eq!(got[4].id, "ann");
        assert!(got[3].id.starts_with("Ann-"), "{got:?}");
        assert!(got[3].note.as_deref().unwrap().contains("\"ann\""));
        // The same name gets the same id in another batch.
        assert_eq!(ids(&["zo\u{eb}"])[0].id, got[0].id);
    }

    #[test]
    #[cfg(unix)]
    fn latin1_names_that_are_not_utf8_stay_two_students() {
        use std::os::unix::ffi::OsStrExt;
        let got = assign(&[OsStr::from_bytes(b"ren\xe9"), OsStr::from_bytes(b"ren\xe8")]);
        assert_ne!(got[0].id, got[1].id);
        assert!(got[0].note.as_deref().unwrap().contains("is not UTF-8"));
        assert!(is_safe(&got[0].id) && is_safe(&got[1].id));
    }

    #[test]
    fn long_names_and_line_breaks_become_short_single_line_ids() {
        let long = "a".repeat(240);
        let got = ids(&[&long, "two\nlines", "-rf", ".hidden"]);
        for a in &got {
            assert!(is_safe(&a.id), "{a:?}");
        }
        assert_eq!(got[0].id.len(), MAX_ID_CHARS);
        assert!(got[1].id.starts_with("two_lines-"));
        assert!(got[1].note.as_deref().unwrap().contains("\"two\\nlines\""));
        assert!(got[2].id.starts_with("_-rf-"));
    }
}
