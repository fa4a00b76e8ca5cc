//! Numbers for people: byte sizes, long counts, counted nouns and lists.

/// Decimal units, as GPU and memory vendors quote them: "1.07 GB".
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut value = n as f64;
    let mut unit = "B";
    for next in UNITS {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        unit = next;
    }
    format!("{value:.2} {unit}")
}

/// Thousands separated with commas: "268,435,456".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `n` and the noun in agreement: "1 step", "2 steps", "0 steps".
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Items as prose: "1", "1 and 2", "1, 2 and 5".
pub fn listed(items: &[impl ToString]) -> String {
    let items: Vec<String> = items.iter().map(ToString::to_string).collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_use_decimal_units() {
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_000), "1.00 kB");
        assert_eq!(bytes(3 * (1 << 30)), "3.22 GB");
        assert_eq!(bytes(1_200_000_000_000), "1.20 TB");
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(268_435_456), "268,435,456");
    }

    #[test]
    fn one_thing_is_singular_and_any_other_count_plural() {
        assert_eq!(counted(1, "step", "steps"), "1 step");
        assert_eq!(counted(0, "step", "steps"), "0 steps");
        assert_eq!(counted(2, "step", "steps"), "2 steps");
    }

    #[test]
    fn lists_read_as_prose() {
        assert_eq!(listed(&[] as &[u32]), "");
        assert_eq!(listed(&[3]), "3");
        assert_eq!(listed(&[1, 2]), "1 and 2");
        assert_eq!(listed(&[1, 2, 5]), "1, 2 and 5");
    }
}
