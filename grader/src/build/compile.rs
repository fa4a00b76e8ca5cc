//! Builds the class, one student at a time, each in a sandbox of their own
//! (see `sandbox`): their crates and build folder writable, the course's
//! `kernels` and `ptx` crates, the toolchain and the registry read-only, no network,
//! a timeout and a memory cap, so one student can neither read another's
//! work nor stall or break their build. The dependencies (cust, clap,
//! serde, `kernels`) are compiled once per class, by building the course's
//! own exercise crates, and every student's build folder starts as hard
//! links of them, at the very paths they were built at, so that cargo finds
//! them fresh and compiles only the student's crates.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::build::relative;
use crate::build::sizes;
use crate::build::workspace::{self, Entry, Member};
use crate::confine::runner::{self, Ended, Job, Limits};
use crate::confine::sandbox::{self, BuildMounts, Isolation, Sandbox};
use crate::discover::overlay::{self, Taken};
use crate::error::{Error, Result};

/// One crate's build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    pub package: String,
    pub binary: Option<PathBuf>,
    /// The kernel's PTX, for inspection: the build script's OUT_DIR.
    pub ptx: Option<PathBuf>,
    /// What cargo said when the crate was built alone, if it failed.
    pub errors: Option<String>,
}

/// The build's output kept: cargo's JSON messages for eight crates are a
/// few hundred KiB.
const MAX_BUILD_OUTPUT: usize = 16 << 20;

/// How the class is built.
pub struct Builder<'a> {
    pub isolation: &'a Isolation,
    /// The course checkout (its root Cargo.toml's folder).
    pub course: PathBuf,
    /// Where the dependencies are kept between batches.
    pub root: &'a Path,
    pub jobs: Option<usize>,
    /// How long one student's build may take.
    pub timeout: Duration,
}

/// `built` as kept: refused where its binary passes [`sizes::MAX_BINARY`].
fn within_sizes(built: Built) -> Built {
    let too_large = (built.binary.iter()).find_map(|binary| sizes::binary_refused(binary));
    match too_large {
        Some(why) => refused(built, why),
        None => built,
    }
}

/// `built` refused for `why`: nothing of it goes into the bundle.
fn refused(built: Built, why: String) -> Built {
    Built {
        binary: None,
        ptx: None,
        errors: Some(why),
        ..built
    }
}

/// Where a build's workspace and target folder are, on this machine and
/// as cargo sees them.
struct Folders {
    workspace: PathBuf,
    target: PathBuf,
}

impl Builder<'_> {
    /// The folder of the dependencies, built once per class.
    fn deps(&self) -> Folders {
        let name = if self.isolation.is_sandboxed() {
            "deps"
        } else {
            "deps-unsandboxed"
        };
        self.folders(&self.root.join(name))
    }

    fn folders(&self, dir: &Path) -> Folders {
        Folders {
            workspace: dir.join("workspace"),
            target: dir.join("target"),
        }
    }

    /// The course as the workspace manifest names it.
    fn course_seen(&self) -> PathBuf {
        match self.isolation {
            Isolation::Sandboxed(_) => PathBuf::from(sandbox::COURSE_DIR),
            Isolation::Unsandboxed => self.course.clone(),
        }
    }

    /// Builds the course's own exercise crates once, for their
    /// dependencies; later calls find them built. Trusted code, but built
    /// in the same sandbox as the students, so paths match.
    pub fn prepare(&self) -> Result<()> {
        let deps = self.deps();
        // The course's stubs: they build, and need what every student's
        // crate needs.
        let stubs: Vec<Vec<Taken>> = kernels::catalogue::EXERCISES
            .iter()
            .map(|e| overlay::select(&self.course.join("exercises").join(e.name)).0)
            .collect();
        let entries: Vec<Entry> = kernels::catalogue::EXERCISES
            .iter()
            .zip(&stubs)
            .map(|(e, taken)| Entry {
                student: "course",
                exercise: e.name,
                taken,
            })
            .collect();
        workspace::create(&self.course, &self.course_seen(), &deps.workspace, &entries)
            .map_err(Error::io(&deps.workspace))?;
        fs::create_dir_all(&deps.target).map_err(Error::io(&deps.target))?;
        // One grader at a time prepares (tests build classes in parallel).
        let lock_path = self.root.join("deps.lock");
        let lock = fs::File::create(&lock_path).map_err(Error::io(&lock_path))?;
        // SAFETY: flock on a descriptor we own; released when it closes.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(Error::io(&lock_path)(io::Error::last_os_error()));
        }
        let ready = deps.target.join("grader-ready");
        let key = self.key()?;
        if fs::read_to_string(&ready).is_ok_and(|k| k == key) {
            return Ok(());
        }
        // The course or the toolchain changed (or a first build): start
        // over. Students' folders linked from the old ones then rebuild
        // what changed, as new files beside the old.
        fs::remove_dir_all(&deps.target).map_err(Error::io(&deps.target))?;
        fs::create_dir_all(&deps.target).map_err(Error::io(&deps.target))?;
        let mut args = vec!["build", "--release", "--offline", "--bins", "--quiet"];
        let jobs = self.jobs.map(|j| format!("--jobs={j}"));
        args.extend(jobs.as_deref());
        let outcome = runner::run_command(
            self.cargo(&deps, &args)?,
            Limits {
                // Trusted, and cold it takes minutes on two cores.
                timeout: Duration::from_secs(3600),
                max_output: MAX_BUILD_OUTPUT,
            },
        );
        if outcome.ended != Ended::Exited(0) {
            return Err(Error::Tool(format!(
                "building the course's own crates for their dependencies failed ({:?}): {}",
                outcome.ended,
                outcome.stderr.trim()
            )));
        }
        // Read-only: linked into every student's folder, where no build
        // may change them for the next student.
        for entry in walkdir::WalkDir::new(&deps.target) {
            let entry = entry.map_err(|err| Error::Io {
                path: err.path().unwrap_or(&deps.target).to_owned(),
                source: err.into(),
            })?;
            if entry.file_type().is_file() {
                fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o444))
                    .map_err(Error::io(entry.path()))?;
            }
        }
        fs::write(&ready, key).map_err(Error::io(&ready))
    }

    /// What the dependencies depend on: the toolchain, the course's
    /// manifests and lock, and its `kernels` and `ptx` crates' files, by
    /// size and modification time.
    fn key(&self) -> Result<String> {
        let toolchain = Toolchain::find(&self.course)?;
        let mut key = format!("{}\n", toolchain.sysroot.display());
        let files = ["Cargo.toml", "Cargo.lock", ".cargo/config.toml"]
            .iter()
            .map(|f| self.course.join(f))
            .chain([toolchain.sysroot.join("bin/rustc")])
            .chain(
                ["kernels", "ptx"]
                    .into_iter()
                    .flat_map(|crate_| {
                        walkdir::WalkDir::new(self.course.join(crate_)).sort_by_file_name()
                    })
                    .flatten()
                    .map(|e| e.into_path()),
            );
        for file in files {
            let metadata = fs::metadata(&file).map_err(Error::io(&file))?;
            let modified = metadata
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .unwrap_or_default();
            key += &format!(
                "{} {} {}\n",
                file.display(),
                metadata.len(),
                modified.as_nanos()
            );
        }
        for (name, value) in passed_env() {
            key += &format!("{name}={}\n", value.to_string_lossy());
        }
        Ok(key)
    }

    /// Builds one student's `entries` in `dir` (their own workspace and
    /// target folder, kept between batches: a rebuild compiles only what
    /// changed).
    pub fn build_student(&self, dir: &Path, entries: &[Entry]) -> Result<Vec<Built>> {
        // A crate without main.rs would stop cargo for all the student's
        // crates: it is not built, and says why.
        let has_main = |entry: &Entry| {
            entry
                .taken
                .iter()
                .any(|t| t.relative == Path::new("src/main.rs"))
        };
        let buildable: Vec<Entry> = entries.iter().copied().filter(has_main).collect();
        let mut built = self.build_crates(dir, &buildable)?;
        for entry in entries.iter().filter(|e| !has_main(e)) {
            built.push(Built {
                package: entry.exercise.to_owned(),
                binary: None,
                ptx: None,
                errors: Some(format!(
                    "{} has no src/main.rs: there is nothing to build",
                    entry.exercise
                )),
            });
        }
        // In the order asked.
        built.sort_by_key(|b| entries.iter().position(|e| e.exercise == b.package));
        Ok(built)
    }

    fn build_crates(&self, dir: &Path, entries: &[Entry]) -> Result<Vec<Built>> {
        let folders = self.folders(dir);
        let members = workspace::create(
            &self.course,
            &self.course_seen(),
            &folders.workspace,
            entries,
        )
        .map_err(Error::io(&folders.workspace))?;
        if members.is_empty() {
            return Ok(vec![]);
        }
        // Linked from the dependencies as they are now: after they were
        // built again (the course changed), a crate keeps its hash but not
        // its contents, and the old read-only files would stop cargo.
        let deps = self.deps();
        let ready_path = deps.target.join("grader-ready");
        let ready = fs::read(&ready_path).map_err(Error::io(&ready_path))?;
        let linked = folders.target.join("grader-linked");
        if fs::read(&linked).ok().as_ref() != Some(&ready) {
            if folders.target.exists() {
                fs::remove_dir_all(&folders.target).map_err(Error::io(&folders.target))?;
            }
            link_tree(&deps.target, &folders.target, &members)
                .map_err(Error::io(&folders.target))?;
            fs::write(&linked, &ready).map_err(Error::io(&linked))?;
        }
        let limits = Limits {
            timeout: self.timeout,
            max_output: MAX_BUILD_OUTPUT,
        };
        let jobs = self.jobs.map(|j| format!("--jobs={j}"));
        let mut args = vec![
            "build",
            "--release",
            "--offline",
            "--bins",
            "--keep-going",
            "--message-format=json",
        ];
        args.extend(jobs.as_deref());
        let all = runner::run_command(self.cargo(&folders, &args)?, limits);
        let found = artifacts(&all.stdout);
        let timed_out = all.ended == Ended::TimedOut;
        let mut built = Vec::new();
        let host = |seen: &PathBuf| self.on_host(&folders, seen);
        let ptx_of = |package: &str| {
            found
                .out_dirs
                .get(package)
                .map(|dir| host(dir).join("kernel.ptx"))
                .filter(|p| p.is_file())
        };
        for member in &members {
            let binary = found.binaries.get(&member.package).map(host);
            let ptx = ptx_of(&member.package);
            let errors = if binary.is_some() {
                None
            } else if timed_out {
                Some(format!(
                    "the build took longer than {} s and was stopped; \
                     is there a loop the compiler evaluates (a const fn)?",
                    self.timeout.as_secs()
                ))
            } else {
                // Alone, so its stderr holds its own errors only; the rest
                // is already built.
                let mut alone = args[..4].to_vec();
                alone.extend(["-p", &member.package]);
                let outcome = runner::run_command(self.cargo(&folders, &alone)?, limits);
                Some(match outcome.ended {
                    Ended::TimedOut => format!(
                        "the build took longer than {} s and was stopped",
                        self.timeout.as_secs()
                    ),
                    _ => sizes::errors(&self.shown(&folders, &outcome.stderr)),
                })
            };
            built.push(within_sizes(Built {
                package: member.exercise.clone(),
                binary,
                ptx,
                errors,
            }));
        }
        // The student's folder, all their builds: refused whole past its
        // limit (`build::sizes`).
        if let Some(why) = sizes::folder_refused(&folders.target) {
            for build in &mut built {
                *build = refused(build.clone(), why.clone());
            }
        }
        Ok(built)
    }

    /// A build's messages with its folders named, not shown: the
    /// instructor's paths (without the sandbox) and the sandbox's alike.
    fn shown(&self, folders: &Folders, text: &str) -> String {
        let toolchain = Toolchain::find(&self.course).ok();
        let mut named: Vec<(&Path, &str)> = vec![
            (&folders.workspace, ""),
            (Path::new(sandbox::WORKSPACE_DIR), ""),
            (&folders.target, "target"),
            (Path::new(sandbox::TARGET_DIR), "target"),
            (self.root, "target"),
            (&self.course, "course"),
            (Path::new(sandbox::COURSE_DIR), "course"),
            (Path::new(sandbox::TOOLCHAIN_DIR), "toolchain"),
            (Path::new(sandbox::CARGO_HOME_DIR), "cargo"),
        ];
        if let Some(toolchain) = &toolchain {
            named.push((&toolchain.sysroot, "toolchain"));
            named.push((&toolchain.registry, "cargo/registry"));
        }
        relative::relative(text, &named)
    }

    /// A path cargo reported, on this machine.
    fn on_host(&self, folders: &Folders, seen: &Path) -> PathBuf {
        match seen.strip_prefix(sandbox::TARGET_DIR) {
            Ok(rest) if self.isolation.is_sandboxed() => folders.target.join(rest),
            _ => seen.to_owned(),
        }
    }

    /// cargo with `args` in `folders`: in the sandbox, or plain.
    fn cargo(&self, folders: &Folders, args: &[&str]) -> Result<Job> {
        let toolchain = Toolchain::find(&self.course)?;
        Ok(match self.isolation {
            Isolation::Sandboxed(sandbox) => self.sandboxed(sandbox, &toolchain, folders, args),
            Isolation::Unsandboxed => {
                let mut command = Command::new(toolchain.sysroot.join("bin/cargo"));
                command
                    .current_dir(&folders.workspace)
                    .env("CARGO_TARGET_DIR", &folders.target)
                    .env("RUSTC", toolchain.sysroot.join("bin/rustc"))
                    .args(args);
                Job::from(command)
            }
        })
    }

    fn sandboxed(
        &self,
        sandbox: &Sandbox,
        toolchain: &Toolchain,
        folders: &Folders,
        args: &[&str],
    ) -> Job {
        sandbox.build_command(
            &BuildMounts {
                course: &self.course,
                sysroot: &toolchain.sysroot,
                registry: &toolchain.registry,
                workspace: &folders.workspace,
                target: &folders.target,
                env: &passed_env(),
            },
            args,
        )
    }
}

/// Variables a build takes from the grader's environment: the toolkit's
/// location and the architecture. Nothing else of the instructor's
/// environment reaches a build (`option_env!` sees nothing).
const BUILD_ENV: [&str; 6] = [
    "CUDA_COURSE_ARCH",
    "CUDA_PATH",
    "CUDA_LIBRARY_PATH",
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "NVCC_CCBIN",
];

fn passed_env() -> Vec<(String, OsString)> {
    BUILD_ENV
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|v| ((*name).to_owned(), v)))
        .collect()
}

/// cargo of the course's toolchain, in the course's folder, building into
/// `target`: for the course's own crates that need no sandbox (the
/// broker and its client: trusted, and their path does not matter).
pub fn course_cargo(course: &Path, target: &Path) -> Result<Command> {
    let toolchain = Toolchain::find(course)?;
    let mut command = Command::new(toolchain.sysroot.join("bin/cargo"));
    command
        .current_dir(course)
        .env("CARGO_TARGET_DIR", target)
        .env("RUSTC", toolchain.sysroot.join("bin/rustc"));
    Ok(command)
}

/// The rust toolchain cargo would use for the course, and cargo's registry.
struct Toolchain {
    sysroot: PathBuf,
    registry: PathBuf,
}

impl Toolchain {
    fn find(course: &Path) -> Result<Toolchain> {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let output = Command::new(&rustc)
            .args(["--print", "sysroot"])
            .current_dir(course)
            .output()
            .map_err(|err| Error::Tool(format!("rustc could not be started: {err}")))?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        if !output.status.success() || !sysroot.join("bin/cargo").is_file() {
            return Err(Error::Tool(format!(
                "no cargo beside rustc's sysroot {}",
                sysroot.display()
            )));
        }
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
            .ok_or_else(|| Error::Tool("neither CARGO_HOME nor HOME is set".into()))?;
        Ok(Toolchain {
            sysroot,
            registry: cargo_home.join("registry"),
        })
    }
}

/// Recreates `from` at `to`: folders made, files hard-linked, except what
/// cargo builds for `members` (the student's crates must compile) and its
/// lock and caches (it writes those).
fn link_tree(from: &Path, to: &Path, members: &[Member]) -> io::Result<()> {
    let theirs = |name: &str| {
        members.iter().any(|m| {
            let underscored = m.exercise.replace('-', "_");
            name == m.exercise
                || name.starts_with(&format!("{}-", m.exercise))
                || name.starts_with(&format!("{}.", m.exercise))
                || name.starts_with(&format!("{underscored}-"))
        })
    };
    for entry in walkdir::WalkDir::new(from).into_iter().filter_entry(|e| {
        let name = e.file_name().to_string_lossy();
        // Cargo's locks (`.cargo-lock`; from cargo 1.96 also
        // `.cargo-build-lock` and `.cargo-artifact-lock`) are each build's
        // own: a link to the read-only one cannot be opened.
        !(theirs(&name)
            || (name.starts_with(".cargo-") && name.ends_with("lock"))
            || name == ".rustc_info.json")
            && name != "grader-ready"
    }) {
        let entry = entry.map_err(io::Error::other)?;
        let relative = entry.path().strip_prefix(from).map_err(io::Error::other)?;
        let copy = to.join(relative);
        if entry.file_type().is_dir() {
            fs::create_dir_all(&copy)?;
        } else if entry.file_type().is_file() {
            // Another file system: a copy.
            if fs::hard_link(entry.path(), &copy).is_err() {
                fs::copy(entry.path(), &copy)?;
            }
        }
    }
    Ok(())
}

/// What a cargo JSON message stream says was built: binaries by package
/// (a bin target is named like its package), build-script output folders
/// by package.
struct Found {
    binaries: BTreeMap<String, PathBuf>,
    out_dirs: BTreeMap<String, PathBuf>,
}

fn artifacts(stream: &str) -> Found {
    let mut found = Found {
        binaries: BTreeMap::new(),
        out_dirs: BTreeMap::new(),
    };
    for message in stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        match message["reason"].as_str() {
            Some("compiler-artifact") => {
                let is_bin = message["target"]["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|x| x == "bin"));
                if let (true, Some(name), Some(exe)) = (
                    is_bin,
                    message["target"]["name"].as_str(),
                    message["executable"].as_str(),
                ) {
                    found.binaries.insert(name.to_owned(), PathBuf::from(exe));
                }
            }
            Some("build-script-executed") => {
                if let (Some(id), Some(out)) =
                    (message["package_id"].as_str(), message["out_dir"].as_str())
                {
                    found.out_dirs.insert(package_name(id), PathBuf::from(out));
                }
            }
            _ => {}
        }
    }
    found
}

/// The package name in a cargo package id: `path+file:///x/y#name@1.0`, or
/// `path+file:///x/name#1.0` when the folder carries the name.
fn package_name(id: &str) -> String {
    let Some((url, fragment)) = id.rsplit_once('#') else {
        return id.split(' ').next().unwrap_or(id).to_owned();
    };
    match fragment.split_once('@') {
        Some((name, _)) => name.to_owned(),
        None => url.rsplit('/').next().unwrap_or(url).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_ids_in_both_forms_give_the_name() {
        assert_eq!(
            package_name("path+file:///s/dot-sm/ann#dot-sm--ann@0.1.0"),
            "dot-sm--ann"
        );
        assert_eq!(package_name("path+file:///s/kernels#0.1.0"), "kernels");
        assert_eq!(
            package_name("registry+https://github.com/rust-lang/crates.io-index#cust@0.3.2"),
            "cust"
        );
        assert_eq!(package_name("cust 0.3.2 (registry+https://...)"), "cust");
    }

    #[test]
    fn binaries_and_out_dirs_are_read_from_the_messages() {
        let stream = r#"{"reason":"compiler-artifact","target":{"kind":["bin"],"name":"dot-sm--ann"},"executable":"/t/release/dot-sm--ann"}
{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"kernels"},"executable":null}
{"reason":"build-script-executed","package_id":"path+file:///s/dot-sm/ann#dot-sm--ann@0.1.0","out_dir":"/t/release/build/dot-sm--ann-1/out"}
not json
{"reason":"build-finished","success":false}"#;
        let found = artifacts(stream);
        assert_eq!(found.binaries.len(), 1);
        assert_eq!(
            found.binaries["dot-sm--ann"],
            PathBuf::from("/t/release/dot-sm--ann")
        );
        assert_eq!(
            found.out_dirs["dot-sm--ann"],
            PathBuf::from("/t/release/build/dot-sm--ann-1/out")
        );
    }
}
