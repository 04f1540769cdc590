//! `gsq completions` and `gsq manpage`: the shell completion scripts and the manual pages,
//! generated from the same command-line declaration as `--help`, so they never lag it.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManpageArgs};
use crate::exit::{Failure, Outcome};

/// Prints the completion script for the shell.
pub fn completions(args: &CompletionsArgs) -> Outcome {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "gsq", &mut script);
    write_stdout(&script)
}

/// Prints gsq.1, or writes it and a page per command into `--dir`.
pub fn manpage(args: &ManpageArgs) -> Outcome {
    match &args.dir {
        Some(dir) => clap_mangen::generate_to(Cli::command(), dir).map_err(|e| {
            Failure::usage(format!(
                "cannot write the manual pages into {}: {e}",
                dir.display()
            ))
            .hint("give a directory that exists and is writable")
        }),
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut page)
                .map_err(|e| Failure::internal(format!("cannot render the manual page: {e}")))?;
            write_stdout(&page)
        }
    }
}

fn write_stdout(bytes: &[u8]) -> Outcome {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::internal(format!("cannot write the output: {e}")))
}
