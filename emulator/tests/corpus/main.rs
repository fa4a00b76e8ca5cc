//! The PTX coverage corpus: kernels a course student may write
//! (tests/corpus/cu/), each compiled by nvcc 11.8 (tests/ptx/corpus/) and by
//! the GPU machine's nvcc 13 (tests/ptx/nvcc13/corpus/), each run once on a
//! GPU with this same program (scripts/corpus-gpu.sh), its records committed
//! beside the PTX. Under `cargo test` every case runs on the emulator and
//! must match the GPU's record: the same driver results, the same output
//! bits (or within the tolerance the case states), the same printf lines.
//!
//! ```text
//! corpus [--table]                                  the test: every case on the emulator
//! corpus record --driver LIB --set SET --out FILE [--root DIR]
//! corpus one --driver LIB --ptx FILE --source FILE --case NAME --out FILE
//! ```
//!
//! Each case runs in a child process: printf output is the child's stdout,
//! and a fault on a GPU leaves only that child's context unusable.

mod driver;
mod record;
mod run;
mod spec;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;

use record::Record;
use sha2::{Digest, Sha256};

/// The two sets of PTX: nvcc 11.8's (built here) and nvcc 13's (built on the
/// GPU machine; absent from a student's copy of the course).
const SETS: [&str; 2] = ["nvcc11", "nvcc13"];

/// What the PTX of a corpus source carries on its first line, so a PTX file
/// older than its source is found.
const STAMP: &str = "// corpus source sha256 ";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("one") => one(&args[1..]),
        Some("record") => record_all(&args[1..]),
        _ => test(args.iter().any(|a| a == "--table")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("corpus: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `--name value` from a command line.
fn option<'a>(args: &'a [String], name: &str) -> Result<&'a str, String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
        .ok_or_else(|| format!("{name} is missing"))
}

/// A corpus source: a `.cu` file nvcc compiles, or a `.ptx` file written by
/// hand (the same text in both sets).
struct Source {
    path: PathBuf,
    stem: String,
    cases: Vec<spec::Case>,
}

fn sources(root: &Path) -> Result<Vec<Source>, String> {
    let dir = root.join("tests/corpus/cu");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu" || x == "ptx"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let cases = spec::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(Source { path, stem, cases })
        })
        .collect()
}

fn set_dir(root: &Path, set: &str) -> PathBuf {
    match set {
        "nvcc11" => root.join("tests/ptx/corpus"),
        _ => root.join("tests/ptx/nvcc13/corpus"),
    }
}

/// The GPU's records for a set.
fn expectations_path(root: &Path, set: &str) -> PathBuf {
    match set {
        "nvcc11" => root.join("tests/corpus/gpu-nvcc11.txt"),
        _ => root.join("tests/ptx/nvcc13/corpus/gpu.txt"),
    }
}

/// The PTX of `source` in `set`, checked against the source's digest.
fn ptx_path(root: &Path, set: &str, source: &Source) -> Result<PathBuf, String> {
    if source.path.extension().is_some_and(|x| x == "ptx") {
        return Ok(source.path.clone());
    }
    let path = set_dir(root, set).join(format!("{}.ptx", source.stem));
    let ptx = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = std::fs::read(&source.path).map_err(|e| e.to_string())?;
    let digest = format!("{:x}", Sha256::digest(&text));
    let stamped = ptx
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(STAMP))
        .unwrap_or("none");
    if stamped != digest {
        return Err(format!(
            "{} was built from another version of {} (run scripts/corpus-ptx.sh, then the GPU run)",
            path.display(),
            source.path.display()
        ));
    }
    Ok(path)
}

/// The child: one case, its record written to `--out`.
fn one(args: &[String]) -> Result<(), String> {
    let driver = driver::Driver::open(option(args, "--driver")?)?;
    let ptx_path = option(args, "--ptx")?;
    let ptx = std::fs::read_to_string(ptx_path).map_err(|e| format!("{ptx_path}: {e}"))?;
    let source = std::fs::read_to_string(option(args, "--source")?).map_err(|e| e.to_string())?;
    let name = option(args, "--case")?;
    let case = spec::parse(&source)?
        .into_iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("no case {name}"))?;
    let record = run::run(&driver, &ptx, &case)?;
    // printf output is this process's stdout: out before the record is.
    // SAFETY: flushes every C stream (the GPU driver's printf buffer is one).
    unsafe { libc::fflush(std::ptr::null_mut()) };
    std::fs::write(option(args, "--out")?, record.render()).map_err(|e| e.to_string())
}

/// A case's child run: its record (with printf lines from its stdout) and
/// what it said on stderr.
fn spawn(driver: &str, ptx: &Path, source: &Path, case: &str) -> Result<(Record, String), String> {
    let out = std::env::temp_dir().join(format!("corpus-{}-{case}.txt", std::process::id()));
    let output = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args(["one", "--driver", driver, "--case", case])
        .arg("--ptx")
        .arg(ptx)
        .arg("--source")
        .arg(source)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run the child: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let text = std::fs::read_to_string(&out);
    let _ = std::fs::remove_file(&out);
    let text =
        text.map_err(|_| format!("case {case} gave no record ({}): {stderr}", output.status))?;
    let mut record = record::parse_all(&text)?
        .remove(case)
        .ok_or_else(|| format!("case {case}: an empty record"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    record.printf = stdout.lines().map(str::to_string).collect();
    Ok((record, stderr))
}

/// Every (source, case) of a set, run with `driver` on a few workers.
fn run_set(
    root: &Path,
    set: &str,
    driver: &str,
    sources: &[Source],
) -> Result<Vec<(String, Record, String)>, String> {
    let mut jobs = Vec::new();
    for source in sources {
        let ptx = ptx_path(root, set, source)?;
        for case in &source.cases {
            jobs.push((ptx.clone(), source.path.clone(), case.name.clone()));
        }
    }
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let next = Mutex::new(0usize);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = {
                        let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                        *n += 1;
                        *n - 1
                    };
                    let Some((ptx, source, case)) = jobs.get(index) else {
                        break;
                    };
                    let outcome = spawn(driver, ptx, source, case);
                    results.lock().unwrap_or_else(|e| e.into_inner()).push((
                        index,
                        case.clone(),
                        outcome,
                    ));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(index, _, _)| *index);
    results
        .into_iter()
        .map(|(_, case, outcome)| outcome.map(|(record, stderr)| (case, record, stderr)))
        .collect()
}

/// `record`: runs a set on a driver (the GPU's) and writes the records.
fn record_all(args: &[String]) -> Result<(), String> {
    let root = match option(args, "--root") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    };
    let driver_path = option(args, "--driver")?;
    let set = option(args, "--set")?;
    let sources = sources(&root)?;
    let device = {
        let driver = driver::Driver::open(driver_path)?;
        // SAFETY: cuInit takes flags only.
        unsafe { (driver.cuInit)(0) };
        driver.device_name()
    };
    let mut text = format!("# corpus records, {set} PTX, on {device}\n");
    for (case, record, stderr) in run_set(&root, set, driver_path, &sources)? {
        println!("{set} {case:<28} {}", record.summary());
        if !stderr.trim().is_empty() {
            eprintln!("{set} {case}: {}", stderr.trim());
        }
        text += &record.render();
    }
    std::fs::write(option(args, "--out")?, text).map_err(|e| e.to_string())
}

/// libemulator.so beside this test program, as cargo lays it out.
fn emulator_library() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("no target/<profile> above the test")?;
    ["libemulator.so", "deps/libemulator.so"]
        .iter()
        .map(|name| profile.join(name))
        .find(|path| path.exists())
        .ok_or_else(|| format!("no libemulator.so in {}", profile.display()))
}

/// The test: every case of every set present on the emulator, against the
/// GPU's records.
fn test(table: bool) -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let library = emulator_library()?;
    let library = library.to_str().ok_or("a library path that is not UTF-8")?;
    let sources = sources(&root)?;
    let cases: usize = sources.iter().map(|s| s.cases.len()).sum();
    let kernels: std::collections::BTreeSet<&str> = sources
        .iter()
        .flat_map(|s| s.cases.iter().map(|c| c.kernel.as_str()))
        .collect();
    let tolerances: BTreeMap<&str, Vec<spec::Tolerance>> = sources
        .iter()
        .flat_map(|s| s.cases.iter().map(|c| (c.name.as_str(), c.tolerances())))
        .collect();
    let mut failures = Vec::new();
    let mut rows: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut sets_run = 0;
    for set in SETS {
        if !set_dir(&root, set).is_dir() {
            // A student's copy has no nvcc 13 PTX.
            continue;
        }
        sets_run += 1;
        let path = expectations_path(&root, set);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}: {e} (the GPU's records: scripts/corpus-gpu.sh)",
                path.display()
            )
        })?;
        let expected = record::parse_all(&text)?;
        for (case, got, stderr) in run_set(&root, set, library, &sources)? {
            let row = rows.entry(case.clone()).or_default();
            let Some(want) = expected.get(&case) else {
                failures.push(format!("{set} {case}: no GPU record in {}", path.display()));
                row.extend(["(none)".into(), got.summary()]);
                continue;
            };
            let differences = record::differences(want, &got, &tolerances[case.as_str()]);
            row.push(want.summary());
            if differences.is_empty() {
                row.push("matches".into());
            } else {
                row.push(format!("DIFFERS: {}", differences[0]));
                failures.push(format!(
                    "{set} {case}:\n    {}\n    emulator said: {}",
                    differences.join("\n    "),
                    stderr.trim()
                ));
            }
        }
    }
    if table {
        println!("| case | GPU, nvcc 11.8 PTX | emulator | GPU, nvcc 13 PTX | emulator |");
        println!("| --- | --- | --- | --- | --- |");
        for (case, row) in &rows {
            println!("| {case} | {} |", row.join(" | "));
        }
    }
    println!(
        "corpus: {cases} cases of {} kernels in {} sources, {sets_run} PTX set{}: {} differ from the GPU",
        kernels.len(),
        sources.len(),
        if sets_run == 1 { "" } else { "s" },
        failures.len()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}
