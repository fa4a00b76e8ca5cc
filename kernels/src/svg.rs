//! What the course's SVG pictures share (the streams timeline,
//! `crate::timeline`, and the emulator's access pictures,
//! `crate::access_picture`): the document's opening, and text made safe
//! to put in it.

use std::fmt::Write;

/// Opens an SVG document `width` by `height` on a white background, its
/// text sans-serif at 12 px unless a element says otherwise.
pub fn open(out: &mut String, width: f64, height: f64) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0}" viewBox="0 0 {width} {height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
}

/// `text` with the characters XML gives a meaning escaped.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_reads_back_as_itself() {
        let mut out = String::new();
        open(&mut out, 100.0, 50.0);
        let text = r#"a < b && "c" > d"#;
        out.push_str(&format!("<text>{}</text></svg>", escape(text)));
        let doc = roxmltree::Document::parse(&out).unwrap();
        let node = doc.descendants().find(|n| n.has_tag_name("text")).unwrap();
        assert_eq!(node.text(), Some(text));
    }
}
