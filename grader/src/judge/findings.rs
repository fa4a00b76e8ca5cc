//! The CPU emulator's findings in a run: each line it prints on stderr
//! after `kernels::emulator_output::FINDING_PREFIX` (a race, an
//! out-of-bounds or misaligned access, a barrier not every thread reaches),
//! which the student reads with its block, thread, address and `kernel.cu`
//! line, as they would a sanitizer's. The grader's runs carry on past what
//! a GPU carries on past (`kernels::emulator_output::CARRY_ON_VARIABLE`),
//! so a run's verdict is its answer's, as on a GPU, and the findings cost
//! the memory-safety point (`points::emulator_safety`).

use kernels::emulator_output::FINDING_PREFIX;

use crate::record::outcome::{Finding, FindingKind};

/// What the emulator said about a run on stderr, each finding with its
/// kind and `kernel.cu` line.
pub fn findings(stderr: &str) -> Vec<Finding> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(FINDING_PREFIX))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|text| Finding {
            kind: kind(text),
            line: kernel_line(text),
            text: text.to_owned(),
        })
        .collect()
}

/// What a finding is, by the emulator's words for it.
fn kind(text: &str) -> FindingKind {
    [
        ("shared-memory race", FindingKind::SharedMemoryRace),
        ("global-memory conflict", FindingKind::GlobalMemoryConflict),
        ("out-of-bounds", FindingKind::OutOfBounds),
        ("misaligned", FindingKind::Misaligned),
        ("barrier not reached by every thread", FindingKind::Barrier),
        ("uninitialised", FindingKind::Uninitialised),
    ]
    .into_iter()
    .find(|(words, _)| text.contains(words))
    .map_or(FindingKind::Other, |(_, kind)| kind)
}

/// The first `kernel.cu:N` a finding names.
fn kernel_line(text: &str) -> Option<u32> {
    let at = text.find("kernel.cu:")? + "kernel.cu:".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_the_emulator_s_lines_only_with_kind_and_line() {
        let stderr = "warning: something\n\
            cuda-course emulator: shared-memory race in kernel `dot` at shared address 0x10: \
            block (0,0,0) thread (1,0,0) read it (`ld.shared.f32` at kernel.cu:41)\n\
            cuda-course: no NVIDIA GPU in use\n\
            cuda-course emulator: kernel `dot` block (0,0,0): barrier not reached by every \
            thread: thread (0,0,0) waits at `bar.sync` at kernel.cu:47 (PTX line 124)\n";
        let found = findings(stderr);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            (found[0].kind, found[0].line),
            (FindingKind::SharedMemoryRace, Some(41))
        );
        assert!(found[0].text.starts_with("shared-memory race"));
        assert_eq!(
            (found[1].kind, found[1].line),
            (FindingKind::Barrier, Some(47))
        );
        assert!(findings("").is_empty());
    }

    #[test]
    fn a_finding_without_a_kernel_line_keeps_its_kind() {
        let found = findings("cuda-course emulator: misaligned access somewhere\n");
        assert_eq!(
            (found[0].kind, found[0].line),
            (FindingKind::Misaligned, None)
        );
    }
}
