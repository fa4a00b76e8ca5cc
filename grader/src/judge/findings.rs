//! The CPU emulator's findings in a run's verdict: each line it prints on
//! stderr (a race, an out-of-bounds or misaligned access, a barrier not
//! every thread reaches) fails the run, and the student reads it with its
//! block, thread, address and `kernel.cu` line, as they would a sanitizer's.

use crate::judge::verdict::Verdict;

/// How the emulator starts each line it prints on stderr.
pub const FINDING_PREFIX: &str = "cuda-course emulator: ";

/// A run's verdict with the emulator's findings added: they fail the run
/// (the emulator failed the launch), and the student reads each one with
/// its block, thread, address and `kernel.cu` line, as they would a
/// sanitizer's.
pub fn with_findings(verdict: Verdict, stderr: &str) -> Verdict {
    let found = findings(stderr);
    if found.is_empty() {
        return verdict;
    }
    let said = format!("the CPU emulator found: {}", found.join("\n"));
    match verdict {
        Verdict::CudaError { name, message } => Verdict::CudaError {
            name,
            message: format!("{message}\n{said}"),
        },
        Verdict::Failed { summary, hint } => Verdict::Failed {
            summary: format!("{summary}\n{said}"),
            hint,
        },
        // A launch the emulator failed, and a report that passed anyway:
        // the host code did not check the launch.
        Verdict::Passed => Verdict::Failed {
            summary: said,
            hint: Some("check every launch's result: synchronize and propagate its error".into()),
        },
        other => other,
    }
}

/// What the emulator said about a run on stderr: each finding (a race, an
/// out-of-bounds or misaligned access, a barrier, an unsupported
/// instruction) with its block, thread, address and `kernel.cu` line.
pub fn findings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(FINDING_PREFIX))
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_the_emulator_s_lines_only() {
        let stderr = "warning: something\n\
            cuda-course emulator: shared-memory race in kernel `dot` at shared address 0x10: \
            block (0,0,0) thread (1,0,0) read it (`ld.shared.f32` at kernel.cu:41)\n\
            cuda-course: no NVIDIA GPU in use\n";
        let found = findings(stderr);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("shared-memory race") && found[0].ends_with("kernel.cu:41)"));
        assert!(findings("").is_empty());
    }
}
