//! What a student's build may leave, bounded: each file a build writes
//! (the sandbox's `RLIMIT_FSIZE`, `confine::sandbox::MAX_BUILD_FILE`: the
//! compiler or linker stops at it), each binary the bundle keeps, and the
//! student's build folder, whose outputs are theirs alone (the
//! dependencies in it are hard links to the class's). A build past a limit
//! is refused as a build error that names it, and nothing of it goes into
//! the bundle. Threat model: a few lines of Rust or CUDA make a file as
//! large as they like (`static A: [u8; 200 << 20]`, a large initialised
//! `__device__` array, `include_bytes!` of a large file of the
//! submission's): a 200 MiB static array made a 1.3 GB bundle for one
//! exercise, and a class of them would fill the disk of the build node and
//! the GPU node's transfer. An honest exercise's binary is about 5 MiB
//! (release, with cust, clap and serde), a student's build folder's own
//! outputs a few tens of MiB for all eight exercises with their canary
//! builds.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::confine::sandbox::MAX_BUILD_FILE;

/// The largest binary the bundle keeps: any file a build writes stops
/// there in the sandbox already.
pub const MAX_BINARY: u64 = MAX_BUILD_FILE;

/// The most a student's build folder may hold of its own (files that are
/// not links to the class's dependencies), all their exercises together.
pub const MAX_BUILD_FOLDER: u64 = 1 << 30;

/// The most of a build's messages kept (results.json, the feedback).
pub const MAX_BUILD_ERRORS: usize = 64 << 10;

/// Why the binary at `path` is refused: over [`MAX_BINARY`]; None where
/// it is kept (or cannot be read: the bundle's copy then fails by name).
pub fn binary_refused(path: &Path) -> Option<String> {
    let bytes = path.metadata().ok()?.len();
    (bytes > MAX_BINARY).then(|| {
        format!(
            "the binary is {} MiB, over the grader's limit of {} MiB on a build's file \
             (a large static array, or include_bytes! of a large file?)",
            bytes >> 20,
            MAX_BINARY >> 20
        )
    })
}

/// Why the student's build folder `target` is refused: its own files hold
/// more than [`MAX_BUILD_FOLDER`]; None where it is within.
pub fn folder_refused(target: &Path) -> Option<String> {
    let own: u64 = walkdir::WalkDir::new(target)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.metadata().ok())
        .filter(|m| m.is_file() && m.nlink() == 1)
        .map(|m| m.len())
        .sum();
    (own > MAX_BUILD_FOLDER).then(|| {
        format!(
            "the build folder holds {} MiB of its own, over the grader's limit of {} MiB \
             for a student's builds",
            own >> 20,
            MAX_BUILD_FOLDER >> 20
        )
    })
}

/// A build's messages as kept: at most [`MAX_BUILD_ERRORS`], and where a
/// file of the build passed [`MAX_BUILD_FILE`] (the compiler or linker
/// killed by `SIGXFSZ`), a line that says so.
pub fn errors(said: &str) -> String {
    let mut kept = crate::bounded::cut_text(said, MAX_BUILD_ERRORS);
    // Cargo names the signal by its number alone (`(signal: 25)`), the
    // linker by its words.
    let by_number = format!("(signal: {})", libc::SIGXFSZ);
    if said.contains(&by_number)
        || said.contains("SIGXFSZ")
        || said.contains("ile size limit exceeded")
    {
        kept.push_str(&format!(
            "\nA file of the build passed the grader's limit of {} MiB on any file a build \
             writes (a large static array, or include_bytes! of a large file?).",
            MAX_BUILD_FILE >> 20
        ));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_or_folder_past_its_limit_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("dot-sm--ann");
        let file = std::fs::File::create(&binary).unwrap();
        file.set_len(MAX_BINARY).unwrap();
        assert_eq!(binary_refused(&binary), None);
        assert_eq!(folder_refused(dir.path()), None);
        file.set_len(MAX_BINARY + 1).unwrap();
        let said = binary_refused(&binary).unwrap();
        assert!(said.contains("64 MiB"), "{said}");
        // Files of its own past the folder's limit; links to the class's
        // dependencies do not count.
        for k in 0..(MAX_BUILD_FOLDER / MAX_BINARY) {
            let own = dir.path().join(format!("own{k}"));
            std::fs::File::create(&own)
                .unwrap()
                .set_len(MAX_BINARY)
                .unwrap();
        }
        let said = folder_refused(dir.path()).unwrap();
        assert!(said.contains("1024 MiB for a student"), "{said}");
        let linked = tempfile::tempdir().unwrap();
        for k in 0..(MAX_BUILD_FOLDER / MAX_BINARY + 1) {
            let from = dir.path().join(format!("own{k}"));
            if from.exists() {
                std::fs::hard_link(&from, linked.path().join(format!("link{k}"))).unwrap();
            }
        }
        assert_eq!(folder_refused(linked.path()), None);
    }

    #[test]
    fn a_file_size_signal_is_explained_and_long_messages_are_cut() {
        for killed in [
            "error: could not compile `dot-sm` (signal: 25, SIGXFSZ: file size limit exceeded)",
            "process didn't exit successfully: `rustc --crate-name dot_sm` (signal: 25)",
            "collect2: fatal error: ld terminated with signal 25 [File size limit exceeded]",
        ] {
            let said = errors(killed);
            assert!(
                said.ends_with("include_bytes! of a large file?)."),
                "{said}"
            );
        }
        assert!(!errors("error[E0425]: cannot find value `n2` (signal: 9)").contains("limit"));
        let long = errors(&"e".repeat(1 << 20));
        assert!(long.len() < MAX_BUILD_ERRORS + 100 && long.ends_with("more bytes cut]"));
    }
}
