//! `cuda-course-broker`: parse, open the backend, serve one client on an
//! inherited socket (`--fd`) or a program it starts (`-- PROGRAM`), write
//! the record.

use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::ExitCode;

use broker::cli::Cli;
use broker::driver::Driver;
use broker::session;
use clap::Parser;
use kernels::exit_code::ToolExit;

/// The exit code of `-- PROGRAM` where the broker itself failed.
const BROKER_FAILED: u8 = 125;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let failed = if cli.fd.is_some() {
        ExitCode::from(ToolExit::Stopped)
    } else {
        ExitCode::from(BROKER_FAILED)
    };
    match run(&cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("cuda-course-broker: {message}");
            failed
        }
    }
}

fn run(cli: &Cli) -> Result<ExitCode, String> {
    let config = cli.config()?;
    let driver = Driver::open(&config.driver)?;
    let (code, served) = match cli.fd {
        Some(fd) => {
            let socket = inherited_socket(fd)?;
            let served = session::serve(&socket, &driver, &config)
                .map_err(|err| format!("cannot open a session: {err}"))?;
            (ExitCode::from(ToolExit::Done), served)
        }
        None => {
            let (code, served) = broker::spawn::run(&cli.program, &driver, &config)
                .map_err(|err| format!("cannot run {:?}: {err}", cli.program[0]))?;
            (ExitCode::from(code.clamp(0, 255) as u8), served)
        }
    };
    if let Some(path) = &cli.record {
        write_record(path, &served.record)?;
    }
    if let Some(fd) = cli.record_fd {
        write_record_to(fd, &served.record)?;
    }
    Ok(code)
}

/// Descriptor `fd`, which must be a socket.
fn inherited_socket(fd: i32) -> Result<UnixStream, String> {
    // SAFETY: fstat writes into the struct it is given.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; a bad descriptor is an error returned.
    let is_socket = fd >= 0
        && unsafe { libc::fstat(fd, &mut stat) } == 0
        && stat.st_mode & libc::S_IFMT == libc::S_IFSOCK;
    if !is_socket {
        return Err(format!("--fd {fd} is not an open socket"));
    }
    // SAFETY: an open socket handed to this process to own.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}

/// Writes the record to the inherited descriptor `fd`, then closes it.
fn write_record_to(fd: i32, record: &str) -> Result<(), String> {
    use std::io::Write;
    // SAFETY: fcntl only asks whether the descriptor is open.
    if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(format!("--record-fd {fd} is not an open descriptor"));
    }
    // SAFETY: an open descriptor handed to this process to write and own.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(record.as_bytes())
        .map_err(|err| format!("cannot write the record to descriptor {fd}: {err}"))
}

/// Writes the record whole or not at all.
fn write_record(path: &Path, record: &str) -> Result<(), String> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, record)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|err| format!("cannot write the record {}: {err}", path.display()))
}
