//! No function of grader/src is longer than [`MAX_LINES`], counted from its
//! `fn` to its closing brace, tests left out (a `#[test]` function, a
//! `#[cfg(test)]` module). A function that long does several things: the
//! grader's longest once planned, made, judged and scored an exercise in
//! 361 lines. Read from the source with a small lexer that knows comments,
//! strings, raw strings and character literals, so a brace in any of them
//! counts for nothing.

use std::fs;
use std::path::Path;

/// The longest a function may be, in lines.
const MAX_LINES: usize = 150;

/// `source` with every comment, string and character literal blanked to
/// spaces, line breaks kept: what is left is code, whose braces nest.
fn code_only(source: &str) -> Vec<u8> {
    let bytes = source.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    let word_before =
        |i: usize| i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let end = if rest.starts_with(b"//") {
            i + rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            loop {
                if j >= bytes.len() {
                    break j;
                }
                if bytes[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if bytes[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break j;
                    }
                } else {
                    j += 1;
                }
            }
        } else if let Some(hashes) = raw_string(rest).filter(|_| !word_before(i)) {
            // r"…", r#"…"#, br"…": no escapes; closed by a quote and as
            // many hashes.
            let open = rest.iter().position(|&b| b == b'"').unwrap_or(0) + 1;
            let close: Vec<u8> = std::iter::once(b'"').chain(vec![b'#'; hashes]).collect();
            let body = &rest[open..];
            i + open
                + body
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(body.len(), |at| at + close.len())
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '{'), or a lifetime ('a).
            match char_literal(&source[i..]) {
                Some(length) => i + length,
                None => i + 1,
            }
        } else {
            i += 1;
            continue;
        };
        let end = end.min(bytes.len());
        blank(&mut out, i, end);
        i = end;
    }
    out
}

/// The hashes of a raw string starting `text` (`r"`, `r#"`, `br"`), if it
/// is one.
fn raw_string(text: &[u8]) -> Option<usize> {
    let text = text.strip_prefix(b"b").unwrap_or(text);
    let text = text.strip_prefix(b"r")?;
    let hashes = text.iter().take_while(|&&b| b == b'#').count();
    (text.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// The length in bytes of the character literal starting `text`, or None
/// where the quote opens a lifetime.
fn char_literal(text: &str) -> Option<usize> {
    let mut chars = text.char_indices().skip(1);
    let (_, first) = chars.next()?;
    if first == '\\' {
        // An escape, its next character taken whatever it is ('\'',
        // '\\'), then up to the closing quote ('\u{7f}').
        let (at, escaped) = chars.next()?;
        let after = at + escaped.len_utf8();
        return text[after..].find('\'').map(|end| after + end + 1);
    }
    match chars.next() {
        Some((at, '\'')) => Some(at + 1),
        _ => None,
    }
}

/// Where the body of the item at `start` opens: its first brace outside
/// parentheses and brackets, None where a `;` ends the item first (a
/// declaration, `mod tests;`; a `;` in `[u8; 16]` does not).
fn body(code: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, &byte) in code.iter().enumerate().skip(start) {
        match byte {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' if depth == 0 => return Some(i),
            b';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The index of the brace that closes the one at `open`.
fn closing(code: &[u8], open: usize) -> usize {
    let mut depth = 0;
    for (i, &byte) in code.iter().enumerate().skip(open) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Every function with a body in `source` but the tests: its name, first
/// line (from 1) and length in lines.
fn functions(source: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(source);
    let text = String::from_utf8_lossy(&code);
    let line_of = |at: usize| code[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let test_item = ["#[test]", "#[cfg(test)]"]
            .iter()
            .filter_map(|attribute| rest.find(attribute))
            .min();
        let function = find_fn(rest);
        let (start, is_test) = match (test_item, &function) {
            (Some(t), Some((f, _))) if t < *f => (t, true),
            (_, Some((f, _))) => (*f, false),
            (Some(t), None) => (t, true),
            (None, None) => break,
        };
        let start = at + start;
        let Some(open) = body(&code, start) else {
            at = start + 1;
            continue;
        };
        let close = closing(&code, open);
        if is_test {
            at = close + 1;
            continue;
        }
        let name = function.map(|(_, name)| name).unwrap_or_default();
        found.push((name, line_of(start), line_of(close) - line_of(start) + 1));
        // Functions inside it are counted too.
        at = open + 1;
    }
    found
}

/// Where the first `fn NAME` of `text` is, and NAME.
fn find_fn(text: &str) -> Option<(usize, String)> {
    let mut from = 0;
    while let Some(at) = text[from..].find("fn ").map(|i| from + i) {
        let before = text[..at].chars().next_back();
        let name: String = text[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && !name.is_empty() {
            return Some((at, name));
        }
        from = at + 3;
    }
    None
}

/// Every .rs file under `dir`, with its source.
fn sources(dir: &Path, into: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let source = fs::read_to_string(&path).unwrap();
            into.push((path.display().to_string(), source));
        }
    }
}

#[test]
fn no_function_of_the_grader_is_longer_than_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut counted = 0;
    let mut long = Vec::new();
    for (path, source) in &files {
        for (name, line, lines) in functions(source) {
            counted += 1;
            if lines > MAX_LINES {
                long.push(format!("{path}:{line} {name}: {lines} lines"));
            }
        }
    }
    assert!(counted > 300, "only {counted} functions found");
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines; split them by stage:\n{}",
        long.join("\n")
    );
}

#[test]
fn a_function_is_measured_from_fn_to_its_brace_whatever_its_strings_hold() {
    let source = r##"
//! A module.
pub fn short() -> &'static str {
    let open = '{';
    let s = "}}} {";
    // } a brace in a comment
    /* } nested /* } */ */
    let raw = r#"}"#;
    let _ = ('\'', '\\', b'}', 'x');
    s
}

fn generic<'a, T>(x: &'a T, _: [u8; 2]) -> impl Fn(i32) -> bool + 'a {
    move |n| {
        fn inner() {}
        n > 0
    }
}

trait Said {
    fn declared(&self);
}

#[test]
fn a_test_is_left_out() {
    let long = 1;
}

#[cfg(test)]
mod tests {
    fn helper() {}
}
"##;
    let found = functions(source);
    let names: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|(name, line, lines)| (name.as_str(), *line, *lines))
        .collect();
    assert_eq!(
        names,
        [("short", 3, 9), ("generic", 13, 6), ("inner", 15, 1)]
    );
}

#[test]
fn a_function_over_the_limit_is_caught() {
    let body = "    let x = 1;\n".repeat(MAX_LINES - 1);
    let source = format!("fn long() {{\n{body}}}\n\nfn fits() {{\n}}\n");
    let found = functions(&source);
    assert_eq!(found[0], ("long".to_owned(), 1, MAX_LINES + 1));
    assert_eq!(found[1], ("fits".to_owned(), MAX_LINES + 3, 2));
}
