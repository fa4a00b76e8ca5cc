//! Student text made safe to show: control characters and terminal escape
//! sequences removed, and quoted in a Markdown fence longer than any run of
//! backticks it holds, so it cannot close the fence and become Markdown or
//! HTML of its own; or, in the middle of a line (a file name, a timing's
//! step name), on one line with every character that could start Markdown
//! or HTML escaped. Build errors start at their first error.

/// `text` without ANSI escape sequences and control characters (line
/// breaks and tabs are kept).
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    chars.next();
                    while let Some(&next) = chars.peek() {
                        chars.next();
                        if ('\u{40}'..='\u{7e}').contains(&next) {
                            break;
                        }
                    }
                }
                // OSC (titles, links): up to BEL or ESC \.
                Some(']') => {
                    chars.next();
                    while let Some(next) = chars.next() {
                        if next == '\u{7}'
                            || (next == '\u{1b}' && chars.next_if_eq(&'\\').is_some())
                        {
                            break;
                        }
                    }
                }
                // A two-character escape.
                _ => {
                    chars.next();
                }
            },
            '\n' | '\t' => out.push(c),
            '\r' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `text`, cleaned, in a fenced block of `info` (e.g. `text`).
pub fn fenced(text: &str, info: &str) -> String {
    let text = clean(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{}\n{fence}\n", text.trim_end())
}

/// Characters that can start Markdown or HTML in the middle of a line.
const MARKUP: &str = "\\`*_[]<>&|~!#";

/// `text`, cleaned, for the middle of a Markdown line: line breaks made
/// spaces, and every character of `MARKUP` backslash-escaped, so it reads
/// as itself (CommonMark escapes any ASCII punctuation so) and can open no
/// link, emphasis, code span or HTML tag.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in clean(text).chars() {
        match c {
            '\n' | '\t' => out.push(' '),
            c if MARKUP.contains(c) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A build's messages from the first error on: cargo's progress lines and
/// the warnings before it are left out, so the reader meets the cause
/// first. Text with no line starting `error` is kept whole.
pub fn errors_first(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match lines.iter().position(|l| l.starts_with("error")) {
        Some(first) => lines[first..].join("\n"),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_removed() {
        assert_eq!(
            clean("\u{1b}[31mred\u{1b}[0m\u{7}\r\n\u{1b}]0;title\u{7}ok\tgo\u{0}"),
            "red\nok\tgo"
        );
        assert_eq!(clean("\u{1b}]8;;http://x\u{1b}\\link"), "link");
    }

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        let quoted = fenced("```\n</pre><script>x</script>\n````", "text");
        assert!(quoted.starts_with("`````text\n"), "{quoted}");
        assert!(quoted.ends_with("\n`````\n"), "{quoted}");
        assert_eq!(fenced("plain", ""), "```\nplain\n```\n");
    }

    #[test]
    fn inline_text_cannot_become_markup() {
        let said = inline("<img src=x onerror=alert(1)>[link](javascript:x) **b** `c`\n# h");
        assert_eq!(
            said,
            "\\<img src=x onerror=alert(1)\\>\\[link\\](javascript:x) \\*\\*b\\*\\* \\`c\\` \\# h"
        );
        // Nothing is left unescaped that could open markup.
        let unescaped = said
            .char_indices()
            .filter(|&(i, c)| MARKUP.contains(c) && c != '\\' && !said[..i].ends_with('\\'));
        assert_eq!(unescaped.count(), 0, "{said}");
        assert_eq!(inline("kernel"), "kernel");
        assert_eq!(inline("a\\b"), "a\\\\b");
    }

    #[test]
    fn the_first_error_comes_first() {
        let said = "   Compiling dot-sm v0.1.0\nwarning: unused\nerror[E0308]: mismatched\n  --> x\nerror: aborting";
        assert_eq!(
            errors_first(said),
            "error[E0308]: mismatched\n  --> x\nerror: aborting"
        );
        assert_eq!(errors_first("no errors here"), "no errors here");
    }
}
