//! `grader`: builds students' submissions, runs them on the GPU, judges them
//! and writes grades and feedback. Parses, dispatches, maps errors to exit
//! codes; the work is in the library.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use grader::build::bundle::{self, Progress, Request};
use grader::confine::runner::Limits;
use grader::confine::sandbox::Isolation;
use grader::grade::grading::{self, Settings};
use grader::grade::regrade;
use grader::record::reports;
use grader::record::results::Results;
use indicatif::{ProgressBar, ProgressStyle};
use kernels::catalogue::{self, ExerciseId};

/// Grade a class's CUDA exercises: build, run on the GPU, judge, report.
#[derive(Parser, Debug)]
#[command(
    name = "grader",
    after_help = "Exit status: 0 done; 1 `check` found work short of full marks; \
                  2 bad arguments or an error that stopped the grader."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build, run and judge every submission, and write the reports.
    Grade {
        /// A folder with one folder per student (its name is the student's id).
        #[arg(value_parser = absolute)]
        submissions: PathBuf,
        #[command(flatten)]
        choose: Choose,
        #[command(flatten)]
        running: Running,
        #[command(flatten)]
        safety: Safety,
        /// Where results.json, grades.csv and feedback/ go.
        #[arg(long, value_parser = absolute, default_value = "grading")]
        out: PathBuf,
    },
    /// Build every submission into a bundle for a GPU node (no GPU needed).
    Build {
        #[arg(value_parser = absolute)]
        submissions: PathBuf,
        #[command(flatten)]
        choose: Choose,
        #[command(flatten)]
        safety: Safety,
        /// The bundle folder to write.
        #[arg(long, value_parser = absolute)]
        bundle: PathBuf,
    },
    /// Run and judge a bundle (no cargo needed), and write the reports.
    Run {
        #[arg(value_parser = absolute)]
        bundle: PathBuf,
        #[command(flatten)]
        running: Running,
        #[command(flatten)]
        safety: Safety,
        #[arg(long, value_parser = absolute, default_value = "grading")]
        out: PathBuf,
        /// Only this student (their id); repeat for several. The others'
        /// records in results.json are kept as they are.
        #[arg(long = "student", value_name = "ID", conflicts_with = "shard")]
        students: Vec<String>,
        #[command(flatten)]
        scale: Scale,
    },
    /// Join the shards of a bundle (`run --shard`) into OUT and write the
    /// reports there.
    Merge {
        /// Where results.json, grades.csv and feedback/ go.
        #[arg(value_parser = absolute)]
        out: PathBuf,
        /// The shards' output folders, every shard once.
        #[arg(required = true, value_parser = absolute)]
        shards: Vec<PathBuf>,
    },
    /// Write Slurm job scripts that grade a bundle in shards and merge
    /// them: OUT/slurm/grade.sbatch, merge.sbatch and submit.sh.
    Slurm(SlurmArgs),
    /// Write grades.csv and feedback/ again from results.json in DIR.
    Report {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
    /// Write a gradebook an LMS imports as is, from results.json in DIR.
    Export {
        /// The folder holding results.json.
        #[arg(default_value = "grading", value_parser = absolute)]
        dir: PathBuf,
        #[arg(long, value_enum)]
        lms: grader::record::export::Lms,
        /// A CSV mapping student folders to the LMS's ids, names, emails and
        /// sections (see README's "Grading a class").
        #[arg(long, value_parser = absolute)]
        roster: Option<PathBuf>,
        /// The file to write [default: DIR/canvas.csv or DIR/moodle.csv].
        #[arg(long, value_parser = absolute)]
        to: Option<PathBuf>,
    },
    /// For the instructor only, never a grade: which submissions' kernel or
    /// host code is identical to another's or to the reference solution.
    Similarity {
        #[arg(value_parser = absolute)]
        submissions: PathBuf,
        /// Where similarity.md goes.
        #[arg(long, value_parser = absolute, default_value = "grading")]
        out: PathBuf,
        /// The course checkout [default: the workspace the grader is run from].
        #[arg(long, value_parser = absolute)]
        course: Option<PathBuf>,
    },
    /// Run the grader's tests on your own exercise, before submitting.
    Check {
        /// The exercise, e.g. dot-sm.
        #[arg(value_parser = exercise_name)]
        exercise: ExerciseId,
        /// Its folder [default: exercises/EXERCISE of this course].
        #[arg(long, value_parser = absolute)]
        path: Option<PathBuf>,
        #[command(flatten)]
        running: Running,
        #[command(flatten)]
        safety: Safety,
        /// Test plan seed [default: a fresh one].
        #[arg(long)]
        seed: Option<u64>,
    },
    /// For the course's maintainers: the grader's own test class.
    #[command(hide = true, subcommand)]
    Mutants(MutantsCommand),
}

#[derive(Subcommand, Debug)]
enum MutantsCommand {
    /// Write the class (solutions, stubs, a mutant per classic bug, correct
    /// variants) as submissions in DIR.
    Write {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
    /// Say which expectations the class graded into DIR broke; exit 1 if any.
    Verify {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
    /// Print the golden listing of the class graded into DIR: every
    /// exercise's points, every run's verdict kind and points, every check.
    Listing {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
}

/// What to grade.
#[derive(clap::Args, Debug)]
struct Choose {
    /// Only this exercise; repeat for several [default: all].
    #[arg(long = "exercise", value_name = "EXERCISE", value_parser = exercise_name)]
    exercises: Vec<ExerciseId>,
    /// Test plan seed, recorded in results.json [default: a fresh one].
    #[arg(long)]
    seed: Option<u64>,
    /// Parallel build jobs [default: cargo's].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: Option<u32>,
    /// The course checkout whose crates are built [default: the workspace
    /// the grader is run from].
    #[arg(long, value_parser = absolute)]
    course: Option<PathBuf>,
    /// Where cargo builds [default: BUNDLE/.build]; keep it between
    /// batches so dependencies compile once.
    #[arg(long, value_parser = absolute)]
    target_dir: Option<PathBuf>,
    /// Seconds one student's build may take, 1 to 3600.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    build_timeout: u64,
    /// Only this student (their id); repeat for several. Everyone else's
    /// records are kept as they are.
    #[arg(long = "student", value_name = "ID")]
    students: Vec<String>,
}

/// Spreading `grader run` over GPUs and machines.
#[derive(clap::Args, Debug)]
struct Scale {
    /// Grade only the K-th of N slices of the class (students in sorted
    /// order, every N-th), for `grader merge`.
    #[arg(long, value_name = "K/N", value_parser = grader::grade::shard::parse)]
    shard: Option<grader::grade::shard::Shard>,
    /// Grade over these GPUs (as nvidia-smi numbers them, e.g. 0,1): one
    /// student at a time per GPU, each run seeing only its GPU.
    #[arg(long, value_name = "LIST", value_parser = grader::confine::gpus::parse)]
    gpus: Option<grader::confine::gpus::Indices>,
}

#[derive(clap::Args, Debug)]
struct SlurmArgs {
    /// The bundle (`grader build`'s folder), on the cluster's shared filesystem.
    #[arg(value_parser = absolute)]
    bundle: PathBuf,
    /// Where the merged grading goes; shards in OUT/shards/K.
    #[arg(long, value_parser = absolute)]
    out: PathBuf,
    /// Tasks of the job array, one shard each, 1 to 10000.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=i64::from(grader::grade::shard::MAX_SHARDS)))]
    shards: u32,
    /// The Slurm partition [default: the cluster's].
    #[arg(long, value_parser = slurm_word)]
    partition: Option<String>,
    /// Generic resources per shard, e.g. gpu:1 [default: none].
    #[arg(long, value_parser = slurm_word)]
    gres: Option<String>,
    /// The grader binary on the nodes [default: this one].
    #[arg(long, value_parser = absolute)]
    grader: Option<PathBuf>,
    /// Also submit them (OUT/slurm/submit.sh: sbatch --parsable).
    #[arg(long)]
    submit: bool,
    /// Flags for every `grader run`, after --, e.g. -- --timeout 30 --no-sandbox.
    #[arg(last = true, value_name = "RUN_FLAGS")]
    run_args: Vec<String>,
}

/// A partition or gres: it goes into an #SBATCH line as is.
fn slurm_word(text: &str) -> Result<String, String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_-.:,=".contains(c);
    if !text.is_empty() && text.chars().all(allowed) {
        Ok(text.to_owned())
    } else {
        Err("letters, digits and _ - . : , = only".to_owned())
    }
}

/// Whether student code is confined.
#[derive(clap::Args, Debug)]
struct Safety {
    /// Build and run student code without the bubblewrap sandbox, with
    /// your rights (every report says so).
    #[arg(long)]
    no_sandbox: bool,
}

/// How runs are made.
#[derive(clap::Args, Debug)]
struct Running {
    /// Seconds a run may take before it is stopped, 1 to 3600.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    /// Skip students results.json already holds.
    #[arg(long)]
    resume: bool,
    /// Skip compute-sanitizer (memcheck, racecheck) on each exercise's
    /// first run: the memory-safety point is then not assessed.
    #[arg(long)]
    no_sanitize: bool,
    /// Run the kernels on the CPU emulator the bundle carries, at sizes a
    /// CPU runs in seconds [default: when no NVIDIA GPU is usable].
    #[arg(long, conflicts_with = "no_emulate")]
    emulate: bool,
    /// Never the emulator: with no usable NVIDIA GPU, stop before grading.
    #[arg(long)]
    no_emulate: bool,
}

fn exercise_name(text: &str) -> Result<ExerciseId, String> {
    match ExerciseId::from_name(text) {
        Some(id) => Ok(id),
        None => Err(format!(
            "not an exercise; one of {}",
            catalogue::EXERCISES
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("grader: error: {message}");
            // As clap does for bad arguments; 1 is `check` below full marks.
            ExitCode::from(2)
        }
    }
}

/// The course to build against (see grader::discover::checkout), named on the first
/// line of the run so that nobody grades against the wrong checkout.
fn course(given: Option<&Path>) -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|err| format!("the working folder: {err}"))?;
    let found = grader::discover::checkout::find(given, &cwd)?;
    eprintln!("grader: course {} ({})", found.root.display(), found.how);
    Ok(found.root)
}

/// A path from the command line, made absolute against the caller's
/// working folder as it is parsed: cargo and the runs work in folders of
/// their own.
fn absolute(text: &str) -> Result<PathBuf, String> {
    std::path::absolute(text).map_err(|err| err.to_string())
}

fn fresh_seed() -> u64 {
    fastrand::u64(..)
}

fn limits(running: &Running) -> Limits {
    Limits {
        timeout: Duration::from_secs(running.timeout),
        max_output: 1 << 20,
    }
}

fn dispatch(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Build {
            submissions,
            choose,
            safety,
            bundle,
        } => {
            let isolation = Isolation::choose(safety.no_sandbox)?;
            let course = course(choose.course.as_deref())?;
            build(&course, &submissions, &choose, &bundle, &isolation)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            bundle,
            running,
            safety,
            out,
            mut students,
            scale,
        } => {
            let isolation = Isolation::choose(safety.no_sandbox)?;
            let emulate = device(&running)?;
            eprintln!(
                "grader: grading the bundle {} into {}",
                bundle.display(),
                out.display()
            );
            let gpus = match &scale.gpus {
                Some(_) if emulate => {
                    return Err(
                        "--gpus spreads runs over NVIDIA GPUs, and these runs are on the CPU \
                         emulator; leave --gpus out, or grade on a GPU node"
                            .to_owned(),
                    );
                }
                Some(indices) => grader::confine::gpus::find(&indices.0)?,
                None => vec![],
            };
            if let Some(shard) = scale.shard {
                students = grader::grade::shard::begin(
                    &bundle,
                    &out,
                    shard,
                    running.resume,
                    isolation.description(),
                    emulate,
                )?;
                eprintln!("grader: shard {shard}: {} students", students.len());
            }
            let results = if scale.shard.is_some() && students.is_empty() {
                // A class smaller than its shards: this one holds nobody.
                Results::load(&out.join("results.json"))?
            } else {
                run(
                    &bundle, &running, &out, &students, isolation, &gpus, emulate,
                )?
            };
            print!("{}", reports::summary(&results));
            Ok(ExitCode::SUCCESS)
        }
        Command::Grade {
            submissions,
            choose,
            running,
            safety,
            out,
        } => {
            let isolation = Isolation::choose(safety.no_sandbox)?;
            let emulate = device(&running)?;
            let course = course(choose.course.as_deref())?;
            let bundle = out.join("bundle");
            build(&course, &submissions, &choose, &bundle, &isolation)?;
            let results = run(
                &bundle,
                &running,
                &out,
                &choose.students,
                isolation,
                &[],
                emulate,
            )?;
            similarity(&course, &submissions, &choose.exercises, &out)?;
            print!("{}", reports::summary(&results));
            Ok(ExitCode::SUCCESS)
        }
        Command::Export {
            dir,
            lms,
            roster,
            to,
        } => {
            let to = to.unwrap_or_else(|| dir.join(lms.file_name()));
            eprintln!(
                "grader: exporting {} for {lms:?}",
                dir.join("results.json").display()
            );
            let results = Results::load(&dir.join("results.json"))?;
            let roster = roster
                .as_deref()
                .map(grader::record::export::Roster::load)
                .transpose()?;
            let exported = grader::record::export::export(&results, lms, roster.as_ref());
            for line in &exported.unmatched {
                eprintln!("grader: {line}");
            }
            grader::atomic_file::write(&to, exported.csv.as_bytes())
                .map_err(|err| format!("{}: {err}", to.display()))?;
            eprintln!("grader: wrote {}", to.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Similarity {
            submissions,
            out,
            course: given,
        } => {
            let course = course(given.as_deref())?;
            similarity(&course, &submissions, &[], &out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { out, shards } => merge(&out, &shards),
        Command::Slurm(args) => slurm(&args),
        Command::Report { dir } => {
            eprintln!(
                "grader: reports from {}",
                dir.join("results.json").display()
            );
            let results = Results::load(&dir.join("results.json"))?;
            reports::write(&results, &dir).map_err(|err| format!("{}: {err}", dir.display()))?;
            print!("{}", reports::summary(&results));
            Ok(ExitCode::SUCCESS)
        }
        Command::Check {
            exercise,
            path,
            running,
            safety,
            seed,
        } => check(exercise, path, &running, &safety, seed),
        Command::Mutants(MutantsCommand::Write { dir }) => {
            grader::instructor::mutants::write_class(&course(None)?, &dir)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Mutants(MutantsCommand::Listing { dir }) => {
            let results = Results::load(&dir.join("results.json"))?;
            print!("{}", grader::instructor::mutants::listing(&results));
            Ok(ExitCode::SUCCESS)
        }
        Command::Mutants(MutantsCommand::Verify { dir }) => {
            let broken =
                grader::instructor::mutants::verify(&Results::load(&dir.join("results.json"))?);
            for line in &broken {
                println!("broken: {line}");
            }
            println!(
                "{} expectations, {} broken",
                2 + grader::instructor::mutants::MUTANTS.len(),
                broken.len()
            );
            Ok(if broken.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}

fn build(
    course: &Path,
    submissions: &Path,
    choose: &Choose,
    bundle: &Path,
    isolation: &Isolation,
) -> Result<(), String> {
    // Regrading some students: the rest of the bundle, and its seed, stay.
    let earlier = (!choose.students.is_empty())
        .then(|| bundle::load(bundle).ok())
        .flatten();
    let seed = match regrade::seed(choose.seed, earlier.as_ref().map(|b| b.seed))? {
        Some(seed) => seed,
        None => fresh_seed(),
    };
    warn_if_unsandboxed(isolation);
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} students built, {elapsed} {msg}")
            .expect("a fixed template"),
    );
    bar.set_message(format!(
        "dependencies of {} (seed {seed})",
        submissions.display()
    ));
    bar.enable_steady_tick(Duration::from_millis(120));
    let progress = |step: &Progress| match step {
        Progress::Preparing => bar.set_message("compiling the dependencies, once"),
        Progress::Building {
            student,
            done,
            total,
        } => {
            bar.set_length(*total as u64);
            bar.set_position(*done as u64);
            bar.set_message(student.to_string());
            if bar.is_hidden() {
                eprintln!("grader: building {} of {total}", done + 1);
            }
        }
        Progress::Done => bar.set_position(bar.length().unwrap_or(0)),
    };
    let built = bundle::build(&Request {
        course,
        submissions,
        bundle,
        exercises: &choose.exercises,
        students: &choose.students,
        seed,
        jobs: choose.jobs.map(|j| j as usize),
        target: choose.target_dir.as_deref(),
        isolation,
        build_timeout: Duration::from_secs(choose.build_timeout),
        progress: &progress,
    });
    bar.finish_and_clear();
    let mut built = built?;
    for line in reports::submission_problems(&built.items) {
        eprintln!("grader: {line}");
    }
    eprintln!(
        "grader: built {} into {} (seed {seed}): {}",
        submissions.display(),
        bundle.display(),
        reports::build_counts(&built.items)
    );
    if let Some(earlier) = earlier {
        built = regrade::merge_bundle(earlier, built, &choose.students);
        regrade::save_bundle(&built, bundle)?;
    }
    Ok(())
}

/// Where the kernels run (true: the CPU emulator), said once, before any
/// student is built or graded.
fn device(running: &Running) -> Result<bool, String> {
    let emulate = grader::run::device::choose(running.emulate, running.no_emulate)?;
    if emulate {
        eprintln!(
            "grader: {}: kernels run on the CPU emulator, at capped sizes; every report says so",
            if running.emulate {
                "--emulate"
            } else {
                "no NVIDIA GPU is usable here (--no-emulate refuses to grade without one)"
            }
        );
        if !running.no_sanitize {
            eprintln!(
                "grader: compute-sanitizer is left out on the emulator, which checks every \
                 access itself: the memory-safety point is not assessed"
            );
        }
    }
    Ok(emulate)
}

/// Said once per command, before any student code is touched.
fn warn_if_unsandboxed(isolation: &Isolation) {
    if !isolation.is_sandboxed() {
        eprintln!("grader: warning: --no-sandbox: student code builds and runs with your rights");
    }
}

fn run(
    bundle: &Path,
    running: &Running,
    out: &Path,
    only: &[String],
    isolation: Isolation,
    gpus: &[grader::confine::gpus::Pin],
    emulate: bool,
) -> Result<Results, String> {
    warn_if_unsandboxed(&isolation);
    let settings = Settings {
        isolation,
        limits: limits(running),
        resume: running.resume,
        sanitize: !running.no_sanitize && !emulate,
        only: only.to_vec(),
        emulate,
    };
    let students: BTreeSet<String> = bundle::load(bundle)?
        .items
        .into_iter()
        .map(|i| i.student)
        .filter(|s| only.is_empty() || only.contains(s))
        .collect();
    let bar = ProgressBar::new(students.len() as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} students, {elapsed} {msg}")
            .expect("a fixed template"),
    );
    let progress = |student: &str| {
        // A bar on a terminal; a line per student where there is none.
        if bar.is_hidden() {
            // Escaped: a name cannot start a line that looks like the grader's.
            eprintln!("grader: graded {}", student.escape_debug());
        }
        bar.set_message(student.to_owned());
        bar.inc(1);
    };
    let results = if gpus.is_empty() {
        grading::run(bundle, out, &settings, progress)
    } else {
        grader::grade::pool::run(bundle, out, &settings, gpus, progress)
    };
    bar.finish_and_clear();
    let results = results?;
    reports::write(&results, out).map_err(|err| format!("{}: {err}", out.display()))?;
    Ok(results)
}

/// `grader merge`: the shards joined into OUT, which loses nothing it held.
fn merge(out: &Path, shards: &[PathBuf]) -> Result<ExitCode, String> {
    let mut loaded = Vec::new();
    for dir in shards {
        if dir == out {
            return Err(format!(
                "{} is a shard; merge into another folder",
                dir.display()
            ));
        }
        loaded.push((dir.clone(), Results::load(&dir.join("results.json"))?));
    }
    let merged = grader::record::merge::join(&loaded)?;
    let path = out.join("results.json");
    if path.exists() {
        grader::record::merge::check_out(out, &Results::load(&path)?, &merged)?;
    }
    merged
        .save(&path)
        .map_err(|err| format!("{}: {err}", path.display()))?;
    reports::write(&merged, out).map_err(|err| format!("{}: {err}", out.display()))?;
    eprintln!(
        "grader: merged {} shards ({} students) into {}",
        shards.len(),
        merged.students.len(),
        out.display()
    );
    print!("{}", reports::summary(&merged));
    Ok(ExitCode::SUCCESS)
}

/// `grader slurm`: writes the job scripts, and submits them with --submit.
fn slurm(args: &SlurmArgs) -> Result<ExitCode, String> {
    use grader::instructor::slurm;
    bundle::load(&args.bundle)?;
    let grader = match &args.grader {
        Some(path) => path.clone(),
        None => std::env::current_exe().map_err(|err| format!("this grader's path: {err}"))?,
    };
    let job = slurm::Job {
        grader: &grader,
        bundle: &args.bundle,
        out: &args.out,
        shards: args.shards,
        partition: args.partition.as_deref(),
        gres: args.gres.as_deref(),
        run_args: &args.run_args,
    };
    let scripts = job.scripts();
    let folder = slurm::folder(&args.out);
    let io = |err: std::io::Error| format!("{}: {err}", folder.display());
    std::fs::create_dir_all(folder.join("logs")).map_err(io)?;
    for (name, text) in [
        (slurm::GRADE, &scripts.grade),
        (slurm::MERGE, &scripts.merge),
        (slurm::SUBMIT, &scripts.submit),
    ] {
        grader::atomic_file::write(&folder.join(name), text.as_bytes()).map_err(io)?;
    }
    eprintln!(
        "grader: wrote {}, {} and {} in {}",
        slurm::GRADE,
        slurm::MERGE,
        slurm::SUBMIT,
        folder.display()
    );
    if args.submit {
        let submit = folder.join(slurm::SUBMIT);
        let output = std::process::Command::new("bash")
            .arg(&submit)
            .output()
            .map_err(|err| format!("{}: {err}", submit.display()))?;
        if !output.status.success() {
            return Err(format!(
                "{} failed ({}): {}",
                submit.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        print!("{}", String::from_utf8_lossy(&output.stdout));
    } else {
        println!("submit with: bash {}", folder.join(slurm::SUBMIT).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes OUT/similarity.md for the instructor and says where.
fn similarity(
    course: &Path,
    submissions: &Path,
    exercises: &[ExerciseId],
    out: &Path,
) -> Result<(), String> {
    let found = grader::instructor::similarity::compare(course, submissions, exercises)
        .map_err(|err| format!("{}: {err}", submissions.display()))?;
    let path = out.join("similarity.md");
    grader::atomic_file::write(
        &path,
        grader::instructor::similarity::markdown(&found).as_bytes(),
    )
    .map_err(|err| format!("{}: {err}", path.display()))?;
    eprintln!(
        "grader: {} pairs of identical code, listed in {} (for you, not a grade)",
        found.pairs(),
        path.display()
    );
    Ok(())
}

/// A student's own run: their exercise folder as a class of one.
fn check(
    exercise: ExerciseId,
    path: Option<PathBuf>,
    running: &Running,
    safety: &Safety,
    seed: Option<u64>,
) -> Result<ExitCode, String> {
    let isolation = Isolation::choose(safety.no_sandbox)?;
    let emulate = device(running)?;
    let course = course(None)?;
    let folder = path.unwrap_or_else(|| course.join("exercises").join(exercise.name()));
    let work = course.join("target").join("grader-check");
    let class = work.join("submission").join("you");
    // The class of one: a copy of the student's exercise under their name.
    let _ = std::fs::remove_dir_all(work.join("submission"));
    copy_exercise(&folder, &class.join(exercise.name()))
        .map_err(|err| format!("{}: {err}", folder.display()))?;
    let choose = Choose {
        exercises: vec![exercise],
        seed,
        jobs: None,
        // Where the grader's own tests keep the class dependencies too
        // (cargo's CARGO_TARGET_TMPDIR), so they compile once there.
        target_dir: Some(course.join("target").join("tmp").join("grader-deps")),
        course: None,
        build_timeout: 300,
        students: vec![],
    };
    build(
        &course,
        &work.join("submission"),
        &choose,
        &work.join("bundle"),
        &isolation,
    )?;
    let results = run(
        &work.join("bundle"),
        running,
        &work.join("grading"),
        &[],
        isolation,
        &[],
        emulate,
    )?;
    let you = &results.students["you"];
    print!("{}", reports::feedback("you", you, results.seed));
    print!("{}", reports::emulated(&results));
    let (got, max) = you.points();
    Ok(if got == max {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Copies an exercise's src/ (the overlay takes nothing else). Links are
/// copied as links, so that check refuses them as grading would.
fn copy_exercise(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to.join("src"))?;
    for entry in std::fs::read_dir(from.join("src"))? {
        let entry = entry?;
        let copy = to.join("src").join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, copy)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), copy)?;
        }
    }
    Ok(())
}
