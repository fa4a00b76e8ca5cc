//! The connection to the broker: opened on the first call from the socket
//! [`FD_VARIABLE`] names, one lock over it so calls from any thread are
//! asked and answered one at a time, and every call's body run so that no
//! panic crosses into C. Without the variable, or once the socket breaks,
//! every call answers `CUDA_ERROR_NO_DEVICE` and one line on stderr says
//! why.

use std::collections::HashMap;
use std::ffi::c_void;
use std::io::Write as _;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use kernels::broker_wire::{FD_VARIABLE, FD_VARIABLE_C, Reply, Request, VERSION, frame};

use crate::codes::{CuResult, NO_DEVICE, SUCCESS};
use crate::host_memory::{Mapping, Regions, Staging};

/// Why a call did not succeed.
pub enum Fault {
    /// The call failed with this code.
    Code(CuResult),
    /// The connection is unusable: why, for the one line on stderr.
    Broken(String),
}

impl From<CuResult> for Fault {
    fn from(code: CuResult) -> Fault {
        Fault::Code(code)
    }
}

/// The most refusal reasons printed, so a program that loops on a refused
/// call does not flood its own stderr.
const MAX_REASONS_SHOWN: u32 = 20;

/// Prints one line on stderr, never panicking.
pub fn say(line: &str) {
    static SHOWN: Mutex<u32> = Mutex::new(0);
    let mut shown = SHOWN.lock().unwrap_or_else(|p| p.into_inner());
    *shown += 1;
    if *shown <= MAX_REASONS_SHOWN {
        let _ = writeln!(std::io::stderr(), "cuda-course broker: {line}");
    }
}

/// The call fails with `code`, and stderr says why.
pub fn refuse(code: CuResult, reason: &str) -> Fault {
    say(reason);
    Fault::Code(code)
}

/// A function the program holds: its module and its parameters' sizes.
pub struct Function {
    pub module: u64,
    pub sizes: Vec<u32>,
}

/// The open connection.
pub struct Connection {
    socket: OwnedFd,
    /// The process that opened it: a child after `fork` cannot share it.
    pid: u32,
    pub staging: Staging,
    pub regions: Regions,
    pub functions: HashMap<u64, Function>,
}

enum State {
    Unopened,
    Open(Connection),
    Dead,
}

static STATE: Mutex<State> = Mutex::new(State::Unopened);

/// Runs `body` on the connection (opening it on the first call) and turns
/// its outcome into the call's CUresult.
pub fn with(body: impl FnOnce(&mut Connection) -> Result<(), Fault>) -> CuResult {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
        if let State::Unopened = *state {
            *state = match Connection::open() {
                Ok(connection) => State::Open(connection),
                Err(why) => {
                    say(&format!(
                        "{why}; every CUDA call answers CUDA_ERROR_NO_DEVICE"
                    ));
                    State::Dead
                }
            };
        }
        let State::Open(connection) = &mut *state else {
            return NO_DEVICE;
        };
        // SAFETY: getpid has no preconditions.
        if unsafe { libc::getpid() } as u32 != connection.pid {
            say("a child process cannot use its parent's connection to the GPU broker");
            return NO_DEVICE;
        }
        match body(connection) {
            Ok(()) => SUCCESS,
            Err(Fault::Code(code)) => code,
            Err(Fault::Broken(why)) => {
                say(&format!(
                    "{why}; every later CUDA call answers CUDA_ERROR_NO_DEVICE"
                ));
                *state = State::Dead;
                NO_DEVICE
            }
        }
    }));
    outcome.unwrap_or(NO_DEVICE)
}

impl Connection {
    fn open() -> Result<Connection, String> {
        // SAFETY: getenv with a NUL-terminated name.
        let value = unsafe { libc::getenv(FD_VARIABLE_C.as_ptr()) };
        if value.is_null() {
            return Err(format!(
                "{FD_VARIABLE} is not set: this libcuda.so.1 reaches a GPU only through the grader's broker"
            ));
        }
        // SAFETY: getenv returned a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(value) }.to_string_lossy();
        let fd: RawFd = text
            .parse()
            .ok()
            .filter(|&fd| fd >= 0 && is_socket(fd))
            .ok_or_else(|| format!("{FD_VARIABLE}={text} is not an open socket"))?;
        // Children the program starts do not inherit the connection.
        // SAFETY: fcntl on a descriptor the environment handed us to own.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        // SAFETY: as above; the connection owns it from here.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        let hello = Request::Hello {
            version: VERSION,
            pid,
        };
        let (reply, fds) =
            exchange(fd, &hello).map_err(|why| format!("the broker did not answer: {why}"))?;
        let staging = match (reply, fds.into_iter().next()) {
            (Reply::Hello { staging_bytes }, Some(fd)) => Mapping::map(fd, staging_bytes),
            (Reply::Failed { reason, .. }, _) => {
                return Err(format!("the broker refused: {reason}"));
            }
            _ => None,
        };
        let staging = staging
            .filter(|mapping| mapping.bytes >= 2)
            .map(Staging::new)
            .ok_or("the broker's staging area could not be mapped")?;
        Ok(Connection {
            socket,
            pid,
            staging,
            regions: Regions::default(),
            functions: HashMap::new(),
        })
    }

    /// Asks; a failure's reason goes to stderr.
    pub fn ask_with_fds(&mut self, request: &Request) -> Result<(Reply, Vec<OwnedFd>), Fault> {
        use std::os::fd::AsRawFd;
        let (reply, fds) = exchange(self.socket.as_raw_fd(), request).map_err(Fault::Broken)?;
        match reply {
            Reply::Failed { code, reason } => {
                if !reason.is_empty() {
                    say(&reason);
                }
                Err(Fault::Code(code))
            }
            reply => Ok((reply, fds)),
        }
    }

    pub fn ask(&mut self, request: &Request) -> Result<Reply, Fault> {
        self.ask_with_fds(request).map(|(reply, _)| reply)
    }

    pub fn done(&mut self, request: &Request) -> Result<(), Fault> {
        match self.ask(request)? {
            Reply::Done => Ok(()),
            other => Err(unexpected(request, &other)),
        }
    }

    pub fn int(&mut self, request: &Request) -> Result<i64, Fault> {
        match self.ask(request)? {
            Reply::Int(v) => Ok(v),
            other => Err(unexpected(request, &other)),
        }
    }

    pub fn value(&mut self, request: &Request) -> Result<u64, Fault> {
        match self.ask(request)? {
            Reply::Value(v) => Ok(v),
            other => Err(unexpected(request, &other)),
        }
    }

    pub fn pair(&mut self, request: &Request) -> Result<(u64, u64), Fault> {
        match self.ask(request)? {
            Reply::Pair(a, b) => Ok((a, b)),
            other => Err(unexpected(request, &other)),
        }
    }
}

/// The broker answered something other than what `request` asks for.
pub fn unexpected(request: &Request, reply: &Reply) -> Fault {
    let first_word = |debug: String| {
        let word = debug.split(['(', ' ', '{']).next().unwrap_or("?");
        word.to_owned()
    };
    Fault::Broken(format!(
        "the broker answered {} with {}",
        first_word(format!("{request:?}")),
        first_word(format!("{reply:?}"))
    ))
}

fn is_socket(fd: RawFd) -> bool {
    // SAFETY: fstat writes into the struct it is given.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; a bad descriptor is an error returned.
    unsafe { libc::fstat(fd, &mut stat) == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFSOCK }
}

/// Sends `request` and reads its reply, with any descriptors it carries.
fn exchange(socket: RawFd, request: &Request) -> Result<(Reply, Vec<OwnedFd>), String> {
    let bytes = frame(&request.encode());
    let mut sent = 0;
    while sent < bytes.len() {
        let rest = &bytes[sent..];
        // SAFETY: a live buffer of its length; no SIGPIPE if the broker is gone.
        let n = unsafe {
            libc::send(
                socket,
                rest.as_ptr().cast::<c_void>(),
                rest.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        match n {
            n if n > 0 => sent += n as usize,
            _ if interrupted() => {}
            _ => {
                return Err(format!(
                    "cannot write to its socket ({})",
                    std::io::Error::last_os_error()
                ));
            }
        }
    }
    let mut fds = Vec::new();
    let mut header = [0u8; 4];
    receive_exact(socket, &mut header, &mut fds)?;
    let length = kernels::broker_wire::frame_length(header).map_err(|e| e.to_string())?;
    let mut body = vec![0u8; length];
    receive_exact(socket, &mut body, &mut fds)?;
    let reply = Reply::decode(&body).map_err(|e| format!("its answer does not decode: {e}"))?;
    Ok((reply, fds))
}

fn interrupted() -> bool {
    std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
}

/// Fills `buffer` from the socket, keeping descriptors that come along.
fn receive_exact(socket: RawFd, buffer: &mut [u8], fds: &mut Vec<OwnedFd>) -> Result<(), String> {
    let mut got = 0;
    while got < buffer.len() {
        let mut iov = libc::iovec {
            iov_base: buffer[got..].as_mut_ptr().cast(),
            iov_len: buffer.len() - got,
        };
        // Room for a few descriptors' control message, aligned.
        let mut control = [0u64; 16];
        // SAFETY: msghdr is plain data; zeroed is a valid empty header.
        let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = size_of_val(&control);
        // SAFETY: the header points at live buffers of the lengths it gives.
        let n = unsafe { libc::recvmsg(socket, &mut message, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 && interrupted() {
            continue;
        }
        if n <= 0 {
            return Err("its socket closed".into());
        }
        take_descriptors(&message, fds);
        got += n as usize;
    }
    Ok(())
}

/// The descriptors an `SCM_RIGHTS` message carried, owned from now on.
fn take_descriptors(message: &libc::msghdr, fds: &mut Vec<OwnedFd>) {
    // SAFETY: the CMSG macros walk the control buffer recvmsg filled, within
    // the length it set.
    unsafe {
        let mut header = libc::CMSG_FIRSTHDR(message);
        while !header.is_null() {
            if (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(header).cast::<RawFd>();
                let bytes = (*header).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for i in 0..bytes / size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            header = libc::CMSG_NXTHDR(message, header);
        }
    }
}
