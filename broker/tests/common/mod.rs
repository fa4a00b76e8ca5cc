//! What the broker's tests share: where the built libraries and binaries
//! are, the client put in place as `libcuda.so.1`, a program run through
//! the broker on the CPU emulator, and a raw session spoken to directly.

#![allow(dead_code, reason = "each test file uses its own part of this")]

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use kernels::broker_wire::{Reply, Request, VERSION, frame, read_frame};

/// target/<profile>/.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/..")
        .to_path_buf()
}

/// A library cargo built, in target/<profile>/ or its deps/ (`cargo test`
/// alone leaves it there), the newer where both are.
fn library(name: &str) -> PathBuf {
    let dir = profile_dir();
    let candidates = [dir.join(name), dir.join("deps").join(name)];
    let modified = |p: &PathBuf| p.metadata().and_then(|m| m.modified()).ok();
    candidates
        .iter()
        .filter(|p| p.exists())
        .max_by_key(|p| modified(p))
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {} or its deps/", dir.display()))
}

/// The CPU emulator's library: the broker's backend here.
pub fn emulator() -> PathBuf {
    library("libemulator.so")
}

/// A folder holding the client as `libcuda.so.1`, for `LD_LIBRARY_PATH`.
pub fn client_dir() -> PathBuf {
    let client = library("libcuda_course_broker_client.so");
    linked_as_libcuda(&client, "broker-client-lib")
}

/// `library` linked as `libcuda.so.1` in target/<profile>/`folder`/; the
/// link replaced whole, as tests running at once each make it.
fn linked_as_libcuda(library: &Path, folder: &str) -> PathBuf {
    let dir = profile_dir().join(folder);
    std::fs::create_dir_all(&dir).expect("a folder for the library");
    let fresh = dir.join(format!(
        ".libcuda.so.1.{}.{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_file(&fresh);
    std::os::unix::fs::symlink(library, &fresh).expect("a link to the library");
    std::fs::rename(&fresh, dir.join("libcuda.so.1")).expect("the link in place");
    dir
}

/// The emulator as `libcuda.so.1`, for running a binary directly.
pub fn emulator_dir() -> PathBuf {
    linked_as_libcuda(&emulator(), "broker-test-emulator-lib")
}

pub fn broker() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cuda-course-broker"))
}

/// A course binary cargo built, or None (with a note) where it was not:
/// CI builds every binary first and sets CUDA_COURSE_REQUIRE_BINARIES, so
/// there a missing one fails the test.
pub fn course_binary(name: &str) -> Option<PathBuf> {
    let path = profile_dir().join(name);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CUDA_COURSE_REQUIRE_BINARIES").is_none(),
        "{} is not built (cargo build -p {name})",
        path.display()
    );
    eprintln!(
        "{} is not built: run cargo build -p {name} first",
        path.display()
    );
    None
}

/// Runs `program args` through a broker on the emulator (extra broker
/// flags in `flags`), writing its record to `record`.
pub fn through_broker(program: &Path, args: &[&str], flags: &[&str], record: &Path) -> Output {
    broker()
        .args(["--driver".as_ref(), emulator().as_os_str()])
        .arg("--record")
        .arg(record)
        .args(flags)
        .arg("--")
        .arg(program)
        .args(args)
        .env("LD_LIBRARY_PATH", client_dir())
        .env_remove("CUDA_VISIBLE_DEVICES")
        .output()
        .expect("the broker runs")
}

/// Runs `program args` directly on the emulator.
pub fn directly(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("LD_LIBRARY_PATH", emulator_dir())
        .env_remove("CUDA_VISIBLE_DEVICES")
        .output()
        .expect("the program runs")
}

/// A broker serving the test itself, over a socket pair (`--fd`).
pub struct RawSession {
    pub socket: UnixStream,
    pub broker: Child,
    pub record: PathBuf,
    _dir: tempfile::TempDir,
}

impl RawSession {
    /// Starts the broker with `flags` and says hello.
    pub fn open(flags: &[&str]) -> RawSession {
        let session = RawSession::unopened(flags);
        let reply = session.ask(&Request::Hello {
            version: VERSION,
            pid: 4242,
        });
        assert!(matches!(reply, Reply::Hello { .. }), "{reply:?}");
        session
    }

    /// Starts the broker with `flags`; nothing said yet.
    pub fn unopened(flags: &[&str]) -> RawSession {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let record = dir.path().join("record.txt");
        let (ours, theirs) = UnixStream::pair().expect("a socket pair");
        let fd = theirs.as_raw_fd();
        let mut command = broker();
        command
            .args(["--driver".as_ref(), emulator().as_os_str()])
            .arg("--record")
            .arg(&record)
            .args(flags)
            .args(["--fd", &fd.to_string()])
            .stdout(Stdio::null())
            .env_remove("CUDA_VISIBLE_DEVICES");
        // SAFETY: between fork and exec only fcntl, async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                libc::fcntl(fd, libc::F_SETFD, 0);
                Ok(())
            });
        }
        let broker = command.spawn().expect("the broker starts");
        drop(theirs);
        RawSession {
            socket: ours,
            broker,
            record,
            _dir: dir,
        }
    }

    pub fn send_bytes(&self, bytes: &[u8]) {
        use std::io::Write;
        (&self.socket).write_all(bytes).expect("the broker reads");
    }

    pub fn ask(&self, request: &Request) -> Reply {
        self.send_bytes(&frame(&request.encode()));
        self.reply()
    }

    pub fn reply(&self) -> Reply {
        let body = read_frame(&mut &self.socket)
            .expect("a frame")
            .expect("the broker answers");
        Reply::decode(&body).expect("a reply")
    }

    /// Ends the session and returns the broker's exit status and record.
    pub fn close(mut self) -> (std::process::ExitStatus, String) {
        drop(self.socket);
        let status = self.broker.wait().expect("the broker exits");
        let record = std::fs::read_to_string(&self.record).unwrap_or_default();
        (status, record)
    }
}

/// The failure code of a reply, or 0.
pub fn code(reply: &Reply) -> u32 {
    match reply {
        Reply::Failed { code, .. } => *code,
        _ => 0,
    }
}

/// Compiles a C program against the client (its soname, libcuda.so.1).
pub fn compile_c(source: &str, dir: &Path, name: &str) -> PathBuf {
    let file = dir.join(format!("{name}.c"));
    std::fs::write(&file, source).expect("the C source written");
    let program = dir.join(name);
    let status = Command::new("cc")
        .arg(&file)
        .arg("-o")
        .arg(&program)
        .arg("-L")
        .arg(client_dir())
        .arg("-l:libcuda.so.1")
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc {}", file.display());
    program
}
