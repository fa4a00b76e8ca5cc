//! The CPU emulator's findings in a run: each line it prints on stderr
//! after `kernels::emulator_output::FINDING_PREFIX` (a race, an
//! out-of-bounds or misaligned access, a barrier not every thread reaches),
//! read in the line grammar both ends share
//! (`kernels::emulator_output::Finding`): the kind and the `kernel.cu` line
//! from the finding's head, never from its words, which the student reads
//! with its block, thread, address and line, as they would a sanitizer's.
//! The grader's runs carry on past what a GPU carries on past
//! (`kernels::emulator_output::CARRY_ON_VARIABLE`), so a run's verdict is
//! its answer's, as on a GPU, and the findings cost the memory-safety
//! point (`points::emulator_safety`).
//!
//! Threat model: the emulator runs inside the student's process, so a line
//! may be forged; a forged finding only costs its writer the point, and a
//! line without a head the grader reads (`FindingKind::Other`) counts as a
//! finding all the same, as every line after the prefix did before kinds
//! were typed.

use kernels::emulator_output::{self, FINDING_PREFIX};

use crate::record::outcome::{Finding, FindingKind};

/// What the emulator said about a run on stderr, each finding with its
/// kind and `kernel.cu` line.
pub fn findings(stderr: &str) -> Vec<Finding> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(FINDING_PREFIX))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|text| match emulator_output::Finding::parse(text) {
            Ok(said) => Finding {
                kind: said.kind,
                line: said.line,
                text: said.words,
            },
            Err(_) => Finding {
                kind: FindingKind::Other,
                line: None,
                text: text.to_owned(),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_the_emulator_s_lines_only_with_kind_and_line() {
        let stderr = "warning: something\n\
            cuda-course emulator: [shared-memory-race] block=(0,0,0) thread=(1,0,0) \
            address=0x10 line=kernel.cu:41 :: shared-memory race in kernel `dot` at shared \
            address 0x10: block (0,0,0) thread (1,0,0) read it (`ld.shared.f32` at kernel.cu:41)\n\
            cuda-course: no NVIDIA GPU in use\n\
            cuda-course emulator: [barrier] block=(0,0,0) thread=(0,0,0) line=kernel.cu:47 :: \
            kernel `dot` block (0,0,0): barrier not reached by every thread: thread (0,0,0) \
            waits at `bar.sync` at kernel.cu:47 (PTX line 124)\n";
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
    fn the_kind_is_the_head_s_whatever_the_words_say() {
        let found = findings(
            "cuda-course emulator: [misaligned] :: a shared-memory race at kernel.cu:3, \
             out-of-bounds\n",
        );
        assert_eq!(
            (found[0].kind, found[0].line),
            (FindingKind::Misaligned, None)
        );
        assert_eq!(
            found[0].text,
            "a shared-memory race at kernel.cu:3, out-of-bounds"
        );
    }

    #[test]
    fn a_line_without_a_head_is_a_finding_of_no_kind_read_whole() {
        let text = "shared-memory race in kernel `dot` at kernel.cu:41";
        let found = findings(&format!("cuda-course emulator: {text}\n"));
        assert_eq!(
            (found[0].kind, found[0].line, found[0].text.as_str()),
            (FindingKind::Other, None, text)
        );
    }
}
