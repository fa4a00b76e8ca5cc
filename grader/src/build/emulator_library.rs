//! The CPU emulator's `libcuda.so.1` in a bundle: built by `grader build`
//! from the course's `emulator` crate (the course's code, like the
//! dependencies, never a student's), copied to `BUNDLE/emulator/` and
//! digested, so that `grader run --emulate` needs no cargo and runs only
//! the library that was built.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::build::digest;
use crate::confine::sandbox::DRIVER_LIBRARY as LIBRARY_NAME;
use crate::error::{Error, Result};

/// The bundle's folder holding the emulator: its only file is the driver
/// library under its soname, so the folder goes first on a run's library
/// path.
pub const LIBRARY_DIR: &str = "emulator";

/// The library as bundle.json records it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Library {
    /// Relative to the bundle: `emulator/libcuda.so.1`.
    pub path: PathBuf,
    /// Its sha256, as built.
    pub digest: String,
}

/// Builds the course's emulator (release, offline, with the course's
/// `Cargo.lock`) in `target_root`/emulator and copies it into the bundle.
pub fn build(course: &Path, target_root: &Path, bundle: &Path) -> Result<Library> {
    let target = target_root.join("emulator");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args(["build", "--release", "--offline", "--locked", "--quiet"])
        .args(["-p", "emulator", "--lib", "--target-dir"])
        .arg(&target)
        .arg("--manifest-path")
        .arg(course.join("Cargo.toml"))
        .current_dir(course)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| Error::Tool(format!("cargo could not be started: {err}")))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(Error::Tool(format!(
            "building the course's emulator failed: {}",
            said.lines()
                .find(|l| l.contains("error"))
                .unwrap_or(said.trim())
        )));
    }
    let relative = Path::new(LIBRARY_DIR).join(LIBRARY_NAME);
    let copy = bundle.join(&relative);
    let io = Error::io(&copy);
    std::fs::create_dir_all(bundle.join(LIBRARY_DIR)).map_err(Error::io(bundle))?;
    // A fresh file, never written through an existing one.
    let _ = std::fs::remove_file(&copy);
    std::fs::copy(target.join("release").join("libemulator.so"), &copy)
        .map_err(Error::io(&copy))?;
    Ok(Library {
        digest: digest::file(&copy).map_err(io)?,
        path: relative,
    })
}

/// The bundle's library, checked against its digest; an error says why a
/// bundle cannot be graded on the emulator.
pub fn verified(bundle_dir: &Path, library: Option<&Library>) -> Result<PathBuf> {
    let library = library.ok_or_else(|| {
        Error::Bundle(format!(
            "the bundle {} has no CPU emulator library; build it again with `grader build` \
             of this grader, or grade on a GPU with --no-emulate",
            bundle_dir.display()
        ))
    })?;
    let path = bundle_dir.join(&library.path);
    let found = digest::file(&path).ok();
    if found.as_deref() != Some(library.digest.as_str()) {
        return Err(Error::Bundle(format!(
            "{} is not the emulator library that was built (sha256 {} expected, {} found); \
             build the bundle again",
            path.display(),
            library.digest,
            found.as_deref().unwrap_or("unreadable")
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_or_missing_library_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let err = verified(dir.path(), None).unwrap_err();
        assert!(
            matches!(&err, Error::Bundle(why) if why.contains("no CPU emulator library")),
            "{err}"
        );

        let path = dir.path().join(LIBRARY_DIR).join(LIBRARY_NAME);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"the library").unwrap();
        let library = Library {
            path: Path::new(LIBRARY_DIR).join(LIBRARY_NAME),
            digest: digest::file(&path).unwrap(),
        };
        assert_eq!(verified(dir.path(), Some(&library)).unwrap(), path);
        std::fs::write(&path, b"another library").unwrap();
        let err = verified(dir.path(), Some(&library)).unwrap_err();
        assert!(
            matches!(&err, Error::Bundle(why) if why.contains("is not the emulator library that was built")),
            "{err}"
        );
    }
}
