//! Where student code builds and runs: a bubblewrap sandbox per build and
//! per run. No network, a PID namespace (nothing outlives it), an empty
//! environment but for what the job needs, and a minimal root: the system
//! read-only and only the folders the job needs of the rest (`binds`), a
//! private `/tmp`, and nothing of the instructor's home, the course's
//! solutions, other submissions or the grader's output. Each build and run
//! has a cell of its own (`cell`): its processes and memory counted apart
//! from every other's, with the CPU emulator's amplification of a run's
//! memory counted in its cap. Student code runs as an unprivileged uid,
//! one of its own for each run, also when the grader is root.
//! `--no-sandbox` (and only that) gives [`Isolation::Unsandboxed`].

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Once;

use crate::confine::binds;
use crate::confine::cell::{self, Cell, Cells, Quota, Slot};
use crate::confine::gpus::Pin;
use crate::confine::run_as;
use crate::confine::runner::{Ended, Job};
use crate::error::{Error, Result};

/// The uid and gid student code runs as when the grader is root and no
/// run slot can be had: nobody.
pub const NOBODY: u32 = 65534;
/// Where a run finds its binary inside the sandbox.
pub const RUN_DIR: &str = "/grader";
/// Processes and threads a run may have at once: enough for CUDA's
/// threads and the emulator's (one per core), not for a fork bomb.
const RUN_PROCESSES: u64 = 1024;
/// A build's: cargo's jobs, each rustc's threads, nvcc's stages.
const BUILD_PROCESSES: u64 = 2048;
/// The largest file a run may write (in its private /tmp).
const MAX_RUN_FILE: libc::rlim_t = 64 << 20;
/// The largest file a build may write (`RLIMIT_FSIZE`): an object file, a
/// PTX, a binary. A compiler or linker that passes it is stopped
/// (`SIGXFSZ`) and the build fails; an honest exercise's binary is about
/// 5 MiB (`build::sizes`).
pub const MAX_BUILD_FILE: u64 = 64 << 20;
/// A build's memory (rustc, nvcc); without a cell, its address space.
const BUILD_MEMORY: u64 = 8 << 30;
/// A run's memory on a GPU besides the data its plan names: the driver's
/// host memory, page-locked buffers and the largest ordinary plan's
/// arrays: streams-overlap's run past the grid holds five arrays of 2^28
/// 32-bit values (5 GiB) in host memory, the most of any ordinary run; the
/// others hold under 1 GiB. Every run reserves its cap from the node's
/// room (`run::lane`), so that the runs in flight fit it: at 16 GiB, 16
/// runs at once could ask a 128 GiB node for twice what it has.
pub const GPU_RUN_MEMORY: u64 = 8 << 30;
/// A run's memory on the CPU emulator besides its data: the binary, the
/// emulator and its decoded kernel, a worker thread per core (about
/// 2 MiB each, measured with 16).
const EMULATED_RUN_MEMORY: u64 = 512 << 20;
/// The course's copy-bandwidth probe (`kernels::copy_probe`): two device
/// buffers, which the emulator keeps in host memory; of 4 MiB on the
/// emulator now, but of 512 MiB in binaries built before (an honest dot-sm
/// or vecadd-anyN run of those peaks at 1.03 GiB, most of it this), which a
/// grader may still be given in a bundle.
const EMULATED_COPY_PROBE: u64 = 2 * (512 << 20);
/// The most data an emulated run holds: three arrays of 2^20 floats (the
/// emulated plans' largest n), on the host and again as device memory.
const EMULATED_RUN_DATA: u64 = (2 * 3 * 4) << 20;
/// Bytes the emulator spends per byte of a run's data: its shadow of
/// every allocation's accesses and per-thread registers; about 5.
const EMULATOR_AMPLIFICATION: u64 = 5;
/// The size of a sandbox's private /tmp and /dev/shm (each a tmpfs, in
/// memory); the root around the mounts is read-only.
const TMP_BYTES: &str = "1073741824";
/// The environment variable naming the bwrap binary to use.
pub const BWRAP_ENV: &str = "GRADER_BWRAP";
/// Device nodes a CUDA run needs, when the machine has them (without
/// nvidia-uvm CUDA fails to start).
const GPU_NODES: [&str; 3] = ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"];

/// Whether student code is sandboxed.
#[derive(Clone, Debug)]
pub enum Isolation {
    Sandboxed(Sandbox),
    /// `--no-sandbox`: student code has the grader's rights; every report
    /// says so.
    Unsandboxed,
}

/// What a run is given beyond its binary and arguments
/// ([`Isolation::run_command_with`]).
#[derive(Default)]
pub struct Extras<'a> {
    /// `(variable, file)`: files the run sees read-only, each named by its
    /// variable (the student's PTX for the reference binary, the tracer).
    pub files: &'a [(&'a str, &'a Path)],
    /// Descriptors the run inherits at their own numbers, each named by
    /// its variable (the trace's pipe, the timing gate's socket).
    pub descriptors: Vec<(&'a str, OwnedFd)>,
    /// The CPU emulator's `libcuda.so.1`, in place of the system's driver.
    pub driver: Option<&'a Path>,
    /// The broker's client `libcuda.so.1`, in place of any driver: the run
    /// sees no GPU device and reaches the GPU only through the broker
    /// whose socket is among its descriptors (`run::brokered`).
    pub broker_client: Option<BrokerClient<'a>>,
    /// Bytes of data the run holds beyond an ordinary run's (its plan's
    /// `memory`, above 2^31 elements): its memory cap grows by as much.
    pub memory: u64,
    /// Whether the run's CUDA contexts keep the driver's several hardware
    /// work queues: only a run whose verdict reads how streams overlap.
    /// Every other run's get one ([`ONE_WORK_QUEUE`]).
    pub keeps_work_queues: bool,
    /// Whether the run's kernel is the grader's canary: the run is then
    /// told so ([`kernels::CANARY_RUN_ENV`]), and times its launches
    /// without judging the canary's marked answers.
    pub runs_the_canary: bool,
}

/// A run's way to the GPU through the broker ([`Extras::broker_client`]).
#[derive(Clone, Copy)]
pub struct BrokerClient<'a> {
    /// The client library, loaded as `libcuda.so.1`.
    pub library: &'a Path,
    /// Whether the broker runs the kernels on the CPU emulator: the run's
    /// plan is then capped for it, and so is its memory.
    pub emulated: bool,
}

/// The variable, and its value, that gives a CUDA context one hardware
/// work queue instead of the driver's default eight. The driver makes and
/// tears down contexts one at a time across every process on the machine,
/// and a context with one queue costs it under half the time: on an H100
/// (driver 580), 55 ms to make and 25 ms to tear down against 120 ms and
/// 65 ms, and 16 processes starting at once were done in 1.3 s against
/// 3.5 s (`bench/runs/2026-11-27-h100-run-cost`, "Where a GPU run's time goes"). One
/// queue serialises kernels and copies issued to different streams, which
/// only streams' overlap can see: a single stream's launches, and so every
/// other run's times and results, are the same.
pub const ONE_WORK_QUEUE: (&str, &str) = ("CUDA_DEVICE_MAX_CONNECTIONS", "1");

/// A working bubblewrap and how it is started, for runs and for builds.
#[derive(Clone, Debug)]
pub struct Sandbox {
    bwrap: PathBuf,
    /// Runs execute student code: as nobody wherever the machine allows.
    run_mode: Mode,
    /// Builds execute only the course's code (build scripts, rustc, nvcc)
    /// over student files: as root the folders they need may be the
    /// instructor's (a toolchain under /root), so bwrap starts as root and
    /// maps nobody inside, without capabilities.
    build_mode: Mode,
    /// With `--gpus`: the one GPU runs see; all of the machine's when `None`.
    gpu: Option<Pin>,
    /// How each build and run gets a cell of its own.
    cells: Cells,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The grader is root: bwrap is started as a run slot's uid (else
    /// nobody), so what runs inside is that uid outside too.
    DropToNobody,
    /// The grader is root and unprivileged user namespaces are refused
    /// (e.g. AppArmor): bwrap runs as root and maps nobody inside; outside
    /// it is root without capabilities.
    MappedRoot,
    /// The grader is not root: what runs inside is the grader's user.
    AsCaller,
}

/// What a build sees: the host folders bound into the sandbox.
pub struct BuildMounts<'a> {
    /// The course checkout: its root Cargo.toml, `kernels` crate and the
    /// `ptx` crate (kernels' tests read kernels' PTX with it: cargo reads its
    /// manifest; a build of binaries never compiles it) are bound read-only
    /// at [`COURSE_DIR`].
    pub course: &'a Path,
    /// The rust toolchain's sysroot, read-only at [`TOOLCHAIN_DIR`].
    pub sysroot: &'a Path,
    /// Cargo's registry (downloaded crates), read-only under [`CARGO_HOME_DIR`].
    pub registry: &'a Path,
    /// The workspace, writable at [`WORKSPACE_DIR`].
    pub workspace: &'a Path,
    /// The target folder, writable at [`TARGET_DIR`].
    pub target: &'a Path,
    /// Variables passed through when the grader has them (CUDA_PATH, ...).
    pub env: &'a [(String, OsString)],
}

/// The soname the exercise binaries load the CUDA driver by; the CPU
/// emulator's library is bound under it.
pub const DRIVER_LIBRARY: &str = "libcuda.so.1";

pub const COURSE_DIR: &str = "/course";
pub const TOOLCHAIN_DIR: &str = "/toolchain";
pub const CARGO_HOME_DIR: &str = "/cargo";
pub const WORKSPACE_DIR: &str = "/build/workspace";
pub const TARGET_DIR: &str = "/build/target";

impl Isolation {
    /// The sandbox, or why there is none: `no_sandbox` is the instructor's
    /// explicit choice to go without. Says on stderr how student code will
    /// be confined.
    pub fn choose(no_sandbox: bool) -> Result<Isolation> {
        if no_sandbox {
            // A malformed GRADER_RUN_AS stops here, before anything runs.
            if let Some(user) = run_as::from_env()? {
                eprintln!(
                    "grader: confinement: no bubblewrap; runs start as uid {} gid {} ({})",
                    user.uid,
                    user.gid,
                    run_as::RUN_AS_ENV
                );
            }
            return Ok(Isolation::Unsandboxed);
        }
        let sandbox = Sandbox::find().map_err(|why| {
            Error::NoSandbox(format!(
                "{why}; the grader builds and runs student code only in a bubblewrap sandbox: \
                 install bubblewrap (apt-get install bubblewrap) or name its binary in \
                 ${BWRAP_ENV}, or pass --no-sandbox to give student code your rights"
            ))
        })?;
        eprintln!("grader: confinement: {}", sandbox.description());
        Ok(Isolation::Sandboxed(sandbox))
    }

    /// The GPU runs are pinned to (`--gpus`), if any.
    pub fn gpu(&self) -> Option<&Pin> {
        match self {
            Isolation::Sandboxed(sandbox) => sandbox.gpu.as_ref(),
            Isolation::Unsandboxed => None,
        }
    }

    /// The same confinement with runs on `gpu` only; `None` without the
    /// sandbox, which cannot hide the other GPUs.
    pub fn on_gpu(&self, gpu: &Pin) -> Option<Isolation> {
        match self {
            Isolation::Sandboxed(sandbox) => Some(Isolation::Sandboxed(Sandbox {
                gpu: Some(gpu.clone()),
                ..sandbox.clone()
            })),
            Isolation::Unsandboxed => None,
        }
    }

    /// How runs are confined, as results.json records it: `None` without
    /// the sandbox.
    pub fn description(&self) -> Option<String> {
        match self {
            Isolation::Sandboxed(sandbox) => Some(sandbox.description()),
            Isolation::Unsandboxed => None,
        }
    }

    pub fn is_sandboxed(&self) -> bool {
        matches!(self, Isolation::Sandboxed(_))
    }

    /// The job that runs `binary` with `args`, through `wrapper`
    /// (compute-sanitizer and its arguments) when given.
    pub fn run_command(&self, binary: &Path, args: &[&str], wrapper: &[&str]) -> Job {
        self.run_command_with(binary, args, wrapper, Extras::default())
    }

    /// [`run_command`](Self::run_command), with what `extras` adds: files
    /// the run sees read-only, each named by a variable (how the course's
    /// reference binary finds a student's PTX, and how the tracer is
    /// preloaded); descriptors inherited at their own numbers, which their
    /// variables name (the trace's pipe, the timing gate's socket; the job
    /// holds them until it is dropped); the CPU emulator's `libcuda.so.1`, loaded in place of the
    /// system's driver, first on the library path; and the data the run
    /// holds beyond an ordinary run's, which its memory cap allows.
    pub fn run_command_with(
        &self,
        binary: &Path,
        args: &[&str],
        wrapper: &[&str],
        extras: Extras,
    ) -> Job {
        match self {
            Isolation::Unsandboxed => unsandboxed(binary, args, wrapper, extras),
            Isolation::Sandboxed(sandbox) => sandbox.run_command(binary, args, wrapper, extras),
        }
    }
}

/// A run with the grader's rights (`--no-sandbox`): only its descriptors
/// and its process group are the runner's to confine.
fn unsandboxed(binary: &Path, args: &[&str], wrapper: &[&str], extras: Extras) -> Job {
    let mut command;
    if let Some((program, rest)) = wrapper.split_first() {
        command = Command::new(program);
        command.args(rest).arg(binary);
    } else {
        command = Command::new(binary);
    }
    command.args(args);
    // Checked when the isolation was chosen: only a valid user gets here.
    if let Ok(Some(user)) = run_as::from_env() {
        run_as::apply(&mut command, user);
    }
    let Extras {
        files,
        descriptors,
        driver,
        broker_client,
        memory: _,
        keeps_work_queues,
        runs_the_canary,
    } = extras;
    for (name, file) in files {
        command.env(name, file);
    }
    if !keeps_work_queues {
        command.env(ONE_WORK_QUEUE.0, ONE_WORK_QUEUE.1);
    }
    if runs_the_canary {
        command.env(kernels::CANARY_RUN_ENV, "1");
    }
    // The grader's own, were it run under a gate, names nothing the run
    // has: only the gate a run is given reaches it.
    command.env_remove(kernels::timing_gate::FD_VARIABLE);
    let mut keep = Vec::new();
    for (name, fd) in descriptors {
        command.env(name, fd.as_raw_fd().to_string());
        keep.push(fd.as_raw_fd());
        // SAFETY: the closure only owns the descriptor, which stays open
        // until exec; nothing runs in the child.
        unsafe {
            command.pre_exec(move || {
                let _held = &fd;
                Ok(())
            });
        }
    }
    let client = broker_client.map(|b| b.library);
    if let Some(folder) = driver.or(client).and_then(Path::parent) {
        let mut path = OsString::from(folder);
        if let Some(rest) = std::env::var_os("LD_LIBRARY_PATH") {
            path.push(":");
            path.push(rest);
        }
        command.env("LD_LIBRARY_PATH", path);
    }
    if driver.is_some() {
        // Its statistics lines would read as findings; it carries on past
        // what a GPU carries on past (`kernels::emulator_output`).
        // The instructor's list of GPUs would hide the emulator's device.
        command
            .env(kernels::emulator_output::CARRY_ON_VARIABLE, "1")
            .env_remove("CUDA_COURSE_EMULATOR_STATS")
            .env_remove("CUDA_VISIBLE_DEVICES");
    }
    Job {
        keep,
        ..Job::from(command)
    }
}

/// How the program inside ended, from how bwrap ended: bwrap exits with
/// 128 + N when what it ran was killed by signal N.
pub fn ended_inside(ended: Ended) -> Ended {
    match ended {
        Ended::Exited(code) if (129..=128 + 64).contains(&code) => Ended::Signalled(code - 128),
        other => other,
    }
}

/// The memory cap of a run, on the emulator or on a GPU, holding `data`
/// bytes beyond an ordinary run's: what the run's cell may hold, and what
/// it reserves of the node's room before it starts (`run::lane`).
pub fn run_memory(emulated: bool, data: u64) -> u64 {
    if emulated {
        EMULATED_RUN_MEMORY
            + EMULATED_COPY_PROBE
            + EMULATOR_AMPLIFICATION * (EMULATED_RUN_DATA + data)
    } else {
        GPU_RUN_MEMORY + data
    }
}

/// Says once that something the confinement wanted was missing, and what
/// stands in for it.
fn warn_once(once: &'static Once, what: String) {
    once.call_once(|| eprintln!("grader: warning: {what}"));
}

impl Sandbox {
    /// Finds bwrap ($GRADER_BWRAP, else on PATH) and checks that it can
    /// start a sandbox here, as nobody when the grader is root; and how
    /// cells are made here.
    pub fn find() -> Result<Sandbox> {
        let bwrap = match std::env::var_os(BWRAP_ENV) {
            Some(path) => PathBuf::from(path),
            None => on_path("bwrap").ok_or_else(|| {
                Error::NoSandbox("bubblewrap (bwrap) was not found on PATH".into())
            })?,
        };
        if !bwrap.is_file() {
            return Err(Error::NoSandbox(format!(
                "{} is not a file",
                bwrap.display()
            )));
        }
        // SAFETY: geteuid only reads the process's credentials.
        let root = unsafe { libc::geteuid() } == 0;
        let fails = |mode| refusal(&bwrap, mode);
        let (run_mode, build_mode) = if root {
            if let Some(why) = fails(Mode::MappedRoot) {
                return Err(Error::NoSandbox(format!(
                    "{} cannot start a sandbox here: {why}",
                    bwrap.display()
                )));
            }
            // Unprivileged user namespaces may be refused (AppArmor on
            // Ubuntu 24.04 confines bwrap by its path): then runs too are
            // root mapped to nobody.
            match fails(Mode::DropToNobody) {
                None => (Mode::DropToNobody, Mode::MappedRoot),
                Some(_) => (Mode::MappedRoot, Mode::MappedRoot),
            }
        } else {
            if let Some(why) = fails(Mode::AsCaller) {
                return Err(Error::NoSandbox(format!(
                    "{} cannot start a sandbox here: {why}",
                    bwrap.display()
                )));
            }
            (Mode::AsCaller, Mode::AsCaller)
        };
        Ok(Sandbox {
            bwrap,
            run_mode,
            build_mode,
            gpu: None,
            cells: Cells::find(),
        })
    }

    /// Who student code runs as, outside the sandbox too, and what bounds
    /// each build and run.
    pub fn description(&self) -> String {
        let who = match self.run_mode {
            Mode::DropToNobody => "each run as a uid of its own",
            Mode::MappedRoot => "as root mapped to nobody without capabilities",
            Mode::AsCaller => "as the grader's user",
        };
        format!(
            "bubblewrap, {who}; each build and run in {}, at most {RUN_PROCESSES} processes \
             and {} MiB ({} MiB on the emulator) a run",
            self.cells.describe(),
            run_memory(false, 0) >> 20,
            run_memory(true, 0) >> 20,
        )
    }

    /// A cell for one build or run, where the machine gives one; without,
    /// the caller's rlimits stand in.
    fn cell(&self, quota: Quota) -> Option<Cell> {
        static FAILED: Once = Once::new();
        self.cells
            .open(quota)
            .inspect_err(|err| {
                warn_once(
                    &FAILED,
                    format!("a control group could not be made ({err}): rlimits stand in"),
                );
            })
            .ok()
            .flatten()
    }

    fn run_command(&self, binary: &Path, args: &[&str], wrapper: &[&str], extras: Extras) -> Job {
        static NO_SLOT: Once = Once::new();
        let devices = match &self.gpu {
            // The broker's client reaches the GPU through its socket only;
            // the CPU emulator's library needs none (a GPU node's lesson
            // runs, `grade::lesson`).
            _ if extras.broker_client.is_some() || extras.driver.is_some() => Devices::None,
            Some(gpu) => Devices::One(gpu),
            None => Devices::All,
        };
        let slot = match self.run_mode {
            Mode::DropToNobody => Slot::take()
                .inspect_err(|err| {
                    warn_once(
                        &NO_SLOT,
                        format!("no run slot ({err}): runs share the uid nobody"),
                    );
                })
                .ok(),
            _ => None,
        };
        let uid = slot.as_ref().map_or(NOBODY, |s| s.uid);
        let emulated = extras.driver.is_some() || extras.broker_client.is_some_and(|b| b.emulated);
        let quota = Quota {
            processes: RUN_PROCESSES,
            memory: run_memory(emulated, extras.memory),
        };
        let cell = self.cell(quota);
        let mut command = base(&self.bwrap, self.run_mode, uid, devices);
        let mut inherit = Vec::new();
        let inside = copy_in(&mut command, &mut inherit, binary);
        for (name, file) in extras.files {
            let seen = copy_in(&mut command, &mut inherit, file);
            command.arg("--setenv").arg(name).arg(seen);
        }
        if !extras.keeps_work_queues {
            let (name, value) = ONE_WORK_QUEUE;
            command.args(["--setenv", name, value]);
        }
        if extras.runs_the_canary {
            command.args(["--setenv", kernels::CANARY_RUN_ENV, "1"]);
        }
        for (name, fd) in extras.descriptors {
            // bwrap passes it on at the same number.
            command
                .arg("--setenv")
                .arg(name)
                .arg(fd.as_raw_fd().to_string());
            inherit.push(std::fs::File::from(fd));
        }
        if let Some(library) = extras.driver.or(extras.broker_client.map(|b| b.library)) {
            // Under the soname the binary asks for, alone in a folder first
            // on the library path (the binaries have no RPATH).
            let folder = Path::new(RUN_DIR).join("driver");
            copy_in_as(
                &mut command,
                &mut inherit,
                library,
                &folder.join(DRIVER_LIBRARY),
            );
            command.arg("--setenv").arg("LD_LIBRARY_PATH").arg(folder);
            if extras.driver.is_some() {
                command
                    .arg("--setenv")
                    .arg(kernels::emulator_output::CARRY_ON_VARIABLE)
                    .arg("1");
            }
        } else {
            // The machine's driver, where the sandbox hides it.
            let folders = binds::driver_folders();
            for folder in folders {
                binds::folder(&mut command, folder);
            }
            if !folders.is_empty() {
                command
                    .arg("--setenv")
                    .arg("LD_LIBRARY_PATH")
                    .arg(std::env::join_paths(folders).unwrap_or_default());
            }
        }
        let mut wrapper: Vec<String> = wrapper.iter().map(|w| w.to_string()).collect();
        if let Some(tool) = wrapper.first_mut() {
            let path = PathBuf::from(tool.as_str());
            // A tool the sandbox sees, or whose folders it binds, is run
            // where it is; one elsewhere (a wrapper script) is copied in
            // like the binary.
            if path.is_absolute() && binds::tool(&mut command, &path).is_none() {
                *tool = copy_in(&mut command, &mut inherit, &path)
                    .to_string_lossy()
                    .into_owned();
            }
        }
        binds::finish(&mut command);
        command
            .args(["--chdir", "/tmp"])
            .arg("--")
            .args(&wrapper)
            .arg(&inside)
            .args(args);
        let keep = inherit.iter().map(AsRawFd::as_raw_fd).collect();
        confine(
            &mut command,
            Confinement {
                mode: self.run_mode,
                uid,
                max_file: Some(MAX_RUN_FILE),
                // Without a cell: a cap per process on its data, which a
                // GPU's large reserved address range does not count.
                max_data: cell.is_none().then_some(quota.memory),
                max_address_space: None,
                join: cell.as_ref().map(Cell::joining).unwrap_or_default(),
            },
            inherit,
        );
        Job {
            command,
            keep,
            cell,
            slot,
        }
    }

    /// The job that runs cargo with `args` in the workspace.
    pub fn build_command(&self, mounts: &BuildMounts, args: &[&str]) -> Job {
        let cell = self.cell(Quota {
            processes: BUILD_PROCESSES,
            memory: BUILD_MEMORY,
        });
        let mut command = base(&self.bwrap, self.build_mode, NOBODY, Devices::None);
        let course_manifest = mounts.course.join("Cargo.toml");
        command
            .arg("--ro-bind")
            .arg(&course_manifest)
            .arg(format!("{COURSE_DIR}/Cargo.toml"))
            .arg("--ro-bind")
            .arg(mounts.course.join("kernels"))
            .arg(format!("{COURSE_DIR}/kernels"))
            .arg("--ro-bind")
            .arg(mounts.course.join("ptx"))
            .arg(format!("{COURSE_DIR}/ptx"))
            .arg("--ro-bind")
            .arg(mounts.sysroot)
            .arg(TOOLCHAIN_DIR)
            .args(["--tmpfs", CARGO_HOME_DIR])
            .arg("--ro-bind")
            .arg(mounts.registry)
            .arg(format!("{CARGO_HOME_DIR}/registry"))
            .arg("--bind")
            .arg(mounts.workspace)
            .arg(WORKSPACE_DIR)
            .arg("--bind")
            .arg(mounts.target)
            .arg(TARGET_DIR);
        // The nvcc the course's build helper finds here, on the PATH and
        // bound where the sandbox hides it.
        let mut path = OsString::from(format!("{TOOLCHAIN_DIR}/bin:"));
        if let Some(bin) = binds::toolkit_bin() {
            binds::toolkit(&mut command, &bin);
            path.push(&bin);
            path.push(":");
        }
        path.push("/usr/bin:/bin");
        command
            .arg("--setenv")
            .arg("PATH")
            .arg(path)
            .args(["--setenv", "CARGO_HOME", CARGO_HOME_DIR])
            .args(["--setenv", "RUSTC"])
            .arg(format!("{TOOLCHAIN_DIR}/bin/rustc"))
            .args(["--setenv", "CARGO_TARGET_DIR", TARGET_DIR])
            .args(["--setenv", "TMPDIR", "/tmp"]);
        for (name, value) in mounts.env {
            command.arg("--setenv").arg(name).arg(value);
            // A toolkit named by CUDA_PATH must be visible where it is.
            let path = Path::new(value);
            if name == "CUDA_PATH" && path.is_absolute() {
                binds::folder(&mut command, path);
            }
        }
        binds::finish(&mut command);
        command
            .args(["--chdir", WORKSPACE_DIR, "--"])
            .arg(format!("{TOOLCHAIN_DIR}/bin/cargo"))
            .args(args);
        confine(
            &mut command,
            Confinement {
                mode: self.build_mode,
                uid: NOBODY,
                max_file: Some(MAX_BUILD_FILE as libc::rlim_t),
                max_data: None,
                max_address_space: cell.is_none().then_some(BUILD_MEMORY),
                join: cell.as_ref().map(Cell::joining).unwrap_or_default(),
            },
            Vec::new(),
        );
        Job {
            cell,
            ..Job::from(command)
        }
    }
}

/// Adds to `command` a read-only copy of the file at `host` in [`RUN_DIR`],
/// read from a descriptor the grader opened (kept in `inherit`): its
/// folder need not be open to the run's uid, and the run cannot write it.
/// Returns where the sandbox sees it.
fn copy_in(command: &mut Command, inherit: &mut Vec<std::fs::File>, host: &Path) -> PathBuf {
    let name = host
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "binary".into());
    let inside = Path::new(RUN_DIR).join(format!("{}-{name}", inherit.len()));
    copy_in_as(command, inherit, host, &inside)
}

/// [`copy_in`] to the given place inside.
fn copy_in_as(
    command: &mut Command,
    inherit: &mut Vec<std::fs::File>,
    host: &Path,
    inside: &Path,
) -> PathBuf {
    let inside = inside.to_owned();
    match std::fs::File::open(host) {
        Ok(file) => {
            command
                .args(["--perms", "0555", "--ro-bind-data"])
                .arg(file.as_raw_fd().to_string())
                .arg(&inside);
            inherit.push(file);
        }
        // bwrap then says it cannot find the file: a verdict.
        Err(_) => {
            command.arg("--ro-bind").arg(host).arg(&inside);
        }
    }
    inside
}

/// What bwrap said when it cannot start a sandbox in `mode` here; None
/// when it can.
fn refusal(bwrap: &Path, mode: Mode) -> Option<String> {
    let mut command = base(bwrap, mode, NOBODY, Devices::None);
    binds::finish(&mut command);
    command.arg("true").stdin(Stdio::null());
    confine(
        &mut command,
        Confinement {
            mode,
            uid: NOBODY,
            max_file: None,
            max_data: None,
            max_address_space: None,
            join: Vec::new(),
        },
        Vec::new(),
    );
    match command.output() {
        Ok(output) if output.status.success() => None,
        Ok(output) => Some(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
        Err(err) => Some(err.to_string()),
    }
}

/// Which NVIDIA device nodes a sandbox binds.
#[derive(Clone, Copy)]
enum Devices<'a> {
    /// Builds: none.
    None,
    /// Runs: every GPU's.
    All,
    /// Runs with `--gpus`: this GPU's, and the control and unified-memory
    /// nodes every GPU shares.
    One(&'a Pin),
}

/// bwrap with the namespaces, the environment and the minimal root every
/// sandbox has, for what runs as `uid` outside; `devices` adds NVIDIA
/// device nodes and /sys. The caller adds its own binds, then
/// [`binds::finish`].
fn base(bwrap: &Path, mode: Mode, uid: u32, devices: Devices) -> Command {
    let mut command = Command::new(bwrap);
    command.args([
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "LANG",
        "C.UTF-8",
    ]);
    if mode == Mode::MappedRoot {
        command.args(["--unshare-user", "--cap-drop", "ALL"]);
    }
    if mode != Mode::AsCaller {
        // Inside as outside: the run slot's uid when the grader dropped to
        // it, else nobody.
        let id = if mode == Mode::DropToNobody {
            uid
        } else {
            NOBODY
        }
        .to_string();
        command.args(["--uid", &id, "--gid", &id]);
    }
    // No GPU, no list of them: the emulator would read a pinned GPU's
    // UUID (or the instructor's "") as its one device hidden.
    let visible = match devices {
        Devices::One(gpu) => Some(gpu.visible.clone().into()),
        Devices::All => std::env::var_os("CUDA_VISIBLE_DEVICES"),
        Devices::None => None,
    };
    if let Some(visible) = visible {
        command
            .arg("--setenv")
            .arg("CUDA_VISIBLE_DEVICES")
            .arg(visible);
    }
    binds::system(&mut command);
    // A private /tmp of bounded size: its files live in memory.
    command.args(["--proc", "/proc", "--dev", "/dev"]);
    command.args(["--size", TMP_BYTES, "--tmpfs", "/tmp"]);
    command.args(["--size", TMP_BYTES, "--tmpfs", "/dev/shm"]);
    let nodes: Vec<PathBuf> = match devices {
        Devices::None => vec![],
        Devices::All => gpu_nodes(),
        // Only where they exist: on a machine without this GPU, runs find
        // no GPU, as they would without --gpus.
        Devices::One(gpu) => std::iter::once(gpu.node.clone())
            .chain(GPU_NODES.iter().map(PathBuf::from))
            .filter(|p| p.exists())
            .collect(),
    };
    for node in &nodes {
        command.arg("--dev-bind").arg(node).arg(node);
    }
    if !nodes.is_empty() {
        // The driver reads the GPUs' topology there.
        command.args(["--ro-bind", "/sys", "/sys"]);
    }
    command
}

/// The NVIDIA device nodes this machine has: /dev/nvidia0, 1, ... and the
/// control and unified-memory nodes.
fn gpu_nodes() -> Vec<PathBuf> {
    let mut nodes: Vec<PathBuf> = std::fs::read_dir("/dev")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("nvidia"))
                .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    nodes.sort();
    nodes.extend(GPU_NODES.iter().map(PathBuf::from).filter(|p| p.exists()));
    nodes
}

/// What a child is held to before bwrap starts.
struct Confinement {
    mode: Mode,
    /// Who it runs as in [`Mode::DropToNobody`].
    uid: u32,
    max_file: Option<libc::rlim_t>,
    /// RLIMIT_DATA: a memory cap per process where there is no cell.
    max_data: Option<u64>,
    /// RLIMIT_AS: an address-space cap where there is no cell (builds).
    max_address_space: Option<u64>,
    /// The `cgroup.procs` descriptors of its cell, to join first.
    join: Vec<RawFd>,
}

/// Before bwrap starts: into its cell, no core dumps, the given caps,
/// `inherit` held open for bwrap to read (the runner passes them on), and
/// in [`Mode::DropToNobody`] its uid and at most [`RUN_PROCESSES`] of them.
fn confine(command: &mut Command, limits: Confinement, inherit: Vec<std::fs::File>) {
    let Confinement {
        mode,
        uid,
        max_file,
        max_data,
        max_address_space,
        join,
    } = limits;
    let limit = move || {
        let _held = &inherit;
        // As the grader still, which may write the cell's cgroup.procs.
        cell::join(&join)?;
        let set = |resource, value: libc::rlim_t| {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            // SAFETY: setrlimit reads the struct it is given.
            if unsafe { libc::setrlimit(resource, &limit) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        };
        set(libc::RLIMIT_CORE, 0)?;
        if let Some(bytes) = max_file {
            set(libc::RLIMIT_FSIZE, bytes)?;
        }
        if let Some(bytes) = max_data {
            set(libc::RLIMIT_DATA, bytes)?;
        }
        if let Some(bytes) = max_address_space {
            set(libc::RLIMIT_AS, bytes)?;
        }
        if mode == Mode::DropToNobody {
            // SAFETY: these change only this child's credentials.
            let failed = unsafe {
                libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(uid) != 0
                    || libc::setuid(uid) != 0
            };
            if failed {
                return Err(std::io::Error::last_os_error());
            }
            // Per uid: with a run slot's uid, this run's processes only.
            set(libc::RLIMIT_NPROC, RUN_PROCESSES as libc::rlim_t)?;
        }
        Ok(())
    };
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only async-signal-safe functions (write, setrlimit, setgroups, setgid,
    // setuid) on values it owns; it allocates nothing.
    unsafe { command.pre_exec(limit) };
}

/// The first `name` in a folder of PATH.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// How many processes on this machine have `marker` in their command line:
/// the tests' way to see that nothing a run started outlived it.
#[cfg(test)]
pub(crate) fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confine::runner::{Limits, run_command};
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    const LIMITS: Limits = Limits {
        timeout: Duration::from_secs(20),
        max_output: 1 << 16,
    };

    /// A sandbox whose commands are only looked at, never run.
    fn looked_at() -> Sandbox {
        Sandbox {
            bwrap: "/usr/bin/bwrap".into(),
            run_mode: Mode::AsCaller,
            build_mode: Mode::AsCaller,
            gpu: None,
            cells: Cells::Missing {
                why: "a test".into(),
            },
        }
    }

    /// A job's command line.
    fn arguments(job: &Job) -> Vec<String> {
        job.command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn script(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("probe");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_run_on_one_gpu_binds_only_that_gpus_node_and_is_told_its_uuid() {
        let dir = tempfile::tempdir().unwrap();
        // Stand-ins for the machine's nodes: a run must name only its own.
        let node = dir.path().join("nvidia1");
        std::fs::write(&node, "").unwrap();
        let pin = Pin {
            index: 1,
            node: node.clone(),
            visible: "GPU-1234".into(),
        };
        let pinned = Isolation::Sandboxed(looked_at()).on_gpu(&pin).unwrap();
        let args = arguments(&pinned.run_command(Path::new("/bin/true"), &[], &[]));
        let bound: Vec<&String> = args
            .windows(2)
            .filter(|w| w[0] == "--dev-bind")
            .map(|w| &w[1])
            .collect();
        assert_eq!(bound.first(), Some(&&node.to_string_lossy().into_owned()));
        // The rest are the shared nodes, never another GPU's.
        for other in &bound[1..] {
            assert!(GPU_NODES.contains(&other.as_str()), "{other}");
        }
        let visible = args
            .windows(3)
            .find(|w| w[0] == "--setenv" && w[1] == "CUDA_VISIBLE_DEVICES");
        assert_eq!(visible.map(|w| w[2].as_str()), Some("GPU-1234"));
        assert!(Isolation::Unsandboxed.on_gpu(&pin).is_none());
        // On the CPU emulator's library (a lesson run on a GPU node): no
        // GPU's node, and no GPU list that would hide the emulator's device.
        let library = dir.path().join("libcuda.so.1");
        std::fs::write(&library, "").unwrap();
        let emulated = Extras {
            driver: Some(&library),
            ..Extras::default()
        };
        let args = arguments(&pinned.run_command_with(Path::new("/bin/true"), &[], &[], emulated));
        assert!(!args.iter().any(|a| a == "--dev-bind"), "{args:?}");
        assert!(
            !args.iter().any(|a| a == "CUDA_VISIBLE_DEVICES"),
            "{args:?}"
        );
    }

    #[test]
    fn one_work_queue_is_every_run_s_but_where_several_are_kept() {
        let sandbox = Isolation::Sandboxed(looked_at());
        let (name, value) = ONE_WORK_QUEUE;
        for keeps in [false, true] {
            let extras = Extras {
                keeps_work_queues: keeps,
                runs_the_canary: false,
                ..Extras::default()
            };
            let job = sandbox.run_command_with(Path::new("/bin/true"), &[], &[], extras);
            let args = arguments(&job);
            let given: Vec<&str> = args
                .windows(3)
                .filter(|w| w[0] == "--setenv" && w[1] == name)
                .map(|w| w[2].as_str())
                .collect();
            let want: Vec<&str> = if keeps { vec![] } else { vec![value] };
            assert_eq!(given, want, "keeps_work_queues: {keeps}");

            let extras = Extras {
                keeps_work_queues: keeps,
                runs_the_canary: false,
                ..Extras::default()
            };
            let job =
                Isolation::Unsandboxed.run_command_with(Path::new("/bin/true"), &[], &[], extras);
            let set = job
                .command
                .get_envs()
                .find(|(n, _)| *n == name)
                .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()));
            assert_eq!(
                set.as_deref(),
                (!keeps).then_some(value),
                "unsandboxed, {keeps}"
            );
        }
    }

    #[test]
    fn a_run_sees_no_environment_no_home_no_network_no_descriptor_and_is_not_root() {
        let isolation = Isolation::choose(false).expect("bubblewrap is installed");
        let dir = tempfile::tempdir().unwrap();
        let probe = script(
            dir.path(),
            "echo \"uid=$(id -u) home=$HOME cargo=$(env | grep -c CARGO)\"\n\
             ls / | tr '\\n' ' '; echo\n\
             touch /x 2>/dev/null && echo root-writable\n\
             cat /proc/net/dev | grep -c : \n\
             echo \"$@\"\n\
             ls /proc/self/fd | tr '\\n' ' '; echo\n\
             ls -A /usr/local | tr '\\n' ' '; echo",
        );
        // cargo test gives this process CARGO_* variables: none may pass;
        // and a descriptor it holds without close-on-exec, as a log given
        // to the grader by its caller would be.
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        let log = std::fs::File::create(dir.path().join("log")).unwrap();
        let log = crate::confine::descriptors::tests::inheritable(&log);
        let outcome = run_command(isolation.run_command(&probe, &["a", "b"], &[]), LIMITS);
        assert_eq!(outcome.ended, Ended::Exited(0), "{}", outcome.stderr);
        let lines: Vec<&str> = outcome.stdout.lines().collect();
        // SAFETY: geteuid only reads the process's credentials.
        if unsafe { libc::geteuid() } == 0 {
            // A run slot's uid, or nobody's.
            let uid: u32 = lines[0]["uid=".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(
                uid >= cell::SLOT_UIDS || uid == NOBODY,
                "{}",
                outcome.stdout
            );
        }
        assert!(
            lines[0].ends_with(" home=/tmp cargo=0"),
            "{}",
            outcome.stdout
        );
        for absent in ["root", "home", "work", "etc/passwd", "opt"] {
            assert!(!lines[1].split(' ').any(|e| e == absent), "{}", lines[1]);
        }
        assert!(!outcome.stdout.contains("root-writable"));
        // Only the loopback of its own network namespace.
        assert_eq!(lines[2], "1", "{}", outcome.stdout);
        assert_eq!(lines[3], "a b");
        // stdin, stdout, stderr and ls's own listing of the folder.
        assert_eq!(lines[4].trim(), "0 1 2 3", "{}", outcome.stdout);
        // /usr/local is there, empty (this machine's holds git, cargo-nextest...).
        assert_eq!(lines[5].trim(), "", "{}", outcome.stdout);
        drop(log);
    }

    #[test]
    fn a_run_holding_its_processes_leaves_another_run_its_own() {
        let isolation = Isolation::choose(false).expect("bubblewrap is installed");
        let dir = tempfile::tempdir().unwrap();
        // Near its limit, and holding them: every process but a few.
        let holder = script(
            dir.path(),
            &format!(
                "i=0; while [ $i -lt {} ]; do sleep 10 & i=$((i+1)); done; echo held; wait",
                RUN_PROCESSES - 24
            ),
        );
        let holding = {
            let job = isolation.run_command(&holder, &[], &[]);
            std::thread::spawn(move || run_command(job, LIMITS))
        };
        std::thread::sleep(Duration::from_millis(4000));
        let other_dir = tempfile::tempdir().unwrap();
        let honest = script(
            other_dir.path(),
            "i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done; wait; echo all 200",
        );
        let outcome = run_command(isolation.run_command(&honest, &[], &[]), LIMITS);
        let held = holding.join().unwrap();
        assert!(held.stdout.contains("held"), "{held:?}");
        assert_eq!(outcome.ended, Ended::Exited(0), "{}", outcome.stderr);
        assert_eq!(outcome.stdout.trim(), "all 200", "{}", outcome.stderr);
    }

    #[test]
    fn a_run_on_the_emulator_finds_its_library_first_on_the_path_and_read_only() {
        let isolation = Isolation::choose(false).expect("bubblewrap is installed");
        let dir = tempfile::tempdir().unwrap();
        // As a bundle keeps it: alone in its folder, under the soname.
        let library = dir.path().join("emulator/libcuda.so.1");
        std::fs::create_dir(dir.path().join("emulator")).unwrap();
        std::fs::write(&library, b"not really a library").unwrap();
        let probe = script(
            dir.path(),
            "first=${LD_LIBRARY_PATH%%:*}; echo \"$first\"\n\
             cat \"$first/libcuda.so.1\"; echo\n\
             echo changed 2>/dev/null > \"$first/libcuda.so.1\" && echo writable\n\
             true",
        );
        for isolation in [isolation, Isolation::Unsandboxed] {
            let outcome = run_command(
                isolation.run_command_with(
                    &probe,
                    &[],
                    &[],
                    Extras {
                        driver: Some(&library),
                        ..Extras::default()
                    },
                ),
                LIMITS,
            );
            assert_eq!(outcome.ended, Ended::Exited(0), "{}", outcome.stderr);
            let lines: Vec<&str> = outcome.stdout.lines().collect();
            assert_eq!(lines[1], "not really a library", "{}", outcome.stdout);
            if isolation.is_sandboxed() {
                assert_eq!(lines[0], "/grader/driver");
                assert!(!outcome.stdout.contains("writable"), "{}", outcome.stdout);
            } else {
                assert_eq!(lines[0], dir.path().join("emulator").display().to_string());
            }
        }
    }

    #[test]
    fn nothing_outlives_a_run_and_a_hang_times_out() {
        let isolation = Isolation::choose(false).expect("bubblewrap is installed");
        let dir = tempfile::tempdir().unwrap();
        let probe = script(dir.path(), "setsid sleep 63.75 & sleep 60");
        let outcome = run_command(
            isolation.run_command(&probe, &[], &[]),
            Limits {
                timeout: Duration::from_millis(500),
                ..LIMITS
            },
        );
        assert_eq!(outcome.ended, Ended::TimedOut);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            processes_with("63.75"),
            0,
            "the setsid child outlived the run"
        );
    }

    #[test]
    fn a_signal_inside_is_a_signal() {
        assert_eq!(ended_inside(Ended::Exited(139)), Ended::Signalled(11));
        assert_eq!(ended_inside(Ended::Exited(3)), Ended::Exited(3));
        assert_eq!(ended_inside(Ended::TimedOut), Ended::TimedOut);
    }
}
