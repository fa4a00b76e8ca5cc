//! What the CPU emulator (`emulator/`, standing in for libcuda.so.1) tells
//! the process that runs it, one definition for both ends: the emulator
//! writes each finding on stderr as one line, [`FINDING_PREFIX`] then a
//! [`Finding`] in its line grammar; the grader (and `cargo course check`)
//! read them back from a run's stderr with [`Finding::parse`].
//!
//! # A finding's line
//!
//! ```text
//! cuda-course emulator: [out-of-bounds] block=(3,0,0) thread=(17,0,0) address=0x7f0000200400 line=kernel.cu:41 :: kernel `dot` block (3,0,0) thread (17,0,0): out-of-bounds ...
//! ```
//!
//! After the prefix: the kind's tag in brackets ([`FindingKind::tag`]);
//! then, each where the finding has it and in this order, ` block=(x,y,z)`
//! and ` thread=(x,y,z)` (the thread that made the access or stopped, by
//! its index), ` address=0x…` (the address it touched, hex) and
//! ` line=kernel.cu:N` (the line of the student's `kernel.cu` its
//! instruction came from); then ` :: ` and the student's words, which say
//! all of it again in a sentence. The words are rendered from the typed
//! finding by the emulator and never read back for meaning: a reader takes
//! the kind and the fields from the head, so rewording a message for
//! students changes no grade. The words are one line (a line break in them
//! is written as a space).
//!
//! Threat model: the emulator is a library inside the student's process,
//! so these lines are the student's to forge or to hide. A forged line can
//! only add a finding, which costs its writer the memory-safety point;
//! hiding one is what any program that closes its stderr does, and the
//! grader's GPU grading (compute-sanitizer, outside the process) is the
//! judge of record. Parsing takes any text without panicking.

use std::fmt;

/// How the emulator starts each line it prints on stderr: a finding that
/// failed a launch (a race, an out-of-bounds or misaligned access, a
/// barrier not every thread reaches), or why it could not load the PTX.
pub const FINDING_PREFIX: &str = "cuda-course emulator: ";

/// Set, the emulator also prints each launch's instruction counts and
/// times after [`FINDING_PREFIX`] (untagged: not findings): the grader
/// clears it, so they never read as findings.
pub const STATS_VARIABLE: &str = "CUDA_COURSE_EMULATOR_STATS";

/// Set to `1`, the emulator carries on past what a GPU without a sanitizer
/// carries on past, as the grader's runs need: it prints each finding
/// after [`FINDING_PREFIX`] and lets the launch go on, so the run's answer
/// is judged as a GPU's would be and the finding costs the memory-safety
/// point, as compute-sanitizer's does. Unset (a student's own runs), the
/// first finding fails the launch, as it does under compute-sanitizer.
pub const CARRY_ON_VARIABLE: &str = "CUDA_COURSE_EMULATOR_CARRY_ON";

/// What the emulator found: one kind per way a launch or a load can fail
/// on it. The tag ([`FindingKind::tag`]) is the wire name and, kebab-case,
/// the name in the grader's results.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "protocol",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "&'static str", try_from = "String")
)]
pub enum FindingKind {
    /// Two threads of a block touch one shared word, one writing, with no
    /// barrier between.
    SharedMemoryRace,
    /// Two threads touch one global word, one writing, with nothing that
    /// orders them.
    GlobalMemoryConflict,
    /// An access outside every allocation, or outside shared, local or
    /// parameter memory.
    OutOfBounds,
    /// An access not aligned to its size.
    Misaligned,
    /// A barrier not every thread of the block reaches.
    Barrier,
    /// A value read from memory nothing wrote (shared memory a block never
    /// filled, stored to global memory; global memory no copy or store
    /// reached).
    Uninitialised,
    /// Threads waiting for lanes that never arrive.
    Deadlock,
    /// A failed `assert` in the kernel.
    Assert,
    /// `__trap()`.
    Trap,
    /// A thread that ran so long it is taken to loop forever.
    Runaway,
    /// An instruction the emulator cannot run.
    Unsupported,
    /// A launch the device's limits refuse (its shape, its shared memory).
    RefusedLaunch,
    /// PTX the emulator cannot load.
    UnloadablePtx,
    /// A bug in the emulator, not in the kernel.
    Internal,
    /// A reader's name for a line with no tag it knows (the emulator never
    /// writes it): an older emulator's, or one the program forged.
    Other,
}

/// Every kind, in the enum's order.
pub const ALL_KINDS: [FindingKind; 15] = [
    FindingKind::SharedMemoryRace,
    FindingKind::GlobalMemoryConflict,
    FindingKind::OutOfBounds,
    FindingKind::Misaligned,
    FindingKind::Barrier,
    FindingKind::Uninitialised,
    FindingKind::Deadlock,
    FindingKind::Assert,
    FindingKind::Trap,
    FindingKind::Runaway,
    FindingKind::Unsupported,
    FindingKind::RefusedLaunch,
    FindingKind::UnloadablePtx,
    FindingKind::Internal,
    FindingKind::Other,
];

impl FindingKind {
    /// The kind's stable tag: what the line's brackets hold.
    pub const fn tag(self) -> &'static str {
        match self {
            FindingKind::SharedMemoryRace => "shared-memory-race",
            FindingKind::GlobalMemoryConflict => "global-memory-conflict",
            FindingKind::OutOfBounds => "out-of-bounds",
            FindingKind::Misaligned => "misaligned",
            FindingKind::Barrier => "barrier",
            FindingKind::Uninitialised => "uninitialised",
            FindingKind::Deadlock => "deadlock",
            FindingKind::Assert => "assert",
            FindingKind::Trap => "trap",
            FindingKind::Runaway => "runaway",
            FindingKind::Unsupported => "unsupported",
            FindingKind::RefusedLaunch => "refused-launch",
            FindingKind::UnloadablePtx => "unloadable-ptx",
            FindingKind::Internal => "internal",
            FindingKind::Other => "other",
        }
    }

    /// The kind of this tag.
    pub fn from_tag(tag: &str) -> Option<FindingKind> {
        ALL_KINDS.into_iter().find(|kind| kind.tag() == tag)
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

impl From<FindingKind> for &'static str {
    fn from(kind: FindingKind) -> &'static str {
        kind.tag()
    }
}

impl TryFrom<String> for FindingKind {
    type Error = String;

    fn try_from(tag: String) -> Result<FindingKind, String> {
        FindingKind::from_tag(&tag).ok_or_else(|| {
            let tags: Vec<&str> = ALL_KINDS.iter().map(|k| k.tag()).collect();
            format!("{tag} is not a finding's kind; one of {}", tags.join(", "))
        })
    }
}

/// One finding, typed: what the emulator prints after [`FINDING_PREFIX`]
/// (its `Display` is the line's grammar) and what a reader parses back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The block, by its index (`blockIdx`).
    pub block: Option<[u32; 3]>,
    /// The thread, by its index in the block (`threadIdx`).
    pub thread: Option<[u32; 3]>,
    /// The address the access touched.
    pub address: Option<u64>,
    /// The line of the student's `kernel.cu` the instruction came from.
    pub line: Option<u32>,
    /// What the student reads: all of the above in a sentence.
    pub words: String,
}

/// Separates a finding's head from its words.
const WORDS: &str = " :: ";
/// The file `line=` names.
const KERNEL_FILE: &str = "kernel.cu:";

/// Why a line is not a finding's: what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAFinding(pub String);

impl fmt::Display for NotAFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Finding {
    /// A finding of `kind` with nothing but `words`.
    pub fn new(kind: FindingKind, words: impl Into<String>) -> Finding {
        Finding {
            kind,
            block: None,
            thread: None,
            address: None,
            line: None,
            words: words.into(),
        }
    }

    /// A finding's line after [`FINDING_PREFIX`], read back.
    pub fn parse(text: &str) -> Result<Finding, NotAFinding> {
        let bad = |why: String| Err(NotAFinding(why));
        let Some(rest) = text.strip_prefix('[') else {
            return bad("it does not start with a kind in brackets".to_owned());
        };
        let Some((tag, rest)) = rest.split_once(']') else {
            return bad("its kind's bracket is not closed".to_owned());
        };
        let kind = FindingKind::try_from(tag.to_owned()).map_err(NotAFinding)?;
        let Some((head, words)) = rest.split_once(WORDS) else {
            return bad(format!("it has no `{}` before its words", WORDS.trim()));
        };
        let mut finding = Finding::new(kind, words);
        for field in head.split(' ').filter(|f| !f.is_empty()) {
            let Some((key, value)) = field.split_once('=') else {
                return bad(format!("`{field}` is not key=value"));
            };
            let read = match key {
                "block" => triple(value).map(|v| finding.block = Some(v)),
                "thread" => triple(value).map(|v| finding.thread = Some(v)),
                "address" => value
                    .strip_prefix("0x")
                    .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                    .map(|v| finding.address = Some(v)),
                "line" => value
                    .strip_prefix(KERNEL_FILE)
                    .and_then(|n| n.parse().ok())
                    .map(|v| finding.line = Some(v)),
                _ => {
                    return bad(format!(
                        "`{key}` is not one of block, thread, address, line"
                    ));
                }
            };
            if read.is_none() {
                return bad(format!("`{field}` has a value {key} cannot have"));
            }
        }
        Ok(finding)
    }
}

/// `(x,y,z)` as three numbers.
fn triple(text: &str) -> Option<[u32; 3]> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?;
    let mut parts = inner.split(',').map(|p| p.parse::<u32>().ok());
    let value = [parts.next()??, parts.next()??, parts.next()??];
    parts.next().is_none().then_some(value)
}

impl fmt::Display for Finding {
    /// The line's grammar (see the module's head), without the prefix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.kind.tag())?;
        let triple = |[x, y, z]: [u32; 3]| format!("({x},{y},{z})");
        if let Some(block) = self.block {
            write!(f, " block={}", triple(block))?;
        }
        if let Some(thread) = self.thread {
            write!(f, " thread={}", triple(thread))?;
        }
        if let Some(address) = self.address {
            write!(f, " address={address:#x}")?;
        }
        if let Some(line) = self.line {
            write!(f, " line={KERNEL_FILE}{line}")?;
        }
        f.write_str(WORDS)?;
        if self.words.contains(['\n', '\r']) {
            f.write_str(&self.words.replace(['\n', '\r'], " "))
        } else {
            f.write_str(&self.words)
        }
    }
}

/// The student's words of a line after [`FINDING_PREFIX`]: the part after
/// a finding's head, or the whole line where it has none (an untagged
/// line: the launch statistics, an older emulator's).
pub fn words(text: &str) -> &str {
    match Finding::parse(text) {
        Ok(_) => text.split_once(WORDS).map_or(text, |(_, words)| words),
        Err(_) => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Finding {
        Finding {
            kind: FindingKind::SharedMemoryRace,
            block: Some([3, 0, 1]),
            thread: Some([17, 2, 0]),
            address: Some(0x7f00_0020_0400),
            line: Some(41),
            words: "shared-memory race in kernel `dot` at shared address 0x4: block (0,0,0) \
                    thread (1,0,0) wrote it (`st.shared.f32` at kernel.cu:35 (PTX line 80))"
                .to_owned(),
        }
    }

    #[test]
    fn a_finding_is_written_as_the_grammar_says() {
        assert_eq!(
            full().to_string(),
            "[shared-memory-race] block=(3,0,1) thread=(17,2,0) address=0x7f0000200400 \
             line=kernel.cu:41 :: shared-memory race in kernel `dot` at shared address 0x4: \
             block (0,0,0) thread (1,0,0) wrote it (`st.shared.f32` at kernel.cu:35 (PTX line 80))"
        );
        let bare = Finding::new(FindingKind::UnloadablePtx, "the PTX cannot be loaded: x");
        assert_eq!(
            bare.to_string(),
            "[unloadable-ptx] :: the PTX cannot be loaded: x"
        );
    }

    #[test]
    fn every_kind_and_every_subset_of_fields_round_trips() {
        for kind in ALL_KINDS {
            for fields in 0..16u8 {
                let mut finding = full();
                finding.kind = kind;
                if fields & 1 == 0 {
                    finding.block = None;
                }
                if fields & 2 == 0 {
                    finding.thread = None;
                }
                if fields & 4 == 0 {
                    finding.address = None;
                }
                if fields & 8 == 0 {
                    finding.line = None;
                }
                let line = finding.to_string();
                assert_eq!(Finding::parse(&line), Ok(finding), "{line}");
            }
        }
    }

    #[test]
    fn words_that_hold_the_separator_or_brackets_come_back_whole() {
        let mut finding = full();
        finding.words = "a [b] :: c=d line=kernel.cu:9 :: e".to_owned();
        let line = finding.to_string();
        assert_eq!(Finding::parse(&line), Ok(finding.clone()));
        assert_eq!(words(&line), finding.words);
    }

    #[test]
    fn a_line_break_in_the_words_is_written_as_a_space() {
        let finding = Finding::new(FindingKind::Assert, "one\ntwo\r\nthree");
        let line = finding.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert_eq!(Finding::parse(&line).unwrap().words, "one two  three");
    }

    #[test]
    fn tags_are_distinct_and_read_back() {
        for kind in ALL_KINDS {
            assert_eq!(FindingKind::from_tag(kind.tag()), Some(kind));
            assert_eq!(
                ALL_KINDS.iter().filter(|k| k.tag() == kind.tag()).count(),
                1
            );
        }
        assert_eq!(FindingKind::from_tag("shared-memory race"), None);
    }

    #[test]
    fn what_is_not_a_finding_says_why() {
        let cases = [
            ("shared-memory race in kernel `dot`", "brackets"),
            ("[out-of-bounds block=(0,0,0) :: x", "bracket is not closed"),
            (
                "[races] :: x",
                "races is not a finding's kind; one of shared-memory-race",
            ),
            ("[trap] block=(0,0,0)", "no `::`"),
            ("[trap] block=(0,0) :: x", "`block=(0,0)` has a value"),
            ("[trap] address=12 :: x", "`address=12` has a value"),
            (
                "[trap] line=checks.cu:3 :: x",
                "`line=checks.cu:3` has a value",
            ),
            ("[trap] pc=3 :: x", "`pc` is not one of"),
            ("[trap] thread :: x", "`thread` is not key=value"),
            ("", "brackets"),
        ];
        for (text, why) in cases {
            let error = Finding::parse(text).expect_err(text);
            assert!(error.0.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn the_words_of_an_untagged_line_are_the_line() {
        let stats = "kernel `dot`: 5 thread-instructions in 0.001 s";
        assert_eq!(words(stats), stats);
        assert_eq!(
            words("[trap] :: the kernel called __trap()"),
            "the kernel called __trap()"
        );
    }

    #[cfg(feature = "protocol")]
    #[test]
    fn results_json_names_a_kind_by_its_tag() {
        for kind in ALL_KINDS {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.tag()));
            assert_eq!(serde_json::from_str::<FindingKind>(&json).unwrap(), kind);
        }
        assert!(serde_json::from_str::<FindingKind>("\"race\"").is_err());
    }
}
