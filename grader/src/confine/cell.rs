//! A cell for each build and each run: processes and memory of its own,
//! counted apart from every other build and run, of this grader or of any
//! other on the machine, and everything in it ended with it.
//!
//! Where the grader may make control groups (as root, or in a cgroup v2
//! folder delegated to it and named in `GRADER_CGROUP`), each build and
//! run gets one: cgroup v2 (`pids.max`, `memory.max`, no swap, the whole
//! group killed when it runs out of memory) or, where pids and memory are
//! cgroup v1 hierarchies, a group in each. Its peak memory, and whether
//! its memory limit killed something, are read when it ends, then what is
//! left in it is killed and it is removed. Without control groups the
//! sandbox falls back on rlimits, which count per process or per uid: see
//! [`Slot`] for a uid of its own per run.
//!
//! Threat model: a run can fork, thread and allocate as fast as it likes,
//! and hold what it got until its timeout; another run of the class may be
//! graded at the same time (`--gpus`, shards on one node). Nothing it
//! holds may be counted against that other run.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable naming a cgroup v2 folder the grader may make
/// its cells in (one delegated to a user, holding no process itself), or
/// `none` for no control groups.
pub const CGROUP_ENV: &str = "GRADER_CGROUP";

/// The folder made for the cells under a hierarchy's root.
const CELLS_FOLDER: &str = "cuda-course-grader";

/// Where the lock files of the run slots are: root's.
const SLOTS_FOLDER: &str = "/run/cuda-course-grader";
/// The first uid a run slot gives: no account has uids this high
/// (systemd's and containers' ranges end below 0x7ff00000).
pub const SLOT_UIDS: u32 = 0x7ff0_0000;
/// Slots, so runs at once on one machine.
const MAX_SLOTS: u32 = 1024;

/// How long a cell's leftover processes may take to die.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// What one build or run may use at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    /// Processes and threads.
    pub processes: u64,
    /// Bytes of memory: resident, with the tmpfs files and page cache it
    /// causes where a control group counts them.
    pub memory: u64,
}

/// How this machine makes cells, found once ([`Cells::find`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cells {
    /// A cgroup v2 folder whose children get the pids and memory
    /// controllers.
    V2 { parent: PathBuf },
    /// The grader's folders in the cgroup v1 pids and memory hierarchies.
    V1 { pids: PathBuf, memory: PathBuf },
    /// No control groups, and why.
    Missing { why: String },
}

/// What a cell saw by the time its run ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The most memory the cell held at once, where the kernel tells.
    pub peak_memory: Option<u64>,
    /// Its memory limit killed a process.
    pub memory_killed: bool,
    /// A fork or thread was refused at its process limit.
    pub processes_refused: bool,
}

/// One build's or run's control group, made for it and removed after it.
#[derive(Debug)]
pub struct Cell {
    /// Its folders: one in cgroup v2, two (pids, memory) in v1.
    folders: Vec<PathBuf>,
    /// Each folder's `cgroup.procs`, open for the child to join by.
    procs: Vec<File>,
    v2: bool,
    pub quota: Quota,
}

impl Cells {
    /// How cells can be made here: `GRADER_CGROUP` if set, else a folder
    /// of the grader's own under the cgroup v2 root, else under the cgroup
    /// v1 pids and memory hierarchies. Cells that graders which are gone
    /// left behind are removed.
    pub fn find() -> Cells {
        let found = match std::env::var_os(CGROUP_ENV).filter(|given| !given.is_empty()) {
            Some(given) if given == "none" => Err(format!("{CGROUP_ENV}=none")),
            Some(given) => prepare_v2(Path::new(&given), false)
                .map(|parent| Cells::V2 { parent })
                .map_err(|err| format!("{CGROUP_ENV}={}: {err}", given.to_string_lossy())),
            None => find_mounted(),
        };
        let cells = found.unwrap_or_else(|why| Cells::Missing { why });
        for folder in cells.parents() {
            sweep_stale(folder);
        }
        cells
    }

    fn parents(&self) -> Vec<&Path> {
        match self {
            Cells::V2 { parent } => vec![parent],
            Cells::V1 { pids, memory } => vec![pids, memory],
            Cells::Missing { .. } => vec![],
        }
    }

    /// How builds and runs are confined, for results.json and the log.
    pub fn describe(&self) -> String {
        match self {
            Cells::V2 { parent } => format!("a cgroup v2 of its own ({})", parent.display()),
            Cells::V1 { .. } => "a cgroup v1 of its own (pids and memory)".to_owned(),
            Cells::Missing { why } => {
                format!("no control group ({why}): per-process rlimits stand in for its memory cap")
            }
        }
    }

    /// A new cell for one build or run within `quota`; `None` where there
    /// are no control groups. An error is the machine's: the caller falls
    /// back on rlimits.
    pub fn open(&self, quota: Quota) -> io::Result<Option<Cell>> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let (folders, v2) = match self {
            Cells::Missing { .. } => return Ok(None),
            Cells::V2 { parent } => (vec![parent.join(&name)], true),
            Cells::V1 { pids, memory } => (vec![pids.join(&name), memory.join(&name)], false),
        };
        let mut cell = Cell {
            folders: Vec::new(),
            procs: Vec::new(),
            v2,
            quota,
        };
        for folder in &folders {
            fs::create_dir(folder)?;
            // Removed on drop from here on, whatever fails next.
            cell.folders.push(folder.clone());
        }
        let limits = if v2 {
            vec![
                (&folders[0], "pids.max", quota.processes.to_string(), true),
                (&folders[0], "memory.max", quota.memory.to_string(), true),
                (&folders[0], "memory.swap.max", "0".to_owned(), false),
                (&folders[0], "memory.oom.group", "1".to_owned(), false),
            ]
        } else {
            vec![
                (&folders[0], "pids.max", quota.processes.to_string(), true),
                (
                    &folders[1],
                    "memory.limit_in_bytes",
                    quota.memory.to_string(),
                    true,
                ),
                // Without swap accounting the file is missing: no swap to
                // count, or none the cell can use past the machine's.
                (
                    &folders[1],
                    "memory.memsw.limit_in_bytes",
                    quota.memory.to_string(),
                    false,
                ),
            ]
        };
        for (folder, file, value, required) in limits {
            match fs::write(folder.join(file), &value) {
                Err(err) if required || err.kind() != io::ErrorKind::NotFound => {
                    return Err(io::Error::new(
                        err.kind(),
                        format!("{}: {err}", folder.join(file).display()),
                    ));
                }
                _ => {}
            }
        }
        for folder in &folders {
            let procs = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(folder.join("cgroup.procs"))?;
            cell.procs.push(procs);
        }
        Ok(Some(cell))
    }
}

impl Cell {
    /// The descriptors a child joins the cell by ([`join`]).
    pub fn joining(&self) -> Vec<RawFd> {
        self.procs.iter().map(File::as_raw_fd).collect()
    }

    /// What the cell saw: its peak memory, and whether a limit was hit.
    pub fn usage(&self) -> Usage {
        let read = |folder: &PathBuf, file: &str| fs::read_to_string(folder.join(file)).ok();
        let counter = |text: Option<String>, key: &str| {
            text.and_then(|t| {
                t.lines().find_map(|l| {
                    let (name, value) = l.split_once(' ')?;
                    (name == key).then(|| value.trim().parse::<u64>().ok())?
                })
            })
            .unwrap_or(0)
        };
        let pids = &self.folders[0];
        let memory = self.folders.last().expect("a folder at least");
        let (peak, oom) = if self.v2 {
            ("memory.peak", "memory.events")
        } else {
            ("memory.max_usage_in_bytes", "memory.oom_control")
        };
        Usage {
            peak_memory: read(memory, peak).and_then(|t| t.trim().parse().ok()),
            memory_killed: counter(read(memory, oom), "oom_kill") > 0,
            processes_refused: counter(read(pids, "pids.events"), "max") > 0,
        }
    }
}

/// In the child, between fork and exec: joins the cell whose
/// `cgroup.procs` descriptors are `procs` (writing 0 moves the writer).
/// Only `write`: safe after fork.
pub fn join(procs: &[RawFd]) -> io::Result<()> {
    for &fd in procs {
        // SAFETY: write reads one byte of a static string.
        if unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

impl Drop for Cell {
    /// Kills what is left in the cell, waits for it to go, and removes it.
    fn drop(&mut self) {
        self.procs.clear();
        for folder in &self.folders {
            empty(folder, self.v2);
        }
        for folder in &self.folders {
            let _ = fs::remove_dir(folder);
        }
    }
}

/// Kills every process in the cgroup at `folder`, until none is left or
/// [`KILL_WAIT`] has passed.
fn empty(folder: &Path, v2: bool) {
    if v2 && fs::write(folder.join("cgroup.kill"), "1").is_ok() {
        // Linux 5.14: the kernel kills the whole group at once.
    }
    let until = Instant::now() + KILL_WAIT;
    loop {
        let left: Vec<libc::pid_t> = fs::read_to_string(folder.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if left.is_empty() || Instant::now() >= until {
            return;
        }
        for pid in left {
            // SAFETY: kill takes numbers; these pids are in a group only
            // the grader's children join.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The cgroup v2 or v1 folders of the grader's cells, from the mounts.
fn find_mounted() -> Result<Cells, String> {
    let mounts = fs::read_to_string("/proc/self/mountinfo").map_err(|err| err.to_string())?;
    let mut v2_failed = None;
    if let Some(root) = mount_point(&mounts, |kind, _| kind == "cgroup2") {
        match prepare_v2(&root.join(CELLS_FOLDER), true) {
            Ok(parent) => return Ok(Cells::V2 { parent }),
            Err(why) => v2_failed = Some(format!("cgroup v2 at {}: {why}", root.display())),
        }
    }
    let v1 = |controller: &str| {
        mount_point(&mounts, |kind, options| {
            kind == "cgroup" && options.split(',').any(|o| o == controller)
        })
    };
    let (pids, memory) = match (v1("pids"), v1("memory")) {
        (Some(pids), Some(memory)) => (pids.join(CELLS_FOLDER), memory.join(CELLS_FOLDER)),
        _ => {
            return Err(v2_failed.unwrap_or_else(|| {
                "no cgroup v2 mount, nor cgroup v1 pids and memory hierarchies".to_owned()
            }));
        }
    };
    for folder in [&pids, &memory] {
        match fs::create_dir(folder) {
            Err(err) if err.kind() != io::ErrorKind::AlreadyExists => {
                return Err(format!("{}: {err}", folder.display()));
            }
            _ => {}
        }
    }
    let cells = Cells::V1 { pids, memory };
    // A first cell made and removed: the hierarchy lets the grader write.
    match cells.open(Quota {
        processes: 1,
        memory: 1 << 20,
    }) {
        Ok(_) => Ok(cells),
        Err(err) => Err(format!("cgroup v1: {err}")),
    }
}

/// The mount point of the first mount whose file system type and super
/// options `wanted` accepts.
fn mount_point(mountinfo: &str, wanted: impl Fn(&str, &str) -> bool) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let point = before.split(' ').nth(4)?;
        let mut after = after.split(' ');
        let (kind, options) = (after.next()?, after.nth(1)?);
        wanted(kind, options).then(|| PathBuf::from(point))
    })
}

/// Makes `parent` a cgroup v2 folder whose children get the pids and
/// memory controllers (`make`: created here, under a root that gets them
/// too), and checks that a cell can be made in it.
fn prepare_v2(parent: &Path, make: bool) -> Result<PathBuf, String> {
    let say = |path: &Path, err: io::Error| format!("{}: {err}", path.display());
    if make {
        let root = parent.parent().ok_or("no parent folder")?;
        enable(root).map_err(|err| say(root, err))?;
        match fs::create_dir(parent) {
            Err(err) if err.kind() != io::ErrorKind::AlreadyExists => {
                return Err(say(parent, err));
            }
            _ => {}
        }
    }
    enable(parent).map_err(|err| say(parent, err))?;
    let cells = Cells::V2 {
        parent: parent.to_owned(),
    };
    cells
        .open(Quota {
            processes: 1,
            memory: 1 << 20,
        })
        .map_err(|err| err.to_string())?;
    Ok(parent.to_owned())
}

/// Gives `folder`'s children the pids and memory controllers, where it
/// has them itself.
fn enable(folder: &Path) -> io::Result<()> {
    let has = fs::read_to_string(folder.join("cgroup.controllers"))?;
    let enabled = fs::read_to_string(folder.join("cgroup.subtree_control"))?;
    for controller in ["pids", "memory"] {
        if !has.split_whitespace().any(|c| c == controller) {
            return Err(io::Error::other(format!("no {controller} controller")));
        }
        if !enabled.split_whitespace().any(|c| c == controller) {
            fs::write(
                folder.join("cgroup.subtree_control"),
                format!("+{controller}"),
            )?;
        }
    }
    Ok(())
}

/// Removes the cells in `parent` of graders no longer running.
fn sweep_stale(parent: &Path) {
    for entry in fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, _)) = name.split_once('-') else {
            continue;
        };
        let gone = pid.parse::<u32>().is_ok_and(|pid| {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        });
        if gone && entry.path().is_dir() {
            empty(&entry.path(), entry.path().join("cgroup.kill").exists());
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// A uid of its own for one run, held machine-wide while the run lasts,
/// for graders that start runs as root. RLIMIT_NPROC counts the processes
/// of a real uid, and other limits (queued signals, inotify instances)
/// count per uid too, so runs that share a uid share them: a run that
/// holds its threads starved a classmate graded at the same time. Slot k
/// is held by a lock on `/run/cuda-course-grader/slot-k` and gives uid
/// [`SLOT_UIDS`] + k.
#[derive(Debug)]
pub struct Slot {
    pub uid: u32,
    /// Held until the run ends; the kernel releases it if the grader dies.
    _lock: File,
}

impl Slot {
    /// The first slot no grader on the machine holds.
    pub fn take() -> io::Result<Slot> {
        let folder = Path::new(SLOTS_FOLDER);
        match fs::DirBuilder::new().mode(0o700).create(folder) {
            Err(err) if err.kind() != io::ErrorKind::AlreadyExists => return Err(err),
            _ => {}
        }
        for k in 0..MAX_SLOTS {
            let lock = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(folder.join(format!("slot-{k}")))?;
            // SAFETY: flock on a descriptor the file owns.
            if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                let mut lock = lock;
                // For whoever looks: which grader holds it.
                let _ = lock.set_len(0);
                let _ = writeln!(lock, "{}", std::process::id());
                return Ok(Slot {
                    uid: SLOT_UIDS + k,
                    _lock: lock,
                });
            }
        }
        Err(io::Error::other(format!(
            "all {MAX_SLOTS} run slots in {SLOTS_FOLDER} are held"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn mounts_are_read_by_type_and_options() {
        let mountinfo = "\
25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755
26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
27 25 0:24 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids
28 25 0:25 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
";
        let point = |wanted: &str| {
            mount_point(mountinfo, |kind, options| {
                kind == "cgroup" && options.split(',').any(|o| o == wanted)
            })
        };
        assert_eq!(point("pids"), Some(PathBuf::from("/sys/fs/cgroup/pids")));
        assert_eq!(
            point("memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory"))
        );
        assert_eq!(point("cpu"), None);
        assert_eq!(
            mount_point(mountinfo, |kind, _| kind == "cgroup2"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
    }

    #[test]
    fn none_turns_control_groups_off() {
        // SAFETY: no other test reads or writes this variable.
        unsafe { std::env::set_var(CGROUP_ENV, "none") };
        let cells = Cells::find();
        // SAFETY: as above.
        unsafe { std::env::remove_var(CGROUP_ENV) };
        assert!(matches!(&cells, Cells::Missing { why } if why.contains("none")));
        assert!(
            cells
                .open(Quota {
                    processes: 1,
                    memory: 1
                })
                .unwrap()
                .is_none()
        );
    }

    /// A shell in a cell of `quota`, running `script`; the cell's usage.
    fn in_cell(cells: &Cells, quota: Quota, script: &str) -> (std::process::ExitStatus, Usage) {
        let cell = cells.open(quota).unwrap().expect("control groups here");
        let fds = cell.joining();
        let mut command = Command::new("/bin/sh");
        command.args(["-c", script]);
        // SAFETY: join only writes to descriptors the cell keeps open.
        unsafe { command.pre_exec(move || join(&fds)) };
        let status = command.status().unwrap();
        let usage = cell.usage();
        let folders = cell.folders.clone();
        drop(cell);
        for folder in folders {
            assert!(!folder.exists(), "{} is left", folder.display());
        }
        (status, usage)
    }

    #[test]
    fn a_cell_counts_its_own_processes_and_memory_and_is_removed() {
        let cells = Cells::find();
        if let Cells::Missing { why } = &cells {
            // Only where the machine allows; CI runs as root with them.
            eprintln!("no control groups here: {why}");
            return;
        }
        let quota = Quota {
            processes: 8,
            memory: 64 << 20,
        };
        // Forks past the limit are refused, in this cell only.
        let (status, usage) = in_cell(
            &cells,
            quota,
            "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait",
        );
        assert!(usage.processes_refused, "{usage:?} {status}");
        let (_, calm) = in_cell(&cells, quota, "true");
        assert!(!calm.processes_refused, "{calm:?}");
        // Memory past the limit is killed, and said to be.
        let (status, usage) = in_cell(
            &cells,
            quota,
            "head -c 200000000 /dev/zero | tail -c 200000000 >/dev/null",
        );
        assert!(!status.success());
        assert!(usage.memory_killed, "{usage:?}");
        assert!(
            usage.peak_memory.is_some_and(|p| p <= 64 << 20),
            "{usage:?}"
        );
    }

    #[test]
    fn slots_are_distinct_while_held() {
        // SAFETY: geteuid only reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let a = Slot::take().unwrap();
        let b = Slot::take().unwrap();
        assert_ne!(a.uid, b.uid);
        assert!(a.uid >= SLOT_UIDS && b.uid >= SLOT_UIDS);
        drop(a);
        let c = Slot::take().unwrap();
        assert_ne!(c.uid, b.uid);
    }
}
