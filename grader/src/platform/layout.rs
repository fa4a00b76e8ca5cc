//! Where an installed autograder keeps what: under a platform root (`/`
//! in the platform's container, a scratch folder in the tests), in
//! `opt/cuda-course-autograder/`:
//!
//! - `private/` (root's alone, 0700): the packaging settings (a fixed seed),
//!   the trusted bundle (the course's solution binaries, broker and
//!   emulator, built from the whole course at setup) and each grading's
//!   results;
//! - `run/` (root's, 0711): each grading's run bundle, whose files the
//!   student user may execute or load but not list or read (`stages`);
//! - `public/` (open to all): the public course (the course without its
//!   solutions, grader or hidden tests, the stubs standing in for the
//!   solutions: `public`) and the grader binary;
//! - `work/` (the student user's): the dependencies' build, the warm
//!   bundle the student's build goes into, cargo's home, each upload.
//!
//! And the one thing the student's code could use against the next
//! grading, killing every process of the student user, is here too.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable that names the platform root (default `/`).
pub const ROOT_ENV: &str = "CUDA_COURSE_AUTOGRADER_ROOT";

/// The install, relative to the platform root.
pub const HOME: &str = "opt/cuda-course-autograder";

/// The variables a grading's builds and runs take from the setup's
/// environment (the toolchain's and the CUDA toolkit's places), kept in
/// `public/environment.json`.
pub const KEPT_VARIABLES: [&str; 6] = [
    "PATH",
    "CUDA_PATH",
    "CUDA_LIBRARY_PATH",
    "CUDA_COURSE_ARCH",
    "NVCC_CCBIN",
    "LANG",
];

#[derive(Clone, Debug)]
pub struct Layout {
    /// The platform root.
    pub root: PathBuf,
}

impl Layout {
    /// The platform root `CUDA_COURSE_AUTOGRADER_ROOT` names, else `/`.
    pub fn from_env() -> Layout {
        let root = std::env::var_os(ROOT_ENV).map_or_else(|| PathBuf::from("/"), PathBuf::from);
        Layout { root }
    }

    pub fn home(&self) -> PathBuf {
        self.root.join(HOME)
    }
    pub fn private(&self) -> PathBuf {
        self.home().join("private")
    }
    pub fn trusted_bundle(&self) -> PathBuf {
        self.private().join("trusted")
    }
    /// The bundle a grading runs: root's, but open to the student user
    /// for what its runs execute (`stages::assemble`), so not in private/.
    pub fn run_bundle(&self) -> PathBuf {
        self.home().join("run")
    }
    pub fn public(&self) -> PathBuf {
        self.home().join("public")
    }
    pub fn public_course(&self) -> PathBuf {
        self.public().join("course")
    }
    pub fn grader(&self) -> PathBuf {
        self.public().join("bin").join("grader")
    }
    pub fn work(&self) -> PathBuf {
        self.home().join("work")
    }
    /// Where the dependencies are built once, for every student's build.
    pub fn deps(&self) -> PathBuf {
        self.work().join("deps")
    }
    /// The bundle the student's build goes into, warm from the setup: one
    /// for builds in bubblewrap and one for builds without, whose build
    /// folders differ (cargo sees other paths) though the grader keys them
    /// alike.
    pub fn student_bundle(&self, sandboxed: bool) -> PathBuf {
        self.work().join(if sandboxed {
            "bundle"
        } else {
            "bundle-unsandboxed"
        })
    }
    /// Cargo's home (the downloaded crates) for every build.
    pub fn cargo_home(&self) -> PathBuf {
        self.work().join("cargo-home")
    }
    /// The student user's home and temporary folder.
    pub fn student_home(&self) -> PathBuf {
        self.work().join("home")
    }
    /// The upload, read into a class of one.
    pub fn class(&self) -> PathBuf {
        self.work().join("class")
    }
    /// A platform path (`autograder/submission`) under the root.
    pub fn at(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// The setup's environment, for a grading's builds and runs.
    pub fn environment(&self) -> Result<BTreeMap<String, String>> {
        let path = self.public().join("environment.json");
        let text = fs::read_to_string(&path).map_err(Error::io(&path))?;
        serde_json::from_str(&text).map_err(|err| Error::Malformed {
            path,
            why: err.to_string(),
        })
    }

    /// Keeps this process's [`KEPT_VARIABLES`] for the gradings.
    pub fn keep_environment(&self) -> Result<()> {
        let kept: BTreeMap<String, String> = KEPT_VARIABLES
            .iter()
            .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
            .collect();
        let path = self.public().join("environment.json");
        let text = serde_json::to_string_pretty(&kept).expect("variables are JSON");
        fs::write(&path, text).map_err(Error::io(&path))
    }
}

/// Makes `path` and everything under it `uid`'s (links themselves, never
/// what they point to).
pub fn give(path: &Path, uid: u32) -> Result<()> {
    for entry in walkdir::WalkDir::new(path).follow_links(false) {
        let entry = entry.map_err(|err| Error::Io {
            path: err.path().unwrap_or(path).to_owned(),
            source: err.into(),
        })?;
        std::os::unix::fs::lchown(entry.path(), Some(uid), Some(uid))
            .map_err(Error::io(entry.path()))?;
    }
    Ok(())
}

/// Sets `path`'s permission bits.
pub fn mode(path: &Path, bits: u32) -> Result<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(bits)).map_err(Error::io(path))
}

/// Kills every process whose real or effective uid is `uid`, until none
/// is left (a process may fork while the others die): what a student's
/// code `setsid`s away outlives its run's process group, and must not
/// outlive the grading. Returns how many were killed.
pub fn kill_user(uid: u32) -> usize {
    let mut killed = 0;
    for _ in 0..100 {
        let found = processes_of(uid);
        if found.is_empty() {
            break;
        }
        for pid in found {
            // SAFETY: kill sends a signal to a process id; no memory is
            // involved.
            if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    killed
}

/// The live processes whose real or effective uid is `uid`.
fn processes_of(uid: u32) -> Vec<libc::pid_t> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let zombie = status
                .lines()
                .any(|l| l.starts_with("State:") && l.contains('Z'));
            let uids = status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .unwrap_or_default();
            let mut ids = uids.split_whitespace().take(2).map(|n| n.parse::<u32>());
            !zombie && ids.any(|id| id == Ok(uid))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn every_process_of_the_user_is_killed_and_no_other() {
        // SAFETY: geteuid only reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: only root can start processes as another user");
            return;
        }
        let uid = 61_917;
        // A process that leaves a daemon behind, as a student's could.
        let status = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 300 & sleep 300 & exit 0"])
            .uid(uid)
            .gid(uid)
            .status()
            .unwrap();
        assert!(status.success());
        let mine = std::process::Command::new("sleep")
            .arg("300")
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(processes_of(uid).len(), 2);
        assert_eq!(kill_user(uid), 2);
        assert!(processes_of(uid).is_empty());
        let mut mine = mine;
        assert!(
            mine.try_wait().unwrap().is_none(),
            "another user's process was killed"
        );
        mine.kill().unwrap();
        mine.wait().unwrap();
    }
}
