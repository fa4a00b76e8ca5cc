//! `GRADER_RUN_AS=UID:GID`: where bubblewrap cannot make its namespaces
//! (a Docker container under its default seccomp profile, as Gradescope's
//! and PrairieLearn's graders are), a root grader started with
//! `--no-sandbox` still starts every run of student code as this
//! unprivileged user, which the platform's files are closed to
//! (`grader autograder`). It confines by file permissions alone: no
//! namespace, so the run sees the machine's processes, network and every
//! file open to all; nothing outlives its process group but what it
//! `setsid`s away, which the caller kills by uid afterwards.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The variable naming the user, as `UID:GID` in decimal.
pub const RUN_AS_ENV: &str = "GRADER_RUN_AS";

/// Processes and threads the user may have at once (per uid, so all of
/// the run's together): enough for the emulator's threads, not for a fork
/// bomb.
const PROCESSES: libc::rlim_t = 1024;

/// An unprivileged user to run student code as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct User {
    pub uid: u32,
    pub gid: u32,
}

/// `UID:GID`, neither of them root's.
pub fn parse(text: &str) -> std::result::Result<User, String> {
    let wrong = || format!("{RUN_AS_ENV}={text:?}: give UID:GID, two numbers other than 0");
    let (uid, gid) = text.split_once(':').ok_or_else(wrong)?;
    let (uid, gid) = (
        uid.parse().map_err(|_| wrong())?,
        gid.parse().map_err(|_| wrong())?,
    );
    if uid == 0 || gid == 0 {
        return Err(wrong());
    }
    Ok(User { uid, gid })
}

/// The user the environment names, read once; an error where it is
/// malformed or the grader is not root (only root can become another
/// user).
pub fn from_env() -> Result<Option<User>> {
    static READ: OnceLock<std::result::Result<Option<User>, String>> = OnceLock::new();
    let read = READ.get_or_init(|| {
        let Some(value) = std::env::var_os(RUN_AS_ENV) else {
            return Ok(None);
        };
        let user = parse(&value.to_string_lossy())?;
        // SAFETY: geteuid only reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            return Err(format!(
                "{RUN_AS_ENV} is set, and only a grader run as root can start runs as another user"
            ));
        }
        Ok(Some(user))
    });
    read.clone().map_err(Error::Usage)
}

/// Makes `command` start as `user`: no supplementary groups (std drops
/// them with the uid), its gid and uid, and a cap on its processes.
pub fn apply(command: &mut Command, user: User) {
    command.uid(user.uid).gid(user.gid);
    let limit = || {
        let cap = libc::rlimit {
            rlim_cur: PROCESSES,
            rlim_max: PROCESSES,
        };
        // SAFETY: setrlimit reads the struct it is given; after the uid
        // changed (std sets it before the pre_exec closures), lowering a
        // limit needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &cap) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the closure calls only setrlimit, async-signal-safe, and
    // allocates nothing.
    unsafe { command.pre_exec(limit) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_two_numbers_other_than_root_s_name_a_user() {
        assert_eq!(
            parse("64055:64055"),
            Ok(User {
                uid: 64055,
                gid: 64055
            })
        );
        for wrong in [
            "",
            "64055",
            "0:64055",
            "64055:0",
            "nobody:nogroup",
            "1:2:3",
            "-1:2",
        ] {
            let said = parse(wrong).unwrap_err();
            assert!(said.contains("UID:GID"), "{wrong}: {said}");
        }
    }

    #[test]
    fn a_command_started_as_the_user_is_that_user_with_no_other_group() {
        // SAFETY: geteuid only reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: only root can start a command as another user");
            return;
        }
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "id -u; id -g; id -G; sed -n 's/^Max processes *\\([0-9]*\\).*/\\1/p' /proc/self/limits",
        ]);
        apply(
            &mut command,
            User {
                uid: 64055,
                gid: 64056,
            },
        );
        let output = command.output().unwrap();
        let said = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            said.lines().collect::<Vec<_>>(),
            ["64055", "64056", "64056", "1024"]
        );
    }
}
