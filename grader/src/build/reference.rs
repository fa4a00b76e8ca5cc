//! The course's trusted host code in a bundle: the solution binaries, built
//! once per class, and each student's PTX kept beside them. A kernel's
//! points come from running the student's PTX through the solution binary
//! (which loads the file `kernels::KERNEL_PTX_ENV` names instead of its
//! own), so host code the student wrote cannot earn them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::build::compile::Builder;
use crate::build::digest;
use crate::build::workspace::Entry;
use crate::confine::runner::{self, Ended, Limits};
use crate::discover::overlay;
use crate::error::{Error, Result};

/// Where the bundle keeps the solution binaries.
pub const REFERENCE_DIR: &str = "reference";
/// Where the bundle keeps each student's PTX.
pub const PTX_DIR: &str = "ptx";

/// A file the bundle holds and the sha256 it was written with: a run
/// checks it first, so a file changed since is refused.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Kept {
    /// Relative to the bundle.
    pub path: PathBuf,
    pub digest: String,
}

impl Kept {
    /// The file's path, when it is still what was written; else how it
    /// changed.
    pub fn check(&self, bundle: &Path) -> std::result::Result<PathBuf, Changed> {
        let path = bundle.join(&self.path);
        let found = digest::file(&path).ok();
        if found.as_deref() == Some(self.digest.as_str()) {
            return Ok(path);
        }
        Err(Changed {
            path: self.path.clone(),
            expected: self.digest.clone(),
            found,
        })
    }
}

/// A bundle file that is not the one written (changed since, by a run or
/// by hand): it is refused, never run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Changed {
    /// Relative to the bundle.
    pub path: PathBuf,
    /// The sha256 it was written with.
    pub expected: String,
    /// Its sha256 now; None when it cannot be read.
    pub found: Option<String>,
}

/// One exercise's trusted host code: the solution's binary, and the PTX it
/// embeds (kept to compare a student's kernels' signatures with).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Reference {
    pub binary: Kept,
    pub ptx: Kept,
}

/// Copies `from` to `bundle/folder/name` (a fresh, read-only file, never
/// written through an existing one) and returns it with its digest.
pub fn keep(from: &Path, bundle: &Path, folder: &str, name: &str) -> Result<Kept> {
    let dir = bundle.join(folder);
    fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let copy = dir.join(name);
    if copy.exists() {
        // Kept read-only: made writable only to be replaced.
        let _ = fs::set_permissions(&copy, fs::Permissions::from_mode(0o644));
        let _ = fs::remove_file(&copy);
    }
    fs::copy(from, &copy).map_err(Error::io(from))?;
    let executable = fs::metadata(from).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    let mode = if executable { 0o555 } else { 0o444 };
    fs::set_permissions(&copy, fs::Permissions::from_mode(mode)).map_err(Error::io(&copy))?;
    Ok(Kept {
        path: Path::new(folder).join(name),
        digest: digest::file(&copy).map_err(Error::io(&copy))?,
    })
}

/// Removes the files in `bundle/folder` that `wanted` does not name.
pub fn sweep(bundle: &Path, folder: &str, wanted: &BTreeSet<String>) -> Result<()> {
    let dir = bundle.join(folder);
    for entry in fs::read_dir(&dir).into_iter().flatten() {
        let entry = entry.map_err(Error::io(&dir))?;
        if !wanted.contains(&*entry.file_name().to_string_lossy()) {
            let _ = fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o644));
            fs::remove_file(entry.path()).map_err(Error::io(&entry.path()))?;
        }
    }
    Ok(())
}

/// Builds the course's solutions of `chosen` (the course's own files,
/// never a student's) like one more student, in `root/reference` (a
/// folder no other grader builds in at the same time), and
/// keeps each binary as `bundle/reference/<exercise>`.
pub fn build(
    builder: &Builder,
    course: &Path,
    chosen: &[&str],
    root: &Path,
    bundle: &Path,
) -> Result<BTreeMap<String, Reference>> {
    let taken: Vec<Vec<overlay::Taken>> = chosen
        .iter()
        .map(|e| overlay::select(&course.join("solutions").join(e)).0)
        .collect();
    let entries: Vec<Entry> = chosen
        .iter()
        .zip(&taken)
        .map(|(exercise, taken)| Entry {
            student: "reference",
            exercise,
            taken,
        })
        .collect();
    let built = builder.build_student(&root.join(REFERENCE_DIR), &entries)?;
    let mut reference = BTreeMap::new();
    for result in built {
        let (Some(binary), Some(ptx)) = (&result.binary, &result.ptx) else {
            return Err(Error::Tool(format!(
                "the course's solution of {} did not build: {}",
                result.package,
                result
                    .errors
                    .as_deref()
                    .unwrap_or("no binary or PTX")
                    .trim()
            )));
        };
        let binary = keep(binary, bundle, REFERENCE_DIR, &result.package)?;
        let ptx = keep(
            ptx,
            bundle,
            REFERENCE_DIR,
            &format!("{}.ptx", result.package),
        )?;
        reference.insert(result.package, Reference { binary, ptx });
    }
    Ok(reference)
}

/// The folder of the bundle that holds the broker and its client, and
/// their file names there (the client under the soname a binary loads
/// the driver by, so that its folder can go first on the library path).
pub const BROKER_DIR: &str = "broker";
pub const BROKER: &str = "cuda-course-broker";
pub const BROKER_CLIENT: &str = "libcuda.so.1";

/// The broker and its client, built from the course (trusted).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct BrokerFiles {
    /// `cuda-course-broker`.
    pub broker: Kept,
    /// The client `libcuda.so.1` every student's binary loads.
    pub client: Kept,
}

/// Builds the course's broker and its client (`broker/`, `broker-client/`,
/// trusted: the course's own code) in `root/broker` (cargo locks it
/// against other graders) and keeps them in the bundle's [`BROKER_DIR`].
pub fn build_broker(course: &Path, root: &Path, bundle: &Path) -> Result<BrokerFiles> {
    let target = root.join("broker");
    let mut command = crate::build::compile::course_cargo(course, &target)?;
    command.args([
        "build",
        "--release",
        "--offline",
        "--quiet",
        "-p",
        "broker",
        "-p",
        "broker-client",
    ]);
    let outcome = runner::run_command(
        command,
        Limits {
            // Trusted; cold, it compiles clap and the PTX parser too.
            timeout: Duration::from_secs(1800),
            max_output: 1 << 20,
        },
    );
    if outcome.ended != Ended::Exited(0) {
        return Err(Error::Tool(format!(
            "building the course's GPU broker failed ({:?}): {}",
            outcome.ended,
            outcome.stderr.trim()
        )));
    }
    let release = target.join("release");
    Ok(BrokerFiles {
        broker: keep(&release.join(BROKER), bundle, BROKER_DIR, BROKER)?,
        client: keep(
            &release.join("libcuda_course_broker_client.so"),
            bundle,
            BROKER_DIR,
            BROKER_CLIENT,
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_file_is_read_only_and_refused_once_changed() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("kernel.ptx");
        fs::write(&source, ".entry vecadd()\n{\n}\n").unwrap();
        let bundle = dir.path().join("bundle");
        let kept = keep(&source, &bundle, PTX_DIR, "vecadd-anyN--ann.ptx").unwrap();
        assert_eq!(kept.path, Path::new("ptx/vecadd-anyN--ann.ptx"));
        let path = kept.check(&bundle).unwrap();
        assert!(fs::metadata(&path).unwrap().permissions().readonly());
        // Kept again over itself: replaced, not refused.
        let again = keep(&source, &bundle, PTX_DIR, "vecadd-anyN--ann.ptx").unwrap();
        assert_eq!(again, kept);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(&path, ".entry vecadd()\n{\nret;\n}\n").unwrap();
        let refused = kept.check(&bundle).unwrap_err();
        assert_eq!(refused.path, kept.path);
        assert_eq!(refused.expected, kept.digest);
        assert_eq!(refused.found, Some(digest::file(&path).unwrap()));
    }

    #[test]
    fn sweeping_keeps_only_what_is_wanted() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.ptx", "b.ptx"] {
            let source = dir.path().join(name);
            fs::write(&source, name).unwrap();
            keep(&source, dir.path(), PTX_DIR, name).unwrap();
        }
        sweep(dir.path(), PTX_DIR, &BTreeSet::from(["b.ptx".to_owned()])).unwrap();
        let left: Vec<_> = fs::read_dir(dir.path().join(PTX_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["b.ptx"]);
    }
}
