//! What the grader keeps of what a student's code wrote: text and JSON
//! bounded before results.json keeps it and the feedback shows it, each
//! cut with a note saying how much more there was. A run's output is
//! already capped as it is read (`confine::runner`, 1 MiB a stream); what
//! is parsed from it is bounded here: its report (a student's binary
//! prints any JSON it likes, and a 1 MiB report per run made 35 MB of
//! results.json a student over eight exercises), the words in its verdict
//! (a message, a line of stderr), its findings. The limits are far above
//! what an honest run writes: its report is 2 KiB at most, its longest
//! line of words 532 characters (the grader's class on the CPU emulator).

use serde_json::{Map, Value};

/// The most of a report results.json keeps, in bytes of JSON.
pub const MAX_REPORT_BYTES: usize = 16 << 10;

/// The most of one piece of a student's text kept (a message, a line of
/// output, a string or key in a report), in bytes.
pub const MAX_TEXT: usize = 2 << 10;

/// The most findings a run's record keeps (the CPU emulator prints 16 at
/// most a launch).
pub const MAX_FINDINGS: usize = 64;

/// What a note costs the budget: the bytes it adds.
const NOTE: usize = 48;

/// `text` as kept: whole within [`MAX_TEXT`], else its first bytes (to a
/// character's boundary) and how much more there was.
pub fn text(text: &str) -> String {
    cut_text(text, MAX_TEXT)
}

/// `text` within `most` bytes, as [`text`] cuts it.
pub fn cut_text(text: &str, most: usize) -> String {
    if text.len() <= most {
        return text.to_owned();
    }
    let mut end = most;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... [{} more bytes cut]", &text[..end], text.len() - end)
}

/// A report as kept: whole within [`MAX_REPORT_BYTES`]; else every string
/// and key within [`MAX_TEXT`], and as much of it, in order, as fits the
/// limit, each list or object that was cut ending with a note of what
/// was left out.
pub fn report(report: Value) -> Value {
    let bytes = serde_json::to_string(&report).map_or(usize::MAX, |s| s.len());
    if bytes <= MAX_REPORT_BYTES {
        return report;
    }
    let mut budget = MAX_REPORT_BYTES;
    cut(&report, &mut budget)
}

/// `value` within `budget` bytes, taken from it.
fn cut(value: &Value, budget: &mut usize) -> Value {
    match value {
        Value::String(s) => {
            let kept = cut_text(s, MAX_TEXT.min(budget.saturating_sub(NOTE)));
            *budget = budget.saturating_sub(kept.len() + 2);
            Value::String(kept)
        }
        Value::Array(items) => {
            let mut kept = Vec::new();
            for (k, item) in items.iter().enumerate() {
                if *budget < 2 * NOTE {
                    kept.push(Value::String(format!(
                        "[{} more items cut by the grader]",
                        items.len() - k
                    )));
                    *budget = budget.saturating_sub(NOTE);
                    break;
                }
                kept.push(cut(item, budget));
            }
            Value::Array(kept)
        }
        Value::Object(fields) => {
            let mut kept = Map::new();
            for (k, (key, item)) in fields.iter().enumerate() {
                if *budget < 2 * NOTE {
                    kept.insert(
                        "...".to_owned(),
                        Value::String(format!(
                            "[{} more keys cut by the grader]",
                            fields.len() - k
                        )),
                    );
                    *budget = budget.saturating_sub(NOTE);
                    break;
                }
                let key = cut_text(key, MAX_TEXT.min(*budget / 2));
                *budget = budget.saturating_sub(key.len() + 3);
                let item = cut(item, budget);
                kept.insert(key, item);
            }
            Value::Object(kept)
        }
        other => {
            *budget = budget.saturating_sub(24);
            other.clone()
        }
    }
}

/// `value` (a typed record, a verdict say) with every string in it within
/// [`MAX_TEXT`]: through its JSON, so that every variant, and any added
/// later, is bounded alike. Where the record cannot go through JSON and
/// back (it always can), it is kept as it was.
pub fn strings<T: serde::Serialize + serde::de::DeserializeOwned>(value: T) -> T {
    let Ok(mut json) = serde_json::to_value(&value) else {
        return value;
    };
    if !cut_strings(&mut json) {
        return value;
    }
    serde_json::from_value(json).unwrap_or(value)
}

/// Cuts every string in `value` to [`MAX_TEXT`]; whether any was cut.
fn cut_strings(value: &mut Value) -> bool {
    match value {
        Value::String(s) if s.len() > MAX_TEXT => {
            *s = text(s);
            true
        }
        Value::Array(items) => items.iter_mut().fold(false, |cut, v| cut_strings(v) | cut),
        Value::Object(fields) => fields
            .values_mut()
            .fold(false, |cut, v| cut_strings(v) | cut),
        _ => false,
    }
}

/// At most [`MAX_FINDINGS`] of `items`, the first.
pub fn first<T>(mut items: Vec<T>) -> Vec<T> {
    items.truncate(MAX_FINDINGS);
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_text_and_small_reports_are_kept_whole() {
        assert_eq!(text("a message"), "a message");
        let report = json!({"check": {"passed": true}, "timings": [{"step": "kernel", "ms": 0.4}]});
        assert_eq!(super::report(report.clone()), report);
    }

    #[test]
    fn long_text_is_cut_at_a_character_with_a_note() {
        let long = "é".repeat(MAX_TEXT);
        let kept = text(&long);
        assert!(kept.len() < MAX_TEXT + NOTE, "{}", kept.len());
        assert!(kept.ends_with(&format!("[{} more bytes cut]", long.len() - MAX_TEXT)));
    }

    #[test]
    fn a_report_of_a_megabyte_is_kept_within_the_limit_with_notes() {
        let flood = json!({
            "check": {"passed": true, "hint": "x".repeat(1 << 20)},
            "timings": (0..100_000).map(|k| json!({"step": format!("s{k}"), "ms": 1.0})).collect::<Vec<_>>(),
            "y".repeat(1 << 16): 1,
        });
        let kept = report(flood);
        let bytes = serde_json::to_string(&kept).unwrap().len();
        assert!(bytes <= MAX_REPORT_BYTES + 4 * NOTE, "{bytes}");
        // What comes first is kept, cut where it is long.
        assert_eq!(kept["check"]["passed"], true);
        let hint = kept["check"]["hint"].as_str().unwrap();
        assert!(hint.ends_with("more bytes cut]"), "{hint}");
        let timings = kept["timings"].as_array().unwrap();
        let note = timings.last().unwrap().as_str().unwrap();
        assert!(note.ends_with("more items cut by the grader]"), "{note}");
    }

    #[test]
    fn every_string_of_a_record_is_bounded() {
        let record = json!({"kind": "garbage", "said": ["z".repeat(1 << 20), "short"]});
        let kept: Value = strings(record);
        assert_eq!(kept["kind"], "garbage");
        assert_eq!(kept["said"][1], "short");
        assert!(kept["said"][0].as_str().unwrap().len() < MAX_TEXT + NOTE);
        assert_eq!(first((0..100).collect::<Vec<_>>()).len(), MAX_FINDINGS);
    }
}
