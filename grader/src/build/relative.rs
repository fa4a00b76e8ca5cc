//! Build messages as a student reads them: the grader's folders (the
//! instructor's own, or where the sandbox shows them) named by what they
//! are, never by where they lie on the machine. A student's crate is
//! shown as the exercise's folder (`dot-sm/src/main.rs`), as rustc shows
//! it when all goes well.

use std::path::Path;

/// `text` with each of `folders` (a path, and the name shown for it)
/// replaced where it stands as a whole path, not inside a longer one; the
/// longest paths first, so a folder inside another is named by its own
/// name. A name of `""` shows what is inside the folder relative to it.
pub fn relative(text: &str, folders: &[(&Path, &str)]) -> String {
    let mut folders: Vec<(String, &str)> = folders
        .iter()
        .map(|(path, name)| {
            (
                path.to_string_lossy().trim_end_matches('/').to_owned(),
                *name,
            )
        })
        .filter(|(path, _)| path.len() > 1)
        .collect();
    folders.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let mut out = text.to_owned();
    for (path, name) in folders {
        out = replace_whole(&out, &path, name);
    }
    out
}

/// Whether `c` can be part of a path's name.
fn in_name(c: char) -> bool {
    c.is_alphanumeric() || "-_.+@~".contains(c)
}

/// `text` with `path` replaced by `name` (and `path/` by `name/`, or by
/// nothing for an empty name) where neither a name nor a `/` comes before
/// it and no name character follows it.
fn replace_whole(text: &str, path: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + path.len()..].chars().next();
        let whole = !before.is_some_and(|c| in_name(c) || c == '/') && !after.is_some_and(in_name);
        out.push_str(&rest[..at]);
        rest = &rest[at + path.len()..];
        if !whole {
            out.push_str(path);
            continue;
        }
        match (after, name) {
            (Some('/'), "") => rest = &rest[1..],
            (_, "") => out.push('.'),
            _ => out.push_str(name),
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grader_s_folders_are_named_not_shown() {
        let said = "\
error: failed to run custom build command for `dot-sm v0.1.0 (/home/ta/grading/.build/students/ann/workspace/dot-sm)`
  --> /home/ta/grading/.build/students/ann/workspace/dot-sm/src/main.rs:3:20
error: couldn't read `/home/ta/grading/.build/students/ann/target/release/build/x/out/kernel.ptx`
   --> /home/ta/.cargo/registry/src/index.crates.io-1/cust-0.3.2/src/lib.rs:1:1
note: /home/ta/cuda-course/kernels/src/lib.rs and /build/workspace/dot-sm/src/main.rs
";
        let shown = relative(
            said,
            &[
                (
                    Path::new("/home/ta/grading/.build/students/ann/workspace"),
                    "",
                ),
                (
                    Path::new("/home/ta/grading/.build/students/ann/target"),
                    "target",
                ),
                (Path::new("/home/ta/.cargo/registry"), "registry"),
                (Path::new("/home/ta/cuda-course"), "course"),
                (Path::new("/build/workspace/"), ""),
            ],
        );
        assert!(!shown.contains("/home/ta"), "{shown}");
        assert!(!shown.contains("/build/workspace"), "{shown}");
        assert!(shown.contains("`dot-sm v0.1.0 (dot-sm)`"), "{shown}");
        assert!(shown.contains("--> dot-sm/src/main.rs:3:20"), "{shown}");
        assert!(
            shown.contains("`target/release/build/x/out/kernel.ptx`"),
            "{shown}"
        );
        assert!(
            shown.contains("registry/src/index.crates.io-1/cust"),
            "{shown}"
        );
        assert!(
            shown.contains("note: course/kernels/src/lib.rs and dot-sm/src/main.rs"),
            "{shown}"
        );
        // The root is never a folder to replace, nor a path inside another.
        assert_eq!(
            relative("/etc/passwd", &[(Path::new("/"), "root")]),
            "/etc/passwd"
        );
        let cargo = [(Path::new("/cargo"), "cargo")];
        assert_eq!(
            relative("/usr/bin/cargo /cargoes /cargo/x (/cargo)", &cargo),
            "/usr/bin/cargo /cargoes cargo/x (cargo)"
        );
    }
}
