//! The CPU emulator's findings in a run: each line it prints on stderr
//! after `kernels::emulator_output::FINDING_PREFIX` (a race, an
//! out-of-bounds or misaligned access, a barrier not every thread reaches)
//! fails the run, and the student reads it with its block, thread, address
//! and `kernel.cu` line, as they would a sanitizer's.

use kernels::emulator_output::FINDING_PREFIX;

use crate::record::outcome::{Failure, Finding, FindingKind, Verdict};

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

/// A run's verdict once the emulator found something: a report that passed
/// anyway did not check the launch the emulator failed. Other verdicts
/// stand, the findings beside them.
pub fn with_findings(verdict: Verdict, found: &[Finding]) -> Verdict {
    match verdict {
        Verdict::Passed if !found.is_empty() => Verdict::Failed {
            failure: Failure::UncheckedLaunch,
        },
        other => other,
    }
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
    fn a_passing_report_with_a_finding_did_not_check_its_launch() {
        let found = findings("cuda-course emulator: misaligned access somewhere\n");
        assert_eq!(found[0].line, None);
        assert_eq!(
            with_findings(Verdict::Passed, &found),
            Verdict::Failed {
                failure: Failure::UncheckedLaunch
            }
        );
        assert_eq!(with_findings(Verdict::Passed, &[]), Verdict::Passed);
        let crashed = Verdict::Crashed { signal: 11 };
        assert_eq!(with_findings(crashed.clone(), &found), crashed);
    }
}
