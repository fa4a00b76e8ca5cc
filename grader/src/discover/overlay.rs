//! What is taken from a student's exercise, and laying it over a pristine
//! copy of the course's exercise crate. Only `src/*.rs` and `src/kernel.cu`
//! are taken: the crate's Cargo.toml and build.rs are always the course's,
//! so a submission cannot change how it is built. Everything taken is
//! bounded before it is read: a file's size, the files and bytes of one
//! exercise, and the bytes of one submission. Links are refused with a
//! reason and never read: symbolic links, and hard links whose other names
//! lie outside the submission (a hard link is the same file as its target,
//! wherever that is). Each file is read once, however many names it has,
//! and laid over as the bytes that were read then.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The largest student file taken: a long exercise is a few KiB.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// The most files taken from one exercise's src/: main.rs, kernel.cu and a
/// few modules.
pub const MAX_FILES: usize = 32;
/// The most bytes taken from one exercise's src/, all files together.
pub const MAX_EXERCISE_BYTES: u64 = 1 << 20;
/// The most bytes taken from one submission, every copy of every exercise
/// together: eight exercises at their limit.
pub const MAX_SUBMISSION_BYTES: u64 = 8 * MAX_EXERCISE_BYTES;
/// The most entries of one src/ folder looked at: beyond that the folder
/// is refused unread.
const MAX_SRC_ENTRIES: usize = 1024;

/// A student file to lay over the pristine crate, as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// Where it goes in the crate, e.g. `src/main.rs`.
    pub relative: PathBuf,
    pub source: PathBuf,
    /// Its length and sha256 when it was read: [`lay_over`] writes exactly
    /// these bytes or refuses.
    pub bytes: u64,
    pub digest: [u8; 32],
}

/// A student file or folder that was not taken, and why. Paths are as the
/// student sees them, relative to their submission's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Link {
        path: PathBuf,
    },
    /// A file with names outside the submission.
    HardLink {
        path: PathBuf,
        names: u64,
    },
    TooLarge {
        path: PathBuf,
        bytes: u64,
    },
    /// More files to take than [`MAX_FILES`] (or more entries than the
    /// grader looks at): the exercise is not taken.
    TooManyFiles {
        folder: PathBuf,
        files: usize,
    },
    /// More bytes than [`MAX_EXERCISE_BYTES`]: the exercise is not taken.
    ExerciseTooLarge {
        folder: PathBuf,
        bytes: u64,
    },
    /// The submission's [`MAX_SUBMISSION_BYTES`] were spent on other
    /// copies and exercises: this one is not taken.
    SubmissionTooLarge {
        folder: PathBuf,
    },
    Unreadable {
        path: PathBuf,
        why: String,
    },
    NoSource {
        folder: PathBuf,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Link { path } => write!(
                f,
                "{} is a symbolic link: submissions must hold the files themselves",
                path.display()
            ),
            Refusal::HardLink { path, names } => write!(
                f,
                "{} is a hard link, one of {names} names of a file that has names outside \
                 your submission: copy the file instead of linking it",
                path.display()
            ),
            Refusal::TooLarge { path, bytes } => write!(
                f,
                "{} is {bytes} bytes, over the {MAX_FILE_BYTES}-byte limit for a source file",
                path.display()
            ),
            Refusal::TooManyFiles { folder, files } => write!(
                f,
                "{}/src holds {files} or more files the grader would take, over the limit of \
                 {MAX_FILES}: nothing of it was taken",
                folder.display()
            ),
            Refusal::ExerciseTooLarge { folder, bytes } => write!(
                f,
                "{}/src holds {bytes} bytes of source, over the {MAX_EXERCISE_BYTES}-byte limit \
                 for an exercise: nothing of it was taken",
                folder.display()
            ),
            Refusal::SubmissionTooLarge { folder } => write!(
                f,
                "{} was not read: the grader reads at most {MAX_SUBMISSION_BYTES} bytes of \
                 source from a submission, and the copies before it used them up",
                folder.display()
            ),
            Refusal::Unreadable { path, why } => {
                write!(f, "{} could not be read: {why}", path.display())
            }
            Refusal::NoSource { folder } => write!(
                f,
                "{} has no src/ folder of plain files to grade",
                folder.display()
            ),
        }
    }
}

/// What one exercise folder gives: the files taken, and the refusals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub taken: Vec<Taken>,
    pub refused: Vec<Refusal>,
}

impl Selection {
    /// Whether two folders give the same files, every one taken.
    pub fn same_as(&self, other: &Selection) -> bool {
        let files = |s: &Selection| -> Vec<(PathBuf, [u8; 32])> {
            s.taken
                .iter()
                .map(|t| (t.relative.clone(), t.digest))
                .collect()
        };
        self.refused.is_empty() && other.refused.is_empty() && files(self) == files(other)
    }
}

/// Reads the files of one submission (or of the course), each once,
/// within the submission's budget.
#[derive(Debug)]
pub struct Reader {
    /// Bytes that may still be taken.
    budget: u64,
    /// Digests of the files read so far, by device and inode.
    read: HashMap<(u64, u64), [u8; 32]>,
    /// For a submission: how many names each file with several names has
    /// inside it. None for the course's own files, which are trusted.
    names_inside: Option<HashMap<(u64, u64), u64>>,
}

impl Reader {
    /// A reader of the course's own crates: no budget, hard links allowed.
    pub fn course() -> Reader {
        Reader {
            budget: u64::MAX,
            read: HashMap::new(),
            names_inside: None,
        }
    }

    /// A reader of one submission, given how many names each of its files
    /// with several names has inside it (see [`Reader::count_name`]).
    pub fn submission() -> Reader {
        Reader {
            budget: MAX_SUBMISSION_BYTES,
            read: HashMap::new(),
            names_inside: Some(HashMap::new()),
        }
    }

    /// Counts one name, found inside the submission, of a file that has
    /// several.
    pub fn count_name(&mut self, metadata: &fs::Metadata) {
        if let Some(names) = &mut self.names_inside {
            if metadata.is_file() && metadata.nlink() > 1 {
                *names.entry((metadata.dev(), metadata.ino())).or_default() += 1;
            }
        }
    }

    /// The files to take from `exercise` (a folder holding src/), shown to
    /// the student as `shown`, and the refusals. Looks at nothing but the
    /// entries of src/ itself; reads nothing that a limit refuses.
    pub fn select(&mut self, exercise: &Path, shown: &Path) -> Selection {
        let src = exercise.join("src");
        let refused = |refusal| Selection {
            taken: vec![],
            refused: vec![refusal],
        };
        match fs::symlink_metadata(&src) {
            Ok(m) if m.is_dir() => {}
            Ok(m) if m.file_type().is_symlink() => {
                return refused(Refusal::Link {
                    path: shown.join("src"),
                });
            }
            _ => {
                return refused(Refusal::NoSource {
                    folder: shown.to_owned(),
                });
            }
        }
        let Ok(entries) = fs::read_dir(&src) else {
            return refused(Refusal::NoSource {
                folder: shown.to_owned(),
            });
        };
        let mut wanted = Vec::new();
        for (seen, entry) in entries.flatten().enumerate() {
            if seen >= MAX_SRC_ENTRIES {
                return refused(Refusal::TooManyFiles {
                    folder: shown.to_owned(),
                    files: seen,
                });
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".rs") || name == "kernel.cu" {
                wanted.push(name);
            }
        }
        if wanted.len() > MAX_FILES {
            return refused(Refusal::TooManyFiles {
                folder: shown.to_owned(),
                files: wanted.len(),
            });
        }
        wanted.sort();
        let mut selection = Selection::default();
        let mut plain = Vec::new();
        for name in wanted {
            let path = src.join(&name);
            let shown_path = shown.join("src").join(&name);
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                selection.refused.push(Refusal::Link { path: shown_path });
            } else if !meta.is_file() {
                continue;
            } else if meta.len() > MAX_FILE_BYTES {
                selection.refused.push(Refusal::TooLarge {
                    path: shown_path,
                    bytes: meta.len(),
                });
            } else if let Some(names) = self.outside_names(&meta) {
                selection.refused.push(Refusal::HardLink {
                    path: shown_path,
                    names,
                });
            } else {
                plain.push((name, path, shown_path, meta));
            }
        }
        let bytes: u64 = plain.iter().map(|(_, _, _, m)| m.len()).sum();
        if bytes > MAX_EXERCISE_BYTES {
            return refused(Refusal::ExerciseTooLarge {
                folder: shown.to_owned(),
                bytes,
            });
        }
        if bytes > self.budget {
            return refused(Refusal::SubmissionTooLarge {
                folder: shown.to_owned(),
            });
        }
        self.budget -= bytes;
        for (name, path, shown_path, meta) in plain {
            let key = (meta.dev(), meta.ino());
            let digest = match self.read.get(&key) {
                Some(digest) => Ok(*digest),
                None => read_checked(&path, &meta).map(|b| Sha256::digest(&b).into()),
            };
            match digest {
                Ok(digest) => {
                    self.read.insert(key, digest);
                    selection.taken.push(Taken {
                        relative: Path::new("src").join(&name),
                        source: path,
                        bytes: meta.len(),
                        digest,
                    });
                }
                Err(err) => selection.refused.push(Refusal::Unreadable {
                    path: shown_path,
                    why: err.to_string(),
                }),
            }
        }
        selection
    }

    /// For a file with several names, how many it has when some lie outside
    /// the submission; None when every name is inside (or for the course).
    fn outside_names(&self, meta: &fs::Metadata) -> Option<u64> {
        let inside = self.names_inside.as_ref()?;
        let names = meta.nlink();
        let counted = inside.get(&(meta.dev(), meta.ino())).copied().unwrap_or(0);
        (names > 1 && counted < names).then_some(names)
    }
}

/// The course's own files to take from `exercise` (its stubs, its
/// solutions), and the refusals.
pub fn select(exercise: &Path) -> (Vec<Taken>, Vec<Refusal>) {
    let Selection { taken, refused } = Reader::course().select(exercise, exercise);
    (taken, refused)
}

/// The bytes of the plain file at `path` that `expected` describes (from
/// `symlink_metadata`): opened without following a link, and refused if
/// it is another file by now or longer than [`MAX_FILE_BYTES`].
fn read_checked(path: &Path, expected: &fs::Metadata) -> io::Result<Vec<u8>> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || (meta.dev(), meta.ino()) != (expected.dev(), expected.ino()) {
        return Err(io::Error::other("it changed while it was being read"));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io::Error::other(format!(
            "it grew over the {MAX_FILE_BYTES}-byte limit while it was being read"
        )));
    }
    Ok(bytes)
}

/// Builds the crate to grade in `target`: `manifest` as its Cargo.toml
/// (the course's, see `workspace`), the course's build.rs from `pristine`
/// (its `exercises/<name>` folder), and the student's taken files in src/,
/// each exactly as it was when it was taken (else an error). A file is
/// written only when its content changed, and a file the student no
/// longer submits is removed: a rebuild then recompiles only crates whose
/// sources really changed.
pub fn lay_over(
    pristine: &Path,
    manifest: &str,
    taken: &[Taken],
    target: &Path,
) -> std::io::Result<()> {
    fs::create_dir_all(target.join("src"))?;
    write_if_changed(&target.join("Cargo.toml"), manifest.as_bytes())?;
    write_if_changed(
        &target.join("build.rs"),
        &fs::read(pristine.join("build.rs"))?,
    )?;
    for file in taken {
        let meta = fs::symlink_metadata(&file.source)?;
        let bytes = read_checked(&file.source, &meta)?;
        if <[u8; 32]>::from(Sha256::digest(&bytes)) != file.digest {
            return Err(io::Error::other(format!(
                "{} changed after it was found: grade again",
                file.relative.display()
            )));
        }
        write_if_changed(&target.join(&file.relative), &bytes)?;
    }
    for entry in fs::read_dir(target.join("src"))? {
        let path = entry?.path();
        if !taken.iter().any(|t| target.join(&t.relative) == path) {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` unless it already holds exactly them.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// A submission's reader that has seen every name under `root`.
    fn reader_of(root: &Path) -> Reader {
        let mut reader = Reader::submission();
        for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
            reader.count_name(&entry.path().symlink_metadata().unwrap());
        }
        reader
    }

    #[test]
    fn only_rust_sources_and_the_kernel_are_taken() {
        let dir = tempfile::tempdir().unwrap();
        let ex = dir.path();
        write(ex, "src/main.rs", "fn main() {}");
        write(ex, "src/helpers.rs", "");
        write(ex, "src/kernel.cu", "__global__ void k() {}");
        write(ex, "src/notes.txt", "");
        write(ex, "src/other.cu", "");
        write(ex, "src/nested/mod.rs", "");
        write(ex, "Cargo.toml", "[package]\nname = \"evil\"");
        write(ex, "build.rs", "fn main() { /* anything */ }");
        let (taken, refused) = select(ex);
        let names: Vec<_> = taken
            .iter()
            .map(|t| t.relative.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["src/helpers.rs", "src/kernel.cu", "src/main.rs"]);
        assert!(refused.is_empty(), "{refused:?}");
        assert_eq!(taken[2].bytes, 12);
        assert_eq!(
            taken[2].digest,
            <[u8; 32]>::from(Sha256::digest(b"fn main() {}"))
        );
    }

    #[test]
    fn the_course_builds_the_crate_not_the_student() {
        let student = tempfile::tempdir().unwrap();
        write(student.path(), "src/main.rs", "fn main() { /* student */ }");
        write(student.path(), "Cargo.toml", "[package]\nname = \"evil\"");
        write(
            student.path(),
            "build.rs",
            "fn main() { std::process::exit(1) }",
        );
        let pristine = tempfile::tempdir().unwrap();
        write(
            pristine.path(),
            "Cargo.toml",
            "[package]\nname = \"dot-sm\"",
        );
        write(pristine.path(), "build.rs", "fn main() { /* course */ }");
        let target = tempfile::tempdir().unwrap();

        let (taken, _) = select(student.path());
        let manifest = fs::read_to_string(pristine.path().join("Cargo.toml")).unwrap();
        lay_over(pristine.path(), &manifest, &taken, target.path()).unwrap();
        let read = |f: &str| fs::read_to_string(target.path().join(f)).unwrap();
        assert!(read("Cargo.toml").contains("dot-sm"));
        assert!(read("build.rs").contains("course"));
        assert!(read("src/main.rs").contains("student"));

        // A file changed after it was taken is not laid over.
        write(student.path(), "src/main.rs", "fn main() { /* later */ }");
        let err = lay_over(pristine.path(), &manifest, &taken, target.path()).unwrap_err();
        assert!(
            err.to_string().contains("changed after it was found"),
            "{err}"
        );
    }

    #[test]
    fn oversized_files_are_refused_with_their_size() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "src/main.rs",
            &"x".repeat(MAX_FILE_BYTES as usize + 1),
        );
        let (taken, refused) = select(dir.path());
        assert!(taken.is_empty());
        assert!(
            refused[0]
                .to_string()
                .contains("over the 262144-byte limit"),
            "{}",
            refused[0]
        );
    }

    #[test]
    fn an_exercise_over_its_limits_is_refused_unread_and_says_which() {
        let dir = tempfile::tempdir().unwrap();
        let many = dir.path().join("many");
        for i in 0..=MAX_FILES {
            write(&many, &format!("src/m{i}.rs"), "");
        }
        let mut reader = Reader::submission();
        let got = reader.select(&many, Path::new("many"));
        assert!(got.taken.is_empty());
        assert_eq!(got.refused.len(), 1);
        assert!(
            got.refused[0].to_string().contains("over the limit of 32"),
            "{}",
            got.refused[0]
        );
        let big = dir.path().join("big");
        let chunk = "x".repeat(MAX_FILE_BYTES as usize);
        for i in 0..=(MAX_EXERCISE_BYTES / MAX_FILE_BYTES) {
            write(&big, &format!("src/m{i}.rs"), &chunk);
        }
        let got = reader.select(&big, Path::new("big"));
        assert!(got.taken.is_empty());
        assert!(
            got.refused[0]
                .to_string()
                .contains("over the 1048576-byte limit for an exercise"),
            "{}",
            got.refused[0]
        );
    }

    #[test]
    fn a_submission_s_budget_is_spent_once_then_refused() {
        let dir = tempfile::tempdir().unwrap();
        let chunk = "x".repeat(MAX_FILE_BYTES as usize);
        let copies = MAX_SUBMISSION_BYTES / MAX_EXERCISE_BYTES;
        let mut reader = Reader::submission();
        for copy in 0..=copies {
            let folder = dir.path().join(format!("c{copy}"));
            for i in 0..MAX_EXERCISE_BYTES / MAX_FILE_BYTES {
                write(&folder, &format!("src/m{i}.rs"), &chunk);
            }
            let got = reader.select(&folder, Path::new("c"));
            if copy < copies {
                assert_eq!(got.taken.len(), 4, "{:?}", got.refused);
            } else {
                assert!(
                    got.refused[0]
                        .to_string()
                        .contains("at most 8388608 bytes of source from a submission"),
                    "{:?}",
                    got.refused
                );
            }
        }
    }

    #[test]
    #[cfg(unix)]
    fn links_are_refused_never_read() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.rs", "the instructor's key");
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "src/kernel.cu", "");
        std::os::unix::fs::symlink(
            outside.path().join("secret.rs"),
            dir.path().join("src/main.rs"),
        )
        .unwrap();
        let (taken, refused) = select(dir.path());
        assert_eq!(taken.len(), 1);
        assert!(matches!(&refused[0], Refusal::Link { path } if path.ends_with("src/main.rs")));

        let linked_src = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join("src"), linked_src.path().join("src")).unwrap();
        let (taken, refused) = select(linked_src.path());
        assert!(taken.is_empty());
        assert!(refused[0].to_string().contains("symbolic link"));
    }

    #[test]
    fn a_hard_link_out_of_the_submission_is_refused_and_one_inside_is_read_once() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.rs", "the instructor's key");
        let class = tempfile::tempdir().unwrap();
        let student = class.path().join("eve");
        write(&student, "dot-sm/src/kernel.cu", "");
        fs::hard_link(
            outside.path().join("secret.rs"),
            student.join("dot-sm/src/main.rs"),
        )
        .unwrap();
        let got = reader_of(&student).select(&student.join("dot-sm"), Path::new("dot-sm"));
        assert_eq!(got.taken.len(), 1);
        let said = got.refused[0].to_string();
        assert!(
            said.starts_with("dot-sm/src/main.rs is a hard link, one of 2 names"),
            "{said}"
        );
        assert!(!said.contains(&*outside.path().to_string_lossy()), "{said}");

        // Two copies linked to each other (cp -al): the student's own.
        let ann = class.path().join("ann");
        write(&ann, "dot-sm/src/main.rs", "fn main() {}");
        fs::create_dir_all(ann.join("backup/dot-sm/src")).unwrap();
        fs::hard_link(
            ann.join("dot-sm/src/main.rs"),
            ann.join("backup/dot-sm/src/main.rs"),
        )
        .unwrap();
        let mut reader = reader_of(&ann);
        let first = reader.select(&ann.join("dot-sm"), Path::new("dot-sm"));
        let second = reader.select(&ann.join("backup/dot-sm"), Path::new("backup/dot-sm"));
        assert!(first.refused.is_empty(), "{:?}", first.refused);
        assert!(first.same_as(&second));
        assert_eq!(reader.read.len(), 1, "one file, read once");
    }

    #[test]
    fn a_folder_without_src_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (_, refused) = select(dir.path());
        assert!(refused[0].to_string().contains("no src/ folder"));
    }
}
