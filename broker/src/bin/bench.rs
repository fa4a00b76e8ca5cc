//! `cuda-course-broker-bench`: the per-call cost of whatever
//! `libcuda.so.1` the loader finds (`broker::bench`). Run it on the driver
//! directly, then through the broker (`cuda-course-broker -- ...` with the
//! client first on `LD_LIBRARY_PATH`), and subtract.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kernels::exit_code::ToolExit;

/// Times cheap driver calls, copies and empty launches.
#[derive(Parser)]
#[command(name = "cuda-course-broker-bench")]
struct Cli {
    /// The library to load (a bare name is searched for as dlopen does).
    #[arg(long, default_value = "libcuda.so.1")]
    driver: PathBuf,
    /// Units of work per run (the 16 MiB copies make 1/200 as many).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(2..))]
    calls: u32,
    /// Timed runs after the warm-up; the median is reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    runs: u32,
    /// One JSON object, measurement -> median microseconds, instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match broker::bench::measure(&cli.driver, cli.calls as usize, cli.runs as usize) {
        Ok(measured) if cli.json => {
            println!("{}", broker::bench::json(&measured));
            ExitCode::from(ToolExit::Done)
        }
        Ok(measured) => {
            println!("{:<28} {:>12} {:>12}", "measure", "median µs", "min µs");
            for m in &measured {
                println!("{:<28} {:>12.3} {:>12.3}", m.name, m.median_us, m.min_us);
            }
            ExitCode::from(ToolExit::Done)
        }
        Err(message) => {
            eprintln!("cuda-course-broker-bench: {message}");
            ExitCode::from(ToolExit::Stopped)
        }
    }
}
