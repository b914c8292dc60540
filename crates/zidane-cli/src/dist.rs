//! `zidane completions <shell>` and `zidane man`: shell completions and man pages made
//! from the same clap definitions the binary parses with, so what a release ships
//! cannot drift from the flags the binary takes. Hidden: they serve packagers (the
//! release archives, the npm package), not a session.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use clap_complete::Shell;

use crate::error::CliError;

/// The shells completions are made for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CompletionShell {
    /// Bash (`bash-completion`).
    Bash,
    /// Zsh (`_zidane` on `$fpath`).
    Zsh,
    /// Fish (`~/.config/fish/completions/zidane.fish`).
    Fish,
    /// PowerShell (dot-sourced from the profile).
    Powershell,
    /// Elvish.
    Elvish,
}

impl From<CompletionShell> for Shell {
    fn from(shell: CompletionShell) -> Self {
        match shell {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
            CompletionShell::Powershell => Shell::PowerShell,
            CompletionShell::Elvish => Shell::Elvish,
        }
    }
}

/// Flags of `zidane completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell whose completion script is printed on stdout.
    #[arg(value_enum)]
    shell: CompletionShell,
}

/// Flags of `zidane man`.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Write `zidane.1` and one page per subcommand (`zidane-mcp.1`, …) into DIR instead
    /// of printing `zidane.1` on stdout.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<std::path::PathBuf>,
}

/// Prints the completion script for one shell.
pub(crate) fn completions(mut command: clap::Command, args: &CompletionsArgs) -> ExitCode {
    let name = command.get_name().to_owned();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(Shell::from(args.shell), &mut command, name, &mut out);
    ExitCode::SUCCESS
}

/// Prints the top man page, or writes every page into a directory.
pub(crate) fn man(command: clap::Command, args: &ManArgs) -> Result<ExitCode, CliError> {
    match &args.out_dir {
        Some(dir) => write_pages(command, dir)?,
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            std::io::stdout().lock().write_all(&page)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every page of the command tree, hidden subcommands (these two) left out.
fn write_pages(command: clap::Command, dir: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(command, dir)?;
    Ok(())
}
