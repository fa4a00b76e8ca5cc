//! Which descriptors a child starts with: stdin, stdout, stderr and the
//! ones the grader passes on purpose (the trace's pipe, the files bubblewrap
//! copies in). Every other descriptor the grader holds is closed when the
//! child execs, above all those it inherited without close-on-exec from
//! whoever started it: a cron wrapper's log, `time -o`'s file, a lock. A
//! build could read them through `/proc/self/fd/N` (`include_bytes!`) and a
//! run could read or append to them.

use std::io;
use std::os::fd::RawFd;

/// The most descriptors swept one by one where `close_range` is missing.
const MAX_SWEPT: libc::rlim_t = 1 << 16;

/// In the child, between fork and exec: every descriptor from 3 up made
/// close-on-exec, then the flag taken off `keep` again. Close-on-exec
/// rather than closed: the standard library's own pipe, which reports a
/// failed exec, must stay open until the exec. Only system calls, no
/// allocation: safe after fork.
pub fn close_others_at_exec(keep: &[RawFd]) -> io::Result<()> {
    // SAFETY: close_range takes numbers only; with CLOSE_RANGE_CLOEXEC it
    // closes nothing, it sets a flag on each open descriptor (Linux 5.11).
    let swept = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if !swept {
        // Older kernels: each descriptor below the limit on open files.
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let last = limit.rlim_cur.min(MAX_SWEPT) as RawFd;
        for fd in 3..last {
            // SAFETY: fcntl on a number; a closed one answers EBADF.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            if flags < 0 {
                continue;
            }
            // SAFETY: as above, on a descriptor that is open.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    for &fd in keep {
        // SAFETY: fcntl on a descriptor the caller keeps open until exec.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// A copy of `file`'s descriptor, numbered 100 or more (apart from
    /// those a child opens itself), without close-on-exec, as one inherited
    /// from a shell would be.
    pub(crate) fn inheritable(file: &std::fs::File) -> std::os::fd::OwnedFd {
        use std::os::fd::FromRawFd;
        // SAFETY: F_DUPFD makes a new descriptor without close-on-exec,
        // which the OwnedFd then owns.
        let fd = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, 100) };
        assert!(fd >= 100);
        // SAFETY: fd is open and owned by nothing else.
        unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
    }

    #[test]
    fn a_child_keeps_only_what_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("log")).unwrap();
        let kept = std::fs::File::create(dir.path().join("kept")).unwrap();
        let (log, kept) = (inheritable(&log), inheritable(&kept));
        let (log_fd, kept_fd) = (log.as_raw_fd(), kept.as_raw_fd());
        let listing = |sweep: bool| {
            let mut command = Command::new("/bin/sh");
            command.args(["-c", "ls /proc/self/fd"]);
            if sweep {
                // SAFETY: close_others_at_exec is safe after fork.
                unsafe { command.pre_exec(move || close_others_at_exec(&[kept_fd])) };
            }
            let output = command.output().unwrap();
            assert!(output.status.success());
            let fds: Vec<RawFd> = String::from_utf8_lossy(&output.stdout)
                .split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect();
            fds
        };
        // Without the sweep the log is passed on: the test can fail.
        assert!(listing(false).contains(&log_fd));
        let fds = listing(true);
        assert!(!fds.contains(&log_fd), "{fds:?}");
        assert!(fds.contains(&kept_fd), "{fds:?}");
        // A failed exec is still reported, through the standard library's
        // own close-on-exec pipe.
        let mut missing = Command::new("/no/such/program");
        // SAFETY: as above.
        unsafe { missing.pre_exec(|| close_others_at_exec(&[])) };
        assert_eq!(missing.spawn().unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
