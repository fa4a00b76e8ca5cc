//! Terminal text: sentences wrapped at 80 columns under a label.

/// The width the course's messages wrap at.
const WIDTH: usize = 80;

/// `text` wrapped at 80 columns, the first line after `first` and the others
/// indented as deep; each line ends in a newline. Words longer than a line
/// (links) stay whole.
pub fn wrap(first: &str, text: &str) -> String {
    let indent = " ".repeat(first.chars().count());
    let mut out = String::new();
    for paragraph in text.lines() {
        let mut line = if out.is_empty() {
            first.to_owned()
        } else {
            indent.clone()
        };
        let mut empty = true;
        for word in paragraph.split_whitespace() {
            if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
                out.push_str(line.trim_end());
                out.push('\n');
                line = indent.clone();
                empty = true;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// [`wrap`] under a label padded to the report's label column.
pub fn labelled(label: &str, text: &str) -> String {
    wrap(&format!("{label:<10} "), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_wraps_under_its_label() {
        let text = "word ".repeat(30);
        let out = labelled("steps", &text);
        assert!(out.starts_with("steps      word word"), "{out}");
        assert!(out.lines().count() > 1, "{out}");
        for line in out.lines() {
            assert!(line.len() <= 80, "{line:?}");
        }
        assert!(out.lines().nth(1).unwrap().starts_with("           word"));
    }

    #[test]
    fn a_link_longer_than_the_line_stays_whole() {
        let link = format!("https://{}", "x".repeat(90));
        let out = wrap("  ", &format!("see {link} now"));
        assert!(out.contains(&link), "{out}");
    }
}
