//! Student ids: each submission folder's name made into an id that is safe
//! as a file name on any file system, a CSV cell and a terminal line, and
//! unique in the class by construction, whatever the names.
//!
//! Two kinds of id never meet. A kept id is the folder's own name: safe,
//! and not shaped like a renamed id. A renamed id is the name's safe
//! characters, `-` and 32 hex digits of the sha256 of its bytes, and a
//! folder whose name has that shape is renamed itself. So a renaming can
//! never land on a kept name, and two renamed ids are equal only when two
//! names share 128 bits of sha256, which nobody can find; even then a last
//! pass makes the later one again with a count in it, so the ids are
//! distinct whatever the digest does. Names that would share a file on a
//! case-insensitive file system (`Ann`, `ann`) keep one id, the lower-case
//! one, and the others are renamed.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;

use sha2::{Digest, Sha256};

/// The longest id: a feedback file name stays far below 255 bytes.
pub const MAX_ID_CHARS: usize = 64;

/// Hex digits of a renamed id's digest: 128 bits.
const DIGEST_HEX: usize = 32;

/// The kept characters of a renamed id, before `-` and the digest.
const PREFIX_CHARS: usize = MAX_ID_CHARS - 1 - DIGEST_HEX;

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

/// Whether `id` has a renamed id's shape: safe, ending in `-` and 32 hex
/// digits. A roster may name a student by such an id: it is never a kept
/// folder name.
pub fn is_renamed(id: &str) -> bool {
    is_safe(id)
        && id.len() > DIGEST_HEX
        && id.is_char_boundary(id.len() - DIGEST_HEX - 1)
        && id[..id.len() - DIGEST_HEX].ends_with('-')
        && id[id.len() - DIGEST_HEX..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
}

/// Ids for a class's folder names, in the order given; the same names give
/// the same ids in any order and in any batch that holds them.
pub fn assign(names: &[&OsStr]) -> Vec<Assigned> {
    assign_with(names, &sha256_hex)
}

/// [`assign`] with the digest given: the tests prove the ids distinct even
/// for a digest that collides all the time.
fn assign_with(names: &[&OsStr], digest: &dyn Fn(&[u8]) -> String) -> Vec<Assigned> {
    let mut assigned: Vec<Assigned> = names.iter().map(|name| first_choice(name)).collect();
    // Kept names that fold to one file name: the lower-case one keeps its
    // id (at most one name is all lower case), else the first in byte
    // order; the others are renamed.
    let mut folds: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, a) in assigned.iter().enumerate() {
        if a.note.is_none() {
            folds.entry(a.id.to_ascii_lowercase()).or_default().push(i);
        }
    }
    for group in folds.values().filter(|g| g.len() > 1) {
        let keeper = group
            .iter()
            .copied()
            .find(|&i| assigned[i].id == assigned[i].id.to_ascii_lowercase())
            .unwrap_or_else(|| {
                *group
                    .iter()
                    .min_by_key(|&&i| names[i].as_encoded_bytes())
                    .expect("a group of two or more")
            });
        for &i in group.iter().filter(|&&i| i != keeper) {
            assigned[i].note = Some(format!(
                "the folder name {} differs from {} only in case, and a file system may take \
                 them for one",
                quoted(&assigned[i].folder),
                quoted(&assigned[keeper].folder)
            ));
        }
    }
    // Every kept id first, then the renamed ones in byte order of their
    // names: an id already taken (only ever by a digest collision) is made
    // again with a count in it, until it is free.
    let mut taken: BTreeSet<String> = assigned
        .iter()
        .filter(|a| a.note.is_none())
        .map(|a| a.id.to_ascii_lowercase())
        .collect();
    let mut renamed: Vec<usize> = (0..names.len())
        .filter(|&i| assigned[i].note.is_some())
        .collect();
    renamed.sort_by_key(|&i| names[i].as_encoded_bytes());
    for i in renamed {
        let bytes = names[i].as_encoded_bytes();
        let prefix = safe_prefix(&assigned[i].folder);
        let hex = hex_digits(&digest(bytes));
        let mut id = format!("{prefix}-{hex}");
        // A count in the digest's last 16 digits: every count a new id,
        // whatever the digest.
        let mut count = 0u64;
        while !taken.insert(id.to_ascii_lowercase()) {
            count += 1;
            id = format!("{prefix}-{}{count:016x}", &hex[..DIGEST_HEX - 16]);
        }
        let note = assigned[i].note.take().unwrap_or_default();
        assigned[i].note = Some(format!("{note}; graded as {id}"));
        assigned[i].id = id;
    }
    note_look_alikes(&mut assigned);
    assigned
}

/// A name's own id when it may keep it; else the reason it may not (the
/// id is made later).
fn first_choice(name: &OsStr) -> Assigned {
    let folder = name.to_string_lossy().into_owned();
    let why = match name.to_str() {
        None => Some("is not UTF-8"),
        Some(text) if !is_safe(text) => Some("is not safe as a file name"),
        Some(text) if is_renamed(text) => Some("has the shape of an id the grader makes"),
        Some(_) => None,
    };
    Assigned {
        id: folder.clone(),
        note: why.map(|why| format!("the folder name {} {why}", quoted(&folder))),
        folder,
    }
}

/// Tells each renamed student which other folders look like theirs (the
/// same kept characters), so the instructor sees why there are two ids.
fn note_look_alikes(assigned: &mut [Assigned]) {
    let mut by_prefix: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, a) in assigned.iter().enumerate() {
        let prefix = match &a.note {
            Some(_) => safe_prefix(&a.folder),
            None => a.id.clone(),
        };
        by_prefix
            .entry(prefix.to_ascii_lowercase())
            .or_default()
            .push(i);
    }
    for group in by_prefix.values().filter(|g| g.len() > 1) {
        for &i in group {
            let mut others: Vec<String> = group
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| quoted(&assigned[j].folder))
                .collect();
            others.sort();
            if let Some(note) = &mut assigned[i].note {
                note.push_str(&format!(
                    "; its name folds to the same file name as {}, graded apart",
                    others.join(", ")
                ));
            }
        }
    }
}

/// A name's safe characters ('_' for the rest), cut to leave room for the
/// digest, never starting with '.' or '-' and never empty.
fn safe_prefix(folder: &str) -> String {
    let mut kept: String = folder
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(PREFIX_CHARS)
        .collect();
    if kept.starts_with(['.', '-']) || kept.is_empty() {
        if kept.len() == PREFIX_CHARS {
            kept.pop();
        }
        kept.insert(0, '_');
    }
    kept
}

/// The first [`DIGEST_HEX`] hex digits of a digest, lower case (a digest
/// shorter than that is padded with zeros).
fn hex_digits(digest: &str) -> String {
    let mut hex: String = digest
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .take(DIGEST_HEX)
        .collect();
    while hex.len() < DIGEST_HEX {
        hex.push('0');
    }
    hex
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A folder name for a line of text: quoted, control characters escaped.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.escape_debug())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<Assigned> {
        let names: Vec<&OsStr> = names.iter().map(OsStr::new).collect();
        assign(&names)
    }

    /// What every assignment must be: one safe id per name, no two alike
    /// even on a case-insensitive file system, a kept name never changed
    /// unless it shares a folded name, and the same ids in any order.
    fn check_ids(names: &[Vec<u8>], digest: &dyn Fn(&[u8]) -> String) {
        use std::os::unix::ffi::OsStrExt;
        let os: Vec<&OsStr> = names.iter().map(|n| OsStr::from_bytes(n)).collect();
        let got = assign_with(&os, digest);
        assert_eq!(got.len(), names.len());
        let mut folded = BTreeSet::new();
        for (name, a) in os.iter().zip(&got) {
            assert!(is_safe(&a.id), "{name:?}: {a:?}");
            assert!(
                folded.insert(a.id.to_ascii_lowercase()),
                "{name:?} shares its id: {got:?}"
            );
            let kept = name.to_str().is_some_and(|n| is_safe(n) && !is_renamed(n));
            if a.note.is_none() {
                assert!(kept && a.id == *name.to_str().unwrap(), "{a:?}");
            } else {
                assert!(is_renamed(&a.id), "{a:?}");
            }
            let alone = !os.iter().any(|o| {
                o != name
                    && o.to_string_lossy()
                        .eq_ignore_ascii_case(&name.to_string_lossy())
            });
            if kept && alone {
                assert!(a.note.is_none(), "{name:?} was renamed: {a:?}");
            }
        }
        let mut reversed = os.clone();
        reversed.reverse();
        let mut again = assign_with(&reversed, digest);
        again.reverse();
        assert_eq!(again, got, "the order changed the ids");
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

    #[test]
    fn a_folder_named_like_anothers_renamed_id_cannot_take_it() {
        // The attack: name folders after the ids the grader makes of
        // others, again and again.
        let first = ids(&["vecadd anyN"]);
        let made = first[0].id.clone();
        let made_of_made = ids(&[&made])[0].id.clone();
        let got = ids(&["vecadd anyN", &made, &made_of_made, "vecadd_anyN"]);
        assert_eq!(got[0].id, made, "a name's id does not depend on the class");
        assert_ne!(got[1].id, made);
        assert!(
            got[1].note.as_deref().unwrap().contains("shape of an id"),
            "{got:?}"
        );
        assert_eq!(got[3].id, "vecadd_anyN");
        let unique: BTreeSet<&str> = got.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(unique.len(), 4, "{got:?}");
        // A roster may name the student by the id grading printed.
        assert!(is_renamed(&made) && !is_renamed("vecadd_anyN"));
    }

    #[test]
    fn ids_stay_distinct_even_when_every_digest_collides() {
        let constant = |_: &[u8]| "0".repeat(64);
        let names: Vec<Vec<u8>> = ["a b", "a:b", "a/b", "a\u{eb}b", "a_b", "A b"]
            .iter()
            .map(|n| n.as_bytes().to_vec())
            .chain([format!("a_b-{}", "0".repeat(32)).into_bytes()])
            .collect();
        check_ids(&names, &constant);
    }

    /// Names drawn from pieces an attacker would use: case variants,
    /// accents, unsafe bytes, and ids the grader made of earlier names.
    fn generated_class(rng: &mut fastrand::Rng, digest: &dyn Fn(&[u8]) -> String) -> Vec<Vec<u8>> {
        use std::os::unix::ffi::OsStrExt;
        const PIECES: [&str; 12] = [
            "a", "A", "vecadd", "-anyN", "_", ".", "-", " ", "\u{eb}", "e\u{308}", "0", "b",
        ];
        let mut names: Vec<Vec<u8>> = Vec::new();
        for _ in 0..rng.usize(1..24) {
            let roll = rng.u8(..10);
            let name: Vec<u8> = if roll < 3 && !names.is_empty() {
                // A name made into an id, taken as a folder name.
                let of = names[rng.usize(..names.len())].clone();
                let made = assign_with(&[OsStr::from_bytes(&of)], digest);
                made[0].id.clone().into_bytes()
            } else if roll < 4 && !names.is_empty() {
                // The same name in another case.
                let of = &names[rng.usize(..names.len())];
                of.iter().map(|b| b.to_ascii_uppercase()).collect()
            } else if roll < 5 {
                // Not UTF-8, or far too long.
                let mut bytes = vec![b'r', 0xe9];
                bytes.extend(std::iter::repeat_n(b'x', rng.usize(0..100)));
                bytes
            } else {
                (0..rng.usize(1..6))
                    .flat_map(|_| PIECES[rng.usize(..PIECES.len())].bytes())
                    .collect()
            };
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    #[test]
    fn ids_are_unique_in_thousands_of_generated_classes() {
        let mut rng = fastrand::Rng::with_seed(25);
        // A digest of two hex digits collides often: the construction, not
        // the digest's width, must keep the ids apart.
        let weak = |bytes: &[u8]| format!("{:02x}", bytes.iter().fold(0u8, |h, b| h ^ b));
        for round in 0..3000 {
            let digest: &dyn Fn(&[u8]) -> String = if round % 2 == 0 { &sha256_hex } else { &weak };
            let names = generated_class(&mut rng, digest);
            check_ids(&names, digest);
        }
    }
}
