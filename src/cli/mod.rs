//! Argument parsing only: each subcommand hands its parsed arguments to one function below.
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "abprof", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("ABPROF_GIT_COMMIT"), ")"),
          about = "Is llama-server variant B faster than A, by how much, and which kernels are responsible?")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {}

/// Runs the CLI and returns the process exit code. Errors are printed as one line naming the
/// cause (and, where the error carries one, the fix).
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("abprof: error: {}", crate::cli::one_line(&e));
            1
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {}
}

/// Joins an error chain into one line: "outer: inner: root".
pub fn one_line(e: &anyhow::Error) -> String {
    e.chain().map(|c| c.to_string()).collect::<Vec<_>>().join(": ")
}
