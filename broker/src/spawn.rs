//! `cuda-course-broker [OPTIONS] -- PROGRAM [ARGS]`: the broker starts the
//! program itself with the client's end of a fresh socket pair, serves it,
//! and ends with its exit code: what tests and the GPU check script use
//! where the grader would set the socket up itself (`--fd`).

use std::ffi::OsString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;

use kernels::broker_wire::FD_VARIABLE;

use crate::config::Config;
use crate::driver::Driver;
use crate::session::{self, Served};

/// Runs `program`, serving it; its exit status and the session.
pub fn run(program: &[OsString], driver: &Driver, config: &Config) -> io::Result<(i32, Served)> {
    let (broker_end, client_end) = UnixStream::pair()?;
    let client_fd = client_end.as_raw_fd();
    let Some((name, args)) = program.split_first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no program"));
    };
    let mut command = Command::new(name);
    command.args(args).env(FD_VARIABLE, client_fd.to_string());
    // SAFETY: between fork and exec only fcntl, which is async-signal-safe:
    // the program inherits its end (std made it close-on-exec).
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(client_fd, libc::F_SETFD, 0) == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        });
    }
    let mut child = command.spawn()?;
    drop(client_end);
    // A kernel's printf reaches the broker's stdout (the driver writes it
    // there): keep the program's stdout its own.
    // SAFETY: dup2 on the process's own standard descriptors.
    unsafe { libc::dup2(2, 1) };
    let served = session::serve(&broker_end, driver, config);
    drop(broker_end);
    let status = child.wait()?;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    Ok((code, served?))
}
