//! For the exercises' own tests (tests/cli.rs): runs an exercise binary the
//! way a student or the grader does and checks the promises every exercise
//! makes (exit codes, one-line argument errors, the no-GPU message, JSON).

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

use crate::catalogue::{self, Progress, StepFile};
use crate::dot::Affine;
use crate::units::counted;

/// One exercise or solution binary under test.
pub struct Exercise {
    path: PathBuf,
    /// The exercise's name as its reports give it, e.g. "dot-sm".
    pub name: &'static str,
}

/// The run a kept answer is tried at in the one-dimensional exercises
/// ([`Exercise::assert_a_kept_answer_fails`]): two small blocks, drawn
/// inputs, and three launches (a warm-up and two timed).
pub const KEPT_ANSWER_RUN: [&str; 10] = [
    "--n",
    "1000",
    "--threads",
    "128",
    "--blocks",
    "2",
    "--seed",
    "7",
    "--runs",
    "2",
];

impl Exercise {
    /// The binary of `package` (pass `env!("CARGO_PKG_NAME")`), found next to
    /// the test executable's folder as cargo lays them out, so a bundle
    /// copied to a GPU machine finds it too.
    pub fn new(package: &str, name: &'static str) -> Exercise {
        Exercise {
            path: assert_cmd::cargo::cargo_bin(package),
            name,
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.path);
        command.args(args);
        command
    }

    /// Runs with `--json`; returns the exit code and the parsed object.
    /// Fails the test on a panic or on output that is not one JSON object.
    pub fn json(&self, args: &[&str]) -> (i32, Value) {
        let output = self.command(args).arg("--json").output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
        let json = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|err| panic!("{args:?}: stdout is not JSON ({err}); stderr: {stderr}"));
        (output.status.code().unwrap_or(-1), json)
    }

    /// Each case exits 2, printing nothing on stdout and one line on stderr
    /// that names the given flag.
    pub fn assert_bad_arguments(&self, cases: &[(&[&str], &str)]) {
        for (args, flag) in cases {
            // No GPU is visible: refusals must not depend on one.
            let output = self
                .command(args)
                .env("CUDA_VISIBLE_DEVICES", "")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
            assert!(
                stderr.contains(flag),
                "{args:?} should name {flag}: {stderr}"
            );
            assert!(output.stdout.is_empty(), "{args:?}");
        }
    }

    /// With every GPU hidden (the driver then reports no device, as the
    /// toolkit's stub does on a CPU machine) it exits 3, says so, and with
    /// `--json` prints an error object.
    pub fn assert_no_gpu_exits_3(&self) {
        let output = self
            .command(&[])
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{stderr}");
        assert!(output.stdout.is_empty());
        assert!(stderr.contains("no NVIDIA GPU"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");

        let output = self
            .command(&["--json"])
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(3));
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(json["schema_version"], 1);
        assert_eq!(json["exercise"], self.name);
        assert_eq!(json["error"]["kind"], "no-gpu");
        assert!(
            json["error"]["cuda_error"]
                .as_str()
                .unwrap()
                .starts_with("CUDA_ERROR_")
        );
    }

    /// `--help` succeeds and mentions every flag.
    pub fn assert_help_lists(&self, flags: &[&str]) {
        let output = self.command(&["--help"]).output().unwrap();
        assert!(output.status.success());
        let help = String::from_utf8_lossy(&output.stdout);
        for flag in flags {
            assert!(help.contains(flag), "{flag} missing from:\n{help}");
        }
    }

    /// While a step's placeholder is left in the sources (as compiled,
    /// `include_str!`): [`Exercise::assert_fails_cleanly`]. Once every
    /// placeholder is gone there is nothing to check here; `assert_done`
    /// takes over.
    pub fn assert_fails_cleanly_while_steps_are_left(
        &self,
        kernel_cu: &str,
        main_rs: &str,
        args: &[&str],
    ) {
        if !self.progress(kernel_cu, main_rs).placeholders.is_empty() {
            self.assert_fails_cleanly(args);
        }
    }

    /// The grader's batch (`crate::batch`): `runs` made in one process
    /// each report what they report alone (exit code, parameters, the
    /// check's verdict, results where they are exact), and a run that
    /// cannot start (`--runs 0`, put last) ends the batch without a frame;
    /// a batch file that cannot be used is a one-line error, exit 2.
    pub fn assert_batch_reports_each_run_as_alone(&self, runs: &[&[&str]]) {
        let nonce = "00112233445566778899aabbccddeeff";
        let mut lines: Vec<Vec<String>> = runs
            .iter()
            .map(|args| {
                args.iter()
                    .chain(&["--json"])
                    .map(|a| a.to_string())
                    .collect()
            })
            .collect();
        lines.push(vec!["--runs".into(), "0".into(), "--json".into()]);
        let file = std::env::temp_dir().join(format!(
            "cuda-course-batch-test-{}-{}",
            self.name,
            std::process::id()
        ));
        std::fs::write(&file, crate::batch::file(nonce, &lines)).unwrap();
        let output = self
            .command(&[])
            .env(crate::batch::VARIABLE, &file)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let frames = crate::batch::read(nonce, lines.len(), &stdout, &stderr);
        assert_eq!(
            frames.len(),
            runs.len(),
            "stdout: {stdout}\nstderr: {stderr}"
        );
        for (frame, args) in frames.iter().zip(runs) {
            let (code, alone) = self.json(args);
            let batched: Value = serde_json::from_str(&frame.report).unwrap();
            assert_eq!(frame.exit, code, "{args:?}: {}", frame.report);
            assert_eq!(frame.stderr, "", "{args:?}");
            for field in ["exercise", "parameters"] {
                assert_eq!(batched[field], alone[field], "{args:?}: {field}");
            }
            assert_eq!(
                batched["check"]["passed"], alone["check"]["passed"],
                "{args:?}"
            );
            // The others' results hold times (memspace-timing,
            // streams-overlap) or a sum added atomically in any order.
            if matches!(
                self.name,
                "vecadd-anyN" | "dot-gm" | "dot-sm" | "matmul-naive" | "matmul-tiled"
            ) {
                assert_eq!(batched["results"], alone["results"], "{args:?}");
            }
        }
        assert!(stderr.contains("--runs"), "the last run's error: {stderr}");
        // Traced (the trace's descriptor a pipe: stderr's, here), each
        // run's mark follows its calls and comes before its frame's end:
        // 0, 1, ..., each once.
        let traced = self
            .command(&[])
            .env(crate::batch::VARIABLE, &file)
            .env(crate::trace_record::FD_VARIABLE, "2")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&traced.stderr);
        let marks: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("# batch ") || l.starts_with(nonce))
            .collect();
        let expected: Vec<String> = (0..runs.len())
            .flat_map(|k| {
                [
                    crate::trace_record::batch_mark(nonce, k)
                        .trim_end()
                        .to_owned(),
                    format!("{nonce} {k}"),
                ]
            })
            .collect();
        assert_eq!(marks, expected, "{stderr}");
        // A batch file that cannot be read, or does not start with a
        // nonce: exit 2, one line naming the variable, no report.
        std::fs::write(&file, "not a nonce\n[]\n").unwrap();
        for named in [file.clone(), file.with_extension("missing")] {
            let output = self
                .command(&[])
                .env(crate::batch::VARIABLE, &named)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{stderr}");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(stderr.contains(crate::batch::VARIABLE), "{stderr}");
            assert!(output.stdout.is_empty());
        }
        let _ = std::fs::remove_file(&file);
    }

    /// The grader's `--inputs-on-gpu` (its runs above 2^31 elements, a and
    /// b made on the GPU; vecadd-anyN's and dot-gm's): for each of `runs`,
    /// the kernel in `ptx`, a wrong one (`ptx` with every `wrong.0`
    /// replaced by `wrong.1`), and a hostile one that writes c wrong and
    /// then overwrites a and b to agree with it ([`overwrites_its_inputs`]),
    /// each loaded through [`KERNEL_PTX_ENV`](crate::grader_names::KERNEL_PTX_ENV),
    /// report what the host's inputs give the same kernel in the same
    /// binary: the exit code, the parameters, the check (failures and hint
    /// included) and the results. Without the variable the flag is a bad
    /// argument, said before any GPU is asked for.
    pub fn assert_inputs_on_gpu_report_as_on_host(
        &self,
        ptx: &str,
        wrong: (&str, &str),
        runs: &[&[&str]],
    ) {
        let flag = &format!("--{}", crate::grader_names::INPUTS_ON_GPU);
        let unset = self
            .command(&[flag.as_str()])
            .env_remove(crate::grader_names::KERNEL_PTX_ENV)
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&unset.stderr);
        assert_eq!(unset.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains(crate::grader_names::KERNEL_PTX_ENV),
            "{stderr}"
        );

        assert!(ptx.contains(wrong.0), "the PTX has no {}", wrong.0);
        let file = std::env::temp_dir().join(format!(
            "cuda-course-inputs-on-gpu-{}-{}.ptx",
            self.name,
            std::process::id()
        ));
        for (kernel, text) in [
            ("as built", ptx.to_owned()),
            ("wrong", ptx.replace(wrong.0, wrong.1)),
            ("hostile", overwrites_its_inputs(ptx)),
        ] {
            std::fs::write(&file, text).unwrap();
            for args in runs {
                let report = |extra: &[&str]| {
                    let output = self
                        .command(args)
                        .args(extra)
                        .arg("--json")
                        .env(crate::grader_names::KERNEL_PTX_ENV, &file)
                        .output()
                        .unwrap();
                    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
                    let json: Value = serde_json::from_slice(&output.stdout)
                        .unwrap_or_else(|err| panic!("{args:?} {extra:?}: {err}; {stderr}"));
                    (output.status.code(), json)
                };
                let (host_code, host) = report(&[]);
                let (gpu_code, on_gpu) = report(&[flag.as_str()]);
                let context = format!("{kernel} kernel, {args:?}:\n{host}\n{on_gpu}");
                assert_eq!(gpu_code, host_code, "{context}");
                assert_eq!(
                    host_code,
                    Some(if kernel == "as built" { 0 } else { 1 }),
                    "{context}"
                );
                for field in ["exercise", "parameters", "check", "results"] {
                    assert_eq!(on_gpu[field], host[field], "{field}: {context}");
                }
                assert_eq!(
                    on_gpu["timings"][0]["step"],
                    crate::grader_names::INPUTS_ON_GPU,
                    "{context}"
                );
            }
        }
        let _ = std::fs::remove_file(&file);
    }

    /// Runs the binary with `args` and the kernel compiled from `kernel_cu`
    /// in place of its own (through
    /// [`KERNEL_PTX_ENV`](crate::grader_names::KERNEL_PTX_ENV), as the
    /// grader loads a student's kernel), and returns what the student sees:
    /// the person report and the lines on stderr, and what `cargo course
    /// check` shows for the same binary, kernel and flags where the `course`
    /// binary is built beside this one. For the tests that give each of a
    /// chapter's classic mistakes its kernel and the words it must get.
    /// `mistake` names the temporary files.
    pub fn run_mistake(&self, mistake: &str, kernel_cu: &str, args: &[&str]) -> Mistake {
        let file = self.compiled(mistake, kernel_cu);
        let run = self.run_ptx(mistake, &file, args, &[]);
        let check = self.course_check(args, &file);
        std::fs::remove_file(&file).unwrap();
        Mistake { run, check }
    }

    /// A kernel that keeps its answer in device memory between launches
    /// (`kept_cu`) fails `args`'s run (three launches) as a stale launch
    /// naming the launch it replayed, and the exercise's own kernel
    /// (`kernel_cu`) passes the same run.
    pub fn assert_a_kept_answer_fails(
        &self,
        mistake: &str,
        kept_cu: &str,
        kernel_cu: &str,
        args: &[&str],
    ) {
        self.run_mistake(mistake, kept_cu, args).assert_says(
            1,
            &[
                "launch 2 of 3 of the kernel wrote the answer to launch 1's inputs",
                "must compute every launch from the inputs it is given",
            ],
        );
        self.run_mistake("solution", kernel_cu, args)
            .assert_says(0, &["PASS"]);
    }

    /// This binary run with `args` and the kernel `kernel_cu`, compiled by
    /// nvcc, in place of its own, with the variables `env` set too (the
    /// grader's, such as [`crate::CANARY_RUN_ENV`]).
    pub fn run_kernel_with(
        &self,
        mistake: &str,
        kernel_cu: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Said {
        let file = self.compiled(mistake, kernel_cu);
        let said = self.run_ptx(mistake, &file, args, env);
        std::fs::remove_file(&file).unwrap();
        said
    }

    /// This binary run `times` times with `args` and the kernel `kernel_cu`,
    /// compiled once: for what a run's own random draws decide. `mistake`
    /// names the PTX file: one of its own among a test binary's tests,
    /// which run at once.
    pub fn run_kernel_times(
        &self,
        mistake: &str,
        kernel_cu: &str,
        args: &[&str],
        times: usize,
    ) -> Vec<Said> {
        let file = self.compiled(mistake, kernel_cu);
        let said = (0..times)
            .map(|_| self.run_ptx(mistake, &file, args, &[]))
            .collect();
        std::fs::remove_file(&file).unwrap();
        said
    }

    /// `kernel_cu` compiled to a PTX file of this test process's own.
    fn compiled(&self, mistake: &str, kernel_cu: &str) -> std::path::PathBuf {
        let stem = std::env::temp_dir().join(format!(
            "cuda-course-mistake-{}-{mistake}-{}",
            self.name,
            std::process::id()
        ));
        let source = stem.with_extension("cu");
        std::fs::write(&source, kernel_cu).unwrap();
        let built = crate::nvcc::ptx_text(&source);
        std::fs::remove_file(&source).unwrap();
        let ptx =
            built.unwrap_or_else(|err| panic!("{mistake}: the kernel did not compile: {err}"));
        let file = stem.with_extension("ptx");
        std::fs::write(&file, ptx).unwrap();
        file
    }

    fn run_ptx(
        &self,
        mistake: &str,
        file: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Said {
        let output = self
            .command(args)
            .env(crate::grader_names::KERNEL_PTX_ENV, file)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let run = Said::of(output);
        assert!(!run.stderr.contains("panicked"), "{mistake}: {run}");
        run
    }

    /// `cargo course check` of this binary (`--prebuilt`, so nothing is
    /// built) with `args` after `--` and the kernel `ptx_file` in place of
    /// its own; None where the `course` binary is not built (a test of one
    /// exercise alone), unless `CUDA_COURSE_REQUIRE_BINARIES` is set.
    fn course_check(&self, args: &[&str], ptx_file: &std::path::Path) -> Option<Said> {
        // Beside the test's own binaries (target/<profile>/), as cargo lays
        // them out; assert_cmd's cargo_bin panics where it is not built.
        let course = std::env::current_exe()
            .ok()
            .and_then(|test| Some(test.parent()?.parent()?.to_owned()))
            .unwrap_or_default()
            .join(format!("course{}", std::env::consts::EXE_SUFFIX));
        if !course.exists() {
            assert!(
                std::env::var_os("CUDA_COURSE_REQUIRE_BINARIES").is_none(),
                "the course binary is not built: {}",
                course.display()
            );
            return None;
        }
        // The workspace this toolkit is part of: its exercises are the
        // course `check` looks up by name.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let output = Command::new(course)
            .arg("--root")
            .arg(root)
            .args(["check", self.name, "--prebuilt"])
            .arg(&self.path)
            .arg("--")
            .args(args)
            .env(crate::grader_names::KERNEL_PTX_ENV, ptx_file)
            .output()
            .unwrap();
        let said = Said::of(output);
        assert!(!said.stderr.contains("panicked"), "{said}");
        Some(said)
    }

    /// The stub as shipped: exit 1, with a TODO message or a failed check,
    /// never a panic or a CUDA error.
    pub fn assert_fails_cleanly(&self, args: &[&str]) {
        let (code, json) = self.json(args);
        assert_eq!(code, 1, "{json}");
        let unfinished = json["error"]["kind"] == "unfinished";
        let failed_check = json["check"]["passed"] == false;
        assert!(unfinished || failed_check, "{json}");
        if unfinished {
            let message = json["error"]["message"].as_str().unwrap();
            assert!(message.contains("TODO(step"), "{json}");
        }
    }
}

/// `source` (a crate's own kernel.cu) with each `(right, wrong)` edit made
/// wherever `right` occurs; each must occur. The classic mistakes' tests
/// make their kernels so, from the solution's kernel.cu where they run
/// (`#[cfg(solution)]`): the stubs' tests/cli.rs, which students get,
/// hold no solved kernel.
pub fn edited(source: &str, edits: &[(&str, &str)]) -> String {
    edits
        .iter()
        .fold(source.to_owned(), |text, (right, wrong)| {
            assert!(text.contains(right), "the kernel has no {right:?}");
            text.replace(right, wrong)
        })
}

/// The 1-based number of `source`'s first line of code (not a `//`
/// comment) holding `needle`: the emulator's findings name a kernel.cu
/// line as `kernel.cu:N (PTX line …)`, or `kernel.cu:N, inlined at …`.
pub fn line_of(source: &str, needle: &str) -> usize {
    1 + source
        .lines()
        .position(|l| !l.trim_start().starts_with("//") && l.contains(needle))
        .unwrap_or_else(|| panic!("no line of code holds {needle:?}"))
}

/// What a run of an exercise binary showed: its exit code, its report on
/// stdout and its lines on stderr (the emulator's findings among them).
#[derive(Debug)]
pub struct Said {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Said {
    fn of(output: std::process::Output) -> Said {
        Said {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Whether stdout or stderr holds every one of `words`.
    pub fn says(&self, words: &[&str]) -> bool {
        words
            .iter()
            .all(|w| self.stdout.contains(w) || self.stderr.contains(w))
    }

    /// Fails the test unless the run exited with `code` and said every one
    /// of `words`.
    pub fn assert_says(&self, code: i32, words: &[&str]) {
        assert_eq!(self.code, Some(code), "{self}");
        for word in words {
            assert!(self.says(&[word]), "missing {word:?} in:\n{self}");
        }
    }
}

/// A classic mistake's kernel as the student meets it: the exercise's own
/// run, and `cargo course check` of it where the `course` binary is built.
#[derive(Debug)]
pub struct Mistake {
    pub run: Said,
    pub check: Option<Said>,
}

impl Mistake {
    /// Fails the test unless the run exited with `code` and said every one
    /// of `words`, and `cargo course check` said the same of the run
    /// (passed for 0, failed otherwise) and showed every word a student
    /// reads: all but the finding's kind in
    /// brackets (`[shared-memory-race]`), which is the grader's tag of the
    /// emulator's line and which check shows in words.
    pub fn assert_says(&self, code: i32, words: &[&str]) {
        self.run.assert_says(code, words);
        let Some(check) = &self.check else { return };
        assert_eq!(
            check.code,
            Some(crate::exit_code::ToolExit::Short as i32),
            "cargo course check: {check}"
        );
        // check wraps its text under labels: compared with every run of
        // white space as one space.
        let shown = one_spaced(&check.stdout);
        let failed = shown.contains("run fails its check:") || shown.contains("run failed:");
        assert_eq!(
            failed,
            code != 0,
            "cargo course check should say the run {}: {check}",
            if code == 0 { "passes" } else { "failed" }
        );
        for word in words.iter().filter(|w| !w.starts_with('[')) {
            assert!(
                shown.contains(&one_spaced(word)),
                "cargo course check does not show {word:?}:\n{check}"
            );
        }
    }
}

/// `text` with every run of white space made one space, its ends kept.
fn one_spaced(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if !space {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// The PTX of a kernel named as `ptx`'s entry, of the same parameters
/// (a, b, c and n, as vecadd-anyN's and dot-gm's), that writes 0 to every
/// c[i] and then to a[i] and b[i]: 0 + 0 and 0 × 0 are 0, so a check that
/// read a and b back from the GPU after the kernel would pass it. The
/// grader's runs with their inputs on the GPU must not
/// (`inputs_on_gpu`'s threat model). Compiled here by nvcc, which every
/// build of the exercise already needed.
pub fn overwrites_its_inputs(ptx: &str) -> String {
    let entry = ptx
        .lines()
        .find_map(|l| l.trim().strip_prefix(".visible .entry "))
        .and_then(|l| l.split('(').next())
        .expect("the PTX has an entry");
    let text = format!(
        "extern \"C\" __global__ void {entry}(float* a, float* b, float* c, size_t n)\n\
         {{\n\
         \x20   const size_t stride = (size_t)blockDim.x * gridDim.x;\n\
         \x20   for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{\n\
         \x20       c[i] = 0.0f;\n\
         \x20       a[i] = 0.0f;\n\
         \x20       b[i] = 0.0f;\n\
         \x20   }}\n\
         }}\n"
    );
    let source = std::env::temp_dir().join(format!(
        "cuda-course-overwrites-inputs-{entry}-{}.cu",
        std::process::id()
    ));
    std::fs::write(&source, text).unwrap();
    let built = crate::nvcc::ptx_text(&source);
    std::fs::remove_file(&source).unwrap();
    built.unwrap_or_else(|err| panic!("the hostile kernel did not compile: {err}"))
}

/// What `ptx` lacks of what `exercise` is about (its catalogue's needs),
/// read as instructions by the `ptx` crate, as `cargo course check` and
/// the grader read it; empty when it shows it all.
pub fn missing_in_ptx(exercise: &catalogue::Exercise, ptx: &str) -> Vec<String> {
    let module = match ptx::parser::parse(ptx) {
        Ok(module) => module,
        Err(err) => return vec![format!("its PTX could not be read as instructions ({err})")],
    };
    exercise
        .ptx
        .iter()
        .filter_map(|need| need.missing_in(&module))
        .collect()
}

impl Exercise {
    /// The kernel's PTX (as compiled, `include_str!`) shows everything the
    /// catalogue says the exercise is about.
    pub fn assert_ptx_shows_what_the_exercise_is_about(&self, ptx: &str) {
        let entry = catalogue::find(self.name).expect("an exercise of the catalogue");
        let missing = missing_in_ptx(entry, ptx);
        assert!(missing.is_empty(), "{}:\n{ptx}", missing.join("; "));
    }
}

/// Σ a[i]·b[i] and Σ|a[i]·b[i]| for i < n, by brute force: independent of
/// the closed forms the exercises use.
pub fn brute_force_dot(n: u64, a: Affine, b: Affine) -> (i128, i128) {
    (0..n)
        .map(|i| a.at(i) * b.at(i))
        .fold((0, 0), |(dot, abs), x| (dot + x, abs + x.abs()))
}

impl Exercise {
    /// [`Exercise::assert_dot_passes`] with a and b drawn from a seed, as the
    /// grader passes them, at one element, an odd size of small blocks and
    /// a million elements of the largest block: the dot within its bound of
    /// the sum computed here.
    pub fn assert_dot_passes_drawn_inputs(&self) {
        for (n, threads) in [("1", "64"), ("4999", "32"), ("1000003", "1024")] {
            self.assert_dot_passes(&[
                "--n",
                n,
                "--threads",
                threads,
                "--seed",
                "2026",
                "--runs",
                "2",
            ]);
        }
    }

    /// Runs a dot exercise: it exits 0 with its check passed, its expected
    /// value equals brute force, and its value lies within the tolerance it
    /// reports of brute force. Returns the value and the tolerance.
    pub fn assert_dot_passes(&self, args: &[&str]) -> (f64, f64) {
        let (code, json) = self.json(args);
        assert_eq!(code, 0, "{args:?}: {json}");
        assert_eq!(json["check"]["passed"], true, "{args:?}: {json}");
        let parameters = &json["parameters"];
        let affine = |key: &str| parameters[key].as_str().unwrap().parse::<Affine>().unwrap();
        let n = parameters["n"].as_u64().unwrap();
        let (dot, abs) = match parameters["seed"].as_u64() {
            None => {
                let (dot, abs) = brute_force_dot(n, affine("a"), affine("b"));
                assert_eq!(json["results"]["expected"], dot.to_string(), "{args:?}");
                (dot as f64, abs as f64)
            }
            // Drawn values: each product exact in f64, summed here in f64
            // (within n·2^−53 of Σ|a·b|, far inside the tolerance).
            Some(seed) => (0..n)
                .map(|i| {
                    let (a, b) = crate::dot::Values::Drawn { seed }.at(i);
                    f64::from(a) * f64::from(b)
                })
                .fold((0.0, 0.0), |(dot, abs), x: f64| (dot + x, abs + x.abs())),
        };
        let got = json["results"]["dot"].as_f64().unwrap();
        let limit = json["check"]["tolerance"]["limit"].as_f64().unwrap();
        let error = (got - dot).abs();
        assert!(
            error <= limit * abs,
            "{args:?}: {got} is {error:e} from {dot}, over {limit:e} of {abs}"
        );
        (got, limit)
    }
}

impl Exercise {
    /// Runs a matmul exercise: exit 0, every one of the W² entries checked
    /// and right, and the CPU golden model (an independent computation from
    /// the same inputs) agreeing exactly.
    pub fn assert_matmul_passes(&self, args: &[&str]) -> Value {
        let (code, json) = self.json(args);
        assert_eq!(code, 0, "{args:?}: {json}");
        assert_eq!(json["check"]["passed"], true, "{args:?}: {json}");
        let width = json["parameters"]["width"].as_u64().unwrap();
        assert_eq!(json["check"]["compared"], width * width, "{args:?}");
        // The weighted checksum of the GPU's P equals the one computed from
        // the inputs alone, as the grader computes it: exactly for the
        // default inputs (whose golden model agrees exactly too), within
        // its bound for drawn ones.
        let seed = json["parameters"]["seed"].as_u64();
        let inputs = crate::matmul::Inputs { seed };
        let width = u32::try_from(width).unwrap();
        let got = json["results"]["checksum"].as_f64().unwrap();
        match seed {
            None => {
                assert_eq!(json["results"]["rms_vs_golden"], 0.0, "{args:?}: {json}");
                assert_eq!(got, inputs.checksum(width), "{args:?}");
            }
            Some(_) => assert!(
                (got - inputs.checksum(width)).abs() <= inputs.checksum_bound(width),
                "{args:?}: {got}"
            ),
        }
        assert!(json["gflop_per_s"].as_f64().unwrap() > 0.0, "{args:?}");
        json
    }
}

/// Set by the course's own GPU suite (scripts/gpu-suite.sh): it tests the
/// course as shipped, where a stub must not read as done.
pub const SHIPPED_ENV: &str = "CUDA_COURSE_SHIPPED";

impl Exercise {
    /// The last test of every exercise: passes exactly when the exercise is
    /// done on this machine (every step written, the PTX has what the
    /// exercise teaches, a run at the default size passes on this GPU) and
    /// says so; otherwise fails saying what is next. `kernel_cu` and
    /// `main_rs` are the sources as compiled (`include_str!`), so a test
    /// executable copied to a GPU machine knows them. With [`SHIPPED_ENV`]
    /// set, a stub (`solution` false) must instead not be done.
    pub fn assert_done(&self, solution: bool, ptx: &str, kernel_cu: &str, main_rs: &str) {
        let verdict = self.done(ptx, kernel_cu, main_rs);
        if !solution && std::env::var_os(SHIPPED_ENV).is_some() {
            assert!(verdict.is_err(), "the stub as shipped is done: {verdict:?}");
            return;
        }
        match verdict {
            Ok(done) => println!("{done}"),
            Err(not_done) => panic!("{not_done}"),
        }
    }

    /// What these sources show of the steps, by the catalogue's entry for
    /// this exercise.
    fn progress(&self, kernel_cu: &str, main_rs: &str) -> Progress {
        let entry = catalogue::find(self.name).expect("an exercise of the catalogue");
        entry.progress(|file| match file {
            StepFile::Kernel => kernel_cu.to_owned(),
            StepFile::Host => main_rs.to_owned(),
        })
    }

    /// Done as `cargo course check` says it: no placeholder left (a
    /// `TODO(step N)` comment left above a written step does not count), the
    /// PTX as the exercise teaches, and a run that passes.
    fn done(&self, ptx: &str, kernel_cu: &str, main_rs: &str) -> Result<String, String> {
        let name = self.name;
        let entry = catalogue::find(name)
            .ok_or_else(|| format!("{name} is not in the course's catalogue"))?;
        let progress = self.progress(kernel_cu, main_rs);
        if !progress.placeholders.is_empty() {
            // `left` holds every placeholder step, and may start earlier.
            let next = progress.left[0];
            let step = entry.step(next).expect("a step of the exercise");
            return Err(format!(
                "{name} is not done: {} of {} left. Step {next} is next, in {}: {}\n\
                 A hint: `cargo course hint {name} {next}`.",
                progress.left.len(),
                counted(entry.steps.len(), "step", "steps"),
                step.file.path(),
                step.task
            ));
        }
        let missing = missing_in_ptx(entry, ptx);
        if !missing.is_empty() {
            return Err(format!(
                "{name} is not done: every step is written, but {}",
                missing.join("; ")
            ));
        }
        let (code, json) = self.json(&[]);
        if json["check"]["passed"] == true && code == 0 {
            return Ok(format!(
                "{name} is done on this machine: every step is written and it passes on {}.",
                json["device"]["name"].as_str().unwrap_or("this GPU")
            ));
        }
        let why = json["error"]["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("its check failed: {}", json["check"]));
        Err(format!(
            "{name} is not done: every step is written, but the run did not pass (exit {code}): \
             {why}\n`cargo run -p {name}` shows the report."
        ))
    }
}
