//! For the instructor only, never a grade: which submissions' kernel
//! (`src/kernel.cu`) or host code (`src/main.rs`) is identical to another
//! student's, or to the course's reference solution, once comments and
//! whitespace are removed and identifiers renamed in order of appearance.
//! A file left as the course's stub is nobody's work and is not compared.
//! Identical code is a question to ask, not an answer: short exercises
//! have few right answers.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use crate::discovery::discover;
use crate::overlay::MAX_FILE_BYTES;

/// The files compared, each exercise's student work.
const FILES: [&str; 2] = ["src/kernel.cu", "src/main.rs"];

/// Code shorter than this many tokens is too small to say anything.
const MIN_TOKENS: usize = 30;

/// Lines of shared code shown per group.
const SHOWN_LINES: usize = 80;

/// Who holds a copy: the reference solution, named so.
pub const REFERENCE: &str = "the reference solution";

/// Students (and perhaps the reference) whose file is one code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub exercise: String,
    pub file: &'static str,
    /// Student ids, sorted, then [`REFERENCE`] when it is one of them.
    pub holders: Vec<String>,
    /// The first holder's text: the shared part.
    pub shared: String,
}

impl Group {
    /// The pairs among the holders.
    pub fn pairs(&self) -> usize {
        self.holders.len() * (self.holders.len() - 1) / 2
    }
}

/// Every group of identical code in a class, by exercise and file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Found {
    pub groups: Vec<Group>,
}

impl Found {
    pub fn pairs(&self) -> usize {
        self.groups.iter().map(Group::pairs).sum()
    }
}

/// Compares the class in `submissions` with itself and with the course's
/// solutions, file by file, for `exercises` (all when empty).
pub fn compare(course: &Path, submissions: &Path, exercises: &[String]) -> std::io::Result<Found> {
    type Key = (String, &'static str, Vec<String>);
    let mut holders: BTreeMap<Key, Vec<(String, String)>> = BTreeMap::new();
    for submission in discover(submissions)? {
        let chosen = submission
            .exercises
            .iter()
            .filter(|(e, _)| exercises.is_empty() || exercises.contains(e));
        for (exercise, folder) in chosen {
            for file in FILES {
                let Some(text) = read_plain(&folder.join(file)) else {
                    continue;
                };
                let tokens = normalized(&text);
                let stub = read_plain(&course.join("exercises").join(exercise).join(file));
                if tokens.len() < MIN_TOKENS || stub.is_some_and(|s| normalized(&s) == tokens) {
                    continue;
                }
                holders
                    .entry((exercise.clone(), file, tokens))
                    .or_default()
                    .push((submission.student.clone(), text));
            }
        }
    }
    let mut groups = Vec::new();
    for ((exercise, file, tokens), mut held) in holders {
        let reference = read_plain(&course.join("solutions").join(&exercise).join(file));
        if reference.is_some_and(|r| normalized(&r) == tokens) {
            held.push((REFERENCE.to_owned(), String::new()));
        }
        if held.len() > 1 {
            groups.push(Group {
                exercise,
                file,
                shared: held[0].1.clone(),
                holders: held.into_iter().map(|(who, _)| who).collect(),
            });
        }
    }
    Ok(Found { groups })
}

/// A plain file's text (never through a link, never over the size limit).
fn read_plain(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    Some(String::from_utf8_lossy(&std::fs::read(path).ok()?).into_owned())
}

/// Words that keep their meaning when a student renames things: C, CUDA
/// and Rust keywords and CUDA's built-in variables. Names after a `.`
/// (fields, methods: `threadIdx.x`, `.len()`) are kept too.
const KEPT: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "if",
    "inline",
    "int",
    "long",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__restrict__",
    "__syncthreads",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "as",
    "crate",
    "fn",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "self",
    "Self",
    "super",
    "trait",
    "type",
    "unsafe",
    "use",
    "where",
    "dyn",
];

/// The code as tokens: comments and whitespace gone, literals, keywords
/// and names after a `.` kept, every other identifier renamed `v1`, `v2`,
/// ... in order of first appearance.
pub fn normalized(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let rest = |k: usize| chars.get(i + k).copied();
        let start = i;
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && rest(1) == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && rest(1) == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
        } else if c == '"' || (c == '\'' && is_char_literal(&chars[i..])) {
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
            tokens.push(chars[start..i].iter().collect());
        } else if c.is_alphanumeric() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let after_dot = tokens.last().is_some_and(|t: &String| t == ".");
            let token = if c.is_ascii_digit() || after_dot || KEPT.contains(&word.as_str()) {
                word
            } else {
                let next = format!("v{}", names.len() + 1);
                names.entry(word).or_insert(next).clone()
            };
            tokens.push(token);
        } else {
            tokens.push(c.to_string());
            i += 1;
        }
    }
    tokens
}

/// Whether text starting with `'` is a character literal (`'a'`, `'\n'`)
/// rather than a Rust lifetime (`'a`).
fn is_char_literal(text: &[char]) -> bool {
    match text.get(1) {
        Some('\\') => true,
        Some(_) => text.get(2) == Some(&'\''),
        None => false,
    }
}

/// similarity.md: what was compared, then each group with its shared code.
pub fn markdown(found: &Found) -> String {
    let mut out = String::from(
        "# Identical code (for the instructor, not a grade)\n\n\
         Kernels (src/kernel.cu) and host code (src/main.rs) compared after removing \
         comments and whitespace and renaming identifiers; files left as the stub are \
         not compared. Short exercises have few right answers: a match is a question to \
         ask, not a finding.\n\n",
    );
    if found.groups.is_empty() {
        out.push_str("No two submissions share a file, and none is the reference solution.\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{} pairs in {} groups.",
        found.pairs(),
        found.groups.len()
    );
    for group in &found.groups {
        let _ = write!(
            out,
            "\n## {} {}: {}\n\n",
            group.exercise,
            group.file,
            group.holders.join(", ")
        );
        for (i, a) in group.holders.iter().enumerate() {
            for b in &group.holders[i + 1..] {
                let _ = writeln!(out, "- {a} and {b}");
            }
        }
        let mut shown: String = group
            .shared
            .lines()
            .take(SHOWN_LINES)
            .map(|l| {
                l.chars()
                    .filter(|c| !c.is_control() || *c == '\t')
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        let more = group.shared.lines().count().saturating_sub(SHOWN_LINES);
        if more > 0 {
            let _ = write!(shown, "... ({more} more lines)");
        }
        let fence = "`".repeat(longest_backtick_run(&shown).max(2) + 1);
        let language = if group.file.ends_with(".cu") {
            "cuda"
        } else {
            "rust"
        };
        let _ = write!(
            out,
            "\nThe shared code, as {} wrote it:\n\n{fence}{language}\n{}\n{fence}\n",
            group.holders[0],
            shown.trim_end()
        );
    }
    out
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = r#"
extern "C" __global__ void dot(const float *a, const float *b, float *partial, int n) {
    __shared__ float cache[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x; // one element per thread
    float sum = 0.0f;
    if (i < n) sum = a[i] * b[i];
    cache[threadIdx.x] = sum;
    __syncthreads();
}
"#;

    #[test]
    fn comments_whitespace_and_names_do_not_matter_but_code_does() {
        let renamed = KERNEL
            .replace("int i", "int x")
            .replace("[i]", "[x]")
            .replace("(i <", "(x <")
            .replace("cache", "tile")
            .replace("sum", "acc")
            .replace("partial", "out")
            .replace(" // one element per thread", "/* each\n thread */");
        assert_eq!(normalized(&renamed), normalized(KERNEL));
        let different = KERNEL.replace("a[i] * b[i]", "a[i] + b[i]");
        assert_ne!(normalized(&different), normalized(KERNEL));
        // Built-ins keep their names: threadIdx.y is not threadIdx.x.
        assert_ne!(
            normalized(&KERNEL.replace("threadIdx.x]", "threadIdx.y]")),
            normalized(KERNEL)
        );
        // A lifetime is not a character literal; a char literal is one token.
        assert_eq!(normalized("fn f<'a>(x: &'a u8) { '\\n' }").len(), 17);
    }

    #[test]
    fn the_fence_is_longer_than_any_backtick_run_in_the_code() {
        let found = Found {
            groups: vec![Group {
                exercise: "dot-sm".into(),
                file: "src/kernel.cu",
                holders: vec!["ann".into(), "bo".into(), REFERENCE.into()],
                shared: "// ````` five\nint x;\u{1b}[31m\n".into(),
            }],
        };
        let md = markdown(&found);
        assert!(md.contains("``````cuda\n"), "{md}");
        assert!(
            md.contains("- ann and bo\n- ann and the reference solution\n"),
            "{md}"
        );
        assert!(md.contains("3 pairs in 1 groups"), "{md}");
        assert!(!md.contains('\u{1b}'));
    }
}
