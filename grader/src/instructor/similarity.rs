//! For the instructor only, never a grade: which submissions' kernel
//! (`src/kernel.cu`) or host code (`src/main.rs`) is identical to another
//! student's, or to the course's reference solution, once comments and
//! whitespace are removed and identifiers renamed in order of appearance.
//! A file left as the course's stub is nobody's work and is not compared.
//! Identical code is a question to ask, not an answer: short exercises
//! have few right answers.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::ops::Range;
use std::path::Path;

use kernels::catalogue::ExerciseId;

use crate::error::{Error, Result};

use crate::discover::discovery::discover;
use crate::discover::overlay::MAX_FILE_BYTES;

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
    /// One kernel of the file rather than the whole file.
    pub kernel: bool,
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

/// What a group's holders share: a whole file, or one kernel of it.
type Key = (String, &'static str, bool, Vec<String>);

/// `grader similarity`: writes OUT/similarity.md for the instructor and
/// says where.
pub fn command(
    course: &Path,
    submissions: &Path,
    exercises: &[ExerciseId],
    out: &Path,
) -> Result<Found> {
    let found = compare(course, submissions, exercises).map_err(Error::io(submissions))?;
    let path = out.join("similarity.md");
    crate::atomic_file::write(&path, markdown(&found).as_bytes()).map_err(Error::io(&path))?;
    eprintln!(
        "grader: {} pairs of identical code, listed in {} (for you, not a grade)",
        found.pairs(),
        path.display()
    );
    Ok(found)
}

/// Compares the class in `submissions` with itself and with the course's
/// solutions, file by file and kernel by kernel, for `exercises` (all
/// when empty). A kernel is listed on its own only when the files that
/// hold it are not identical as a whole.
pub fn compare(
    course: &Path,
    submissions: &Path,
    exercises: &[ExerciseId],
) -> std::io::Result<Found> {
    let mut holders: BTreeMap<Key, Vec<(String, String)>> = BTreeMap::new();
    let mut add = |owner: &str, exercise: &str, file: &'static str, text: &str, stub: &[Key]| {
        for (key, shared) in units(exercise, file, text) {
            if !stub.contains(&key) {
                holders
                    .entry(key)
                    .or_default()
                    .push((owner.to_owned(), shared));
            }
        }
    };
    for submission in discover(submissions)? {
        let chosen = submission
            .exercises
            .iter()
            .filter(|(e, _)| exercises.is_empty() || exercises.iter().any(|id| id.name() == *e));
        for (exercise, found) in chosen {
            for file in FILES {
                let Some(text) = read_plain(&found.folder.join(file)) else {
                    continue;
                };
                // What the stub already holds is nobody's work.
                let stub: Vec<Key> =
                    read_plain(&course.join("exercises").join(exercise).join(file))
                        .map(|s| {
                            units(exercise, file, &s)
                                .into_iter()
                                .map(|(k, _)| k)
                                .collect()
                        })
                        .unwrap_or_default();
                add(&submission.student, exercise, file, &text, &stub);
            }
        }
    }
    // The reference joins only groups students formed, or holds alone with one.
    let mut reference: Vec<Key> = Vec::new();
    for (exercise, file, _, _) in holders.keys() {
        if reference
            .iter()
            .any(|(e, f, _, _)| e == exercise && f == file)
        {
            continue;
        }
        if let Some(text) = read_plain(&course.join("solutions").join(exercise).join(file)) {
            reference.extend(units(exercise, file, &text).into_iter().map(|(k, _)| k));
        }
    }
    let mut groups: Vec<Group> = Vec::new();
    for (key, mut held) in holders {
        if reference.contains(&key) {
            held.push((REFERENCE.to_owned(), String::new()));
        }
        let (exercise, file, is_kernel, _) = key;
        let names: Vec<String> = held.iter().map(|(who, _)| who.clone()).collect();
        let whole_already = groups.iter().any(|g| {
            !g.kernel
                && g.exercise == exercise
                && g.file == file
                && names.iter().all(|n| g.holders.contains(n))
        });
        if held.len() > 1 && !(is_kernel && whole_already) {
            groups.push(Group {
                exercise,
                file,
                kernel: is_kernel,
                shared: held[0].1.clone(),
                holders: names,
            });
        }
    }
    Ok(Found { groups })
}

/// The parts of a file compared: the whole file and, in a .cu file, each
/// kernel; each long enough to say something, with its text.
fn units(exercise: &str, file: &'static str, text: &str) -> Vec<(Key, String)> {
    let chars: Vec<char> = text.chars().collect();
    let all = tokens(&chars);
    let mut found = vec![(
        (exercise.to_owned(), file, false, renamed(&all)),
        text.to_owned(),
    )];
    if file.ends_with(".cu") {
        for range in kernels(&all) {
            let part = &all[range];
            let span = part[0].span.start..part[part.len() - 1].span.end;
            let shared: String = chars[span].iter().collect();
            found.push(((exercise.to_owned(), file, true, renamed(part)), shared));
        }
    }
    found.retain(|((_, _, _, tokens), _)| tokens.len() >= MIN_TOKENS);
    found
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
#[rustfmt::skip]
const KEPT: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "if", "inline", "int", "long", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "unsigned", "void", "volatile",
    "while", "bool", "true", "false", "__global__", "__device__", "__host__", "__shared__",
    "__constant__", "__restrict__", "__syncthreads", "threadIdx", "blockIdx", "blockDim",
    "gridDim", "as", "crate", "fn", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "self", "Self", "super", "trait", "type", "unsafe", "use", "where", "dyn",
];

/// One token of code: its text, whether it is a name a student chose,
/// and where it lies in the code (char indices).
struct Token {
    text: String,
    renamable: bool,
    span: Range<usize>,
}

/// The code as tokens: comments and whitespace gone, literals, keywords
/// and names after a `.` kept, every other identifier renamed `v1`, `v2`,
/// ... in order of first appearance.
pub fn normalized(code: &str) -> Vec<String> {
    renamed(&tokens(&code.chars().collect::<Vec<_>>()))
}

/// `tokens` with their renamable names numbered in order of appearance.
fn renamed(tokens: &[Token]) -> Vec<String> {
    let mut names: BTreeMap<&str, String> = BTreeMap::new();
    tokens
        .iter()
        .map(|t| {
            if t.renamable {
                let next = format!("v{}", names.len() + 1);
                names.entry(t.text.as_str()).or_insert(next).clone()
            } else {
                t.text.clone()
            }
        })
        .collect()
}

fn tokens(chars: &[char]) -> Vec<Token> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let rest = |k: usize| chars.get(i + k).copied();
        let start = i;
        let mut renamable = false;
        if c.is_whitespace() {
            i += 1;
            continue;
        } else if c == '/' && rest(1) == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && rest(1) == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
            continue;
        } else if c == '"' || (c == '\'' && is_char_literal(&chars[i..])) {
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
        } else if c.is_alphanumeric() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let after_dot = tokens.last().is_some_and(|t| t.text == ".");
            renamable = !(c.is_ascii_digit() || after_dot || KEPT.contains(&word.as_str()));
        } else {
            i += 1;
        }
        tokens.push(Token {
            text: chars[start..i].iter().collect(),
            renamable,
            span: start..i,
        });
    }
    tokens
}

/// The token ranges of each `__global__` function: from the keyword to
/// the brace that closes its body (declarations without one are skipped).
fn kernels(tokens: &[Token]) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(k) = tokens[at..].iter().position(|t| t.text == "__global__") {
        let start = at + k;
        let Some(open) = tokens[start..]
            .iter()
            .position(|t| t.text == "{" || t.text == ";")
            .map(|o| start + o)
            .filter(|&o| tokens[o].text == "{")
        else {
            at = start + 1;
            continue;
        };
        let mut depth = 0usize;
        let mut end = open;
        while end < tokens.len() {
            match tokens[end].text.as_str() {
                "{" => depth += 1,
                "}" => depth -= 1,
                _ => {}
            }
            end += 1;
            if depth == 0 {
                break;
            }
        }
        found.push(start..end);
        at = end;
    }
    found
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
            "\n## {} {}{}: {}\n\n",
            group.exercise,
            group.file,
            if group.kernel { ", a kernel" } else { "" },
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
            .map(|l| format!("{l}\n"))
            .collect();
        let more = group.shared.lines().count().saturating_sub(SHOWN_LINES);
        if more > 0 {
            let _ = write!(shown, "... ({more} more lines)");
        }
        let language = if group.file.ends_with(".cu") {
            "cuda"
        } else {
            "rust"
        };
        // Student text: escapes and control characters go, and the fence
        // outlasts any backticks in it.
        let _ = write!(
            out,
            "\nThe shared code, as {} wrote it:\n\n{}",
            group.holders[0],
            crate::record::quote::fenced(&shown, language)
        );
    }
    out
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
    fn kernels_are_found_by_their_bodies() {
        let code = "__global__ void f(int n);\n__device__ int g() { return 1; }\n\
                    __global__ void f(int n) { if (n) { n = g(); } }\n\
                    __global__ void h() {}\nint tail;";
        let chars: Vec<char> = code.chars().collect();
        let all = tokens(&chars);
        let found: Vec<String> = kernels(&all)
            .into_iter()
            .map(|r| {
                chars[all[r.start].span.start..all[r.end - 1].span.end]
                    .iter()
                    .collect()
            })
            .collect();
        assert_eq!(
            found,
            [
                "__global__ void f(int n) { if (n) { n = g(); } }",
                "__global__ void h() {}"
            ]
        );
    }

    #[test]
    fn a_copied_kernel_in_a_file_that_differs_is_found_on_its_own() {
        let course = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let solution =
            std::fs::read_to_string(course.join("solutions/dot-sm/src/kernel.cu")).unwrap();
        let class = tempfile::tempdir().unwrap();
        let put = |who: &str, text: &str| {
            let src = class.path().join(who).join("dot-sm/src");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::write(src.join("kernel.cu"), text).unwrap();
        };
        put(
            "ann",
            &format!("{solution}\n__device__ float twice(float v) {{ return 2.0f * v; }}\n"),
        );
        put("bo", &solution);
        let found = compare(course, class.path(), &[]).unwrap();
        let listed: Vec<(bool, Vec<&str>)> = found
            .groups
            .iter()
            .map(|g| (g.kernel, g.holders.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            listed,
            [
                (false, vec!["bo", REFERENCE]),
                (true, vec!["ann", "bo", REFERENCE]),
            ]
        );
        let kernel = &found.groups[1].shared;
        assert!(
            kernel.starts_with("__global__") && kernel.ends_with('}'),
            "{kernel}"
        );
        assert!(!kernel.contains("twice"));
    }

    #[test]
    fn the_fence_is_longer_than_any_backtick_run_in_the_code() {
        let found = Found {
            groups: vec![Group {
                exercise: "dot-sm".into(),
                file: "src/kernel.cu",
                kernel: false,
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
