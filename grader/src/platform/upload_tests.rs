//! Uploads as students make them, read into the class of one.

use super::*;
use kernels::catalogue::ExerciseId::{DotGm, DotSm, VecaddAnyN};
use std::io::Write;
use std::path::PathBuf;

/// A zip at `path` holding `files` (name, contents); a name ending in `@`
/// is a symbolic link to its contents.
fn zip_of(path: &Path, files: &[(&str, &str)]) {
    let mut writer = zip::ZipWriter::new(fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    for (name, contents) in files {
        if let Some(link) = name.strip_suffix('@') {
            writer.add_symlink(link, *contents, options).unwrap();
        } else {
            writer.start_file(*name, options).unwrap();
            writer.write_all(contents.as_bytes()).unwrap();
        }
    }
    writer.finish().unwrap();
}

fn write(path: &Path, contents: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

/// An upload folder and a class folder.
fn folders() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let upload = dir.path().join("upload");
    fs::create_dir(&upload).unwrap();
    let class = dir.path().join("class");
    (dir, upload, class)
}

#[test]
fn a_zip_of_the_workspace_is_unpacked_and_its_exercise_found() {
    let (_dir, upload, class) = folders();
    zip_of(
        &upload.join("cuda-course.zip"),
        &[
            ("cuda-course/Cargo.toml", "[workspace]\n"),
            ("cuda-course/exercises/dot-sm/src/kernel.cu", "// k"),
            ("cuda-course/exercises/dot-sm/src/main.rs", "fn main() {}"),
            ("cuda-course/exercises/dot-sm/target/debug/huge.rlib", "x"),
            ("cuda-course/exercises/dot-sm/notes.pdf", "%PDF"),
            ("cuda-course/exercises/dot-gm/src/main.rs", "fn main() {}"),
        ],
    );
    let taken = take(&upload, &class, &[DotSm]).unwrap().unwrap();
    assert_eq!(taken.exercises, [DotSm]);
    assert_eq!(
        taken.notes,
        ["dot-gm is in your upload too; this assignment does not grade it"]
    );
    let kernel = landed(
        &class,
        "cuda-course/cuda-course/exercises/dot-sm/src/kernel.cu",
    );
    assert_eq!(fs::read_to_string(kernel).unwrap(), "// k");
    // Neither build output nor documents are copied.
    assert!(!landed(&class, "cuda-course/cuda-course/exercises/dot-sm/notes.pdf").exists());
    assert!(!landed(&class, "cuda-course/cuda-course/exercises/dot-sm/target").exists());
}

#[test]
fn loose_files_are_taken_as_the_one_exercise_s_sources() {
    let (_dir, upload, class) = folders();
    write(&upload.join("kernel.cu"), "// k");
    write(&upload.join("main.rs"), "fn main() {}");
    write(&upload.join("README.txt"), "hi");
    let taken = take(&upload, &class, &[VecaddAnyN]).unwrap().unwrap();
    assert_eq!(taken.exercises, [VecaddAnyN]);
    assert_eq!(
        taken.notes,
        ["your files were taken as vecadd-anyN's src/: kernel.cu, main.rs"]
    );
    assert!(landed(&class, "vecadd-anyN/src/kernel.cu").is_file());
    assert!(landed(&class, "vecadd-anyN/src/main.rs").is_file());

    // A zip of src/ alone is loose files too.
    let (_dir, upload, class) = folders();
    zip_of(
        &upload.join("src.zip"),
        &[("src/kernel.cu", "// k"), ("src/main.rs", "fn main() {}")],
    );
    let taken = take(&upload, &class, &[DotSm]).unwrap().unwrap();
    assert_eq!(taken.exercises, [DotSm]);
    assert!(landed(&class, "dot-sm/src/kernel.cu").is_file());
}

#[test]
fn an_upload_that_cannot_be_graded_says_why_in_one_sentence() {
    let (_dir, upload, class) = folders();
    let empty = take(&upload, &class, &[DotSm]).unwrap().unwrap_err();
    assert!(matches!(empty, Unfit::Empty { .. }));
    assert!(empty.message().starts_with("Your upload holds no file."));

    let (_dir, upload, class) = folders();
    write(&upload.join("dot-gm/src/kernel.cu"), "// k");
    write(&upload.join("dot-gm/src/main.rs"), "fn main() {}");
    let wrong = take(&upload, &class, &[DotSm]).unwrap().unwrap_err();
    assert_eq!(
        wrong.message(),
        "This assignment grades dot-sm, and your upload holds dot-gm: upload that exercise."
    );

    let (_dir, upload, class) = folders();
    write(&upload.join("report.pdf"), "%PDF");
    let nothing = take(&upload, &class, &[DotSm]).unwrap().unwrap_err();
    assert_eq!(
        nothing.message(),
        "Your upload holds no exercise: no folder named after one (e.g. dot-sm/ with src/ \
         inside) and no kernel.cu or main.rs. It holds: report.pdf."
    );

    let (_dir, upload, class) = folders();
    write(&upload.join("kernel.cu"), "// k");
    let several = take(&upload, &class, &[DotGm, DotSm]).unwrap().unwrap_err();
    assert!(
        several.message().contains("grades dot-gm, dot-sm"),
        "{}",
        several.message()
    );

    let (_dir, upload, class) = folders();
    write(&upload.join("a/kernel.cu"), "// k");
    write(&upload.join("b/main.rs"), "fn main() {}");
    let scattered = take(&upload, &class, &[DotSm]).unwrap().unwrap_err();
    assert!(
        scattered.message().contains("several folders"),
        "{}",
        scattered.message()
    );
}

#[test]
fn hostile_entries_are_left_out_and_said() {
    let (_dir, upload, class) = folders();
    zip_of(
        &upload.join("up.zip"),
        &[
            ("../../escape.rs", "fn main() {}"),
            ("/etc/cron.d/x.rs", "fn main() {}"),
            (
                "dot-sm/src/kernel.cu@",
                "/autograder/source/course/solutions/dot-sm/src/kernel.cu",
            ),
            ("dot-sm/src/main.rs", "fn main() {}"),
            ("inner.zip", "PK"),
        ],
    );
    std::os::unix::fs::symlink("/etc/passwd", upload.join("main.rs")).unwrap();
    let big = "x".repeat(MAX_FILE_BYTES as usize + 1);
    write(&upload.join("dot-sm/src/big.rs"), &big);
    let taken = take(&upload, &class, &[DotSm]).unwrap().unwrap();
    let notes = taken.notes.join("\n");
    assert!(
        notes.contains("not taken: up.zip/../../escape.rs names a place outside the zip"),
        "{notes}"
    );
    assert!(
        notes.contains("not taken: up.zip/dot-sm/src/kernel.cu is a link"),
        "{notes}"
    );
    assert!(
        notes.contains("not unpacked: up.zip/inner.zip, a zip inside a zip"),
        "{notes}"
    );
    assert!(notes.contains("not taken: main.rs is a link"), "{notes}");
    assert!(
        notes.contains("not taken: dot-sm/src/big.rs is over 256 KiB"),
        "{notes}"
    );
    // Nothing was written outside the class, and no link was made.
    assert!(!class.parent().unwrap().join("escape.rs").exists());
    assert!(!landed(&class, "up/dot-sm/src/kernel.cu").exists());
    assert!(!landed(&class, "main.rs").exists());
}

#[test]
fn a_zip_that_is_not_one_is_a_note() {
    let (_dir, upload, class) = folders();
    write(&upload.join("homework.zip"), "not a zip at all");
    let unfit = take(&upload, &class, &[DotSm]).unwrap().unwrap_err();
    let Unfit::NoExercise { seen, notes } = unfit else {
        panic!("{unfit:?}");
    };
    assert_eq!(seen, ["homework.zip"]);
    assert!(
        notes[0].starts_with("homework.zip could not be read as a zip"),
        "{notes:?}"
    );
}
