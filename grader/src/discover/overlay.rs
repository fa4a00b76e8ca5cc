//! What is taken from a student's exercise, and laying it over a pristine
//! copy of the course's exercise crate. Only `src/*.rs` and `src/kernel.cu`
//! are taken: the crate's Cargo.toml and build.rs are always the course's,
//! so a submission cannot change how it is built. Links, and files over
//! the size limit, are refused with a reason and never read.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The largest student file taken: a long exercise is a few KiB.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// A student file to lay over the pristine crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// Where it goes in the crate, e.g. `src/main.rs`.
    pub relative: PathBuf,
    pub source: PathBuf,
}

/// A student file that was not taken, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Link { path: PathBuf },
    TooLarge { path: PathBuf, bytes: u64 },
    NoSource { folder: PathBuf },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Link { path } => {
                write!(
                    f,
                    "{} is a symbolic link: submissions must hold the files themselves",
                    path.display()
                )
            }
            Refusal::TooLarge { path, bytes } => write!(
                f,
                "{} is {bytes} bytes, over the {MAX_FILE_BYTES}-byte limit for a source file",
                path.display()
            ),
            Refusal::NoSource { folder } => {
                write!(
                    f,
                    "{} has no src/ folder of plain files to grade",
                    folder.display()
                )
            }
        }
    }
}

/// The student's files to take from `exercise` (a folder holding src/),
/// and the refusals. Looks at nothing but the entries of src/ itself.
pub fn select(exercise: &Path) -> (Vec<Taken>, Vec<Refusal>) {
    let src = exercise.join("src");
    let mut taken = Vec::new();
    let mut refused = Vec::new();
    let is_plain_dir = fs::symlink_metadata(&src).is_ok_and(|m| m.is_dir());
    if !is_plain_dir {
        let refusal = if fs::symlink_metadata(&src).is_ok_and(|m| m.file_type().is_symlink()) {
            Refusal::Link { path: src }
        } else {
            Refusal::NoSource {
                folder: exercise.to_owned(),
            }
        };
        return (taken, vec![refusal]);
    }
    let Ok(entries) = fs::read_dir(&src) else {
        return (
            taken,
            vec![Refusal::NoSource {
                folder: exercise.to_owned(),
            }],
        );
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".rs") || name == "kernel.cu") {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            refused.push(Refusal::Link { path });
        } else if !meta.is_file() {
            continue;
        } else if meta.len() > MAX_FILE_BYTES {
            refused.push(Refusal::TooLarge {
                path,
                bytes: meta.len(),
            });
        } else {
            taken.push(Taken {
                relative: Path::new("src").join(&name),
                source: path,
            });
        }
    }
    (taken, refused)
}

/// Builds the crate to grade in `target`: `manifest` as its Cargo.toml
/// (the course's, see `workspace`), the course's build.rs from `pristine`
/// (its `exercises/<name>` folder), and the student's taken files in src/.
/// A file is written only when its content changed, and a file the student
/// no longer submits is removed: a rebuild then recompiles only crates
/// whose sources really changed.
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
        write_if_changed(&target.join(&file.relative), &fs::read(&file.source)?)?;
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
    fn a_folder_without_src_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (_, refused) = select(dir.path());
        assert!(refused[0].to_string().contains("no src/ folder"));
    }
}
