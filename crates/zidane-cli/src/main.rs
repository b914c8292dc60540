//! `zidane`: the command-line front of zidane. `zidane mcp` serves background shell
//! tasks to any MCP host (see `docs/MCP.md`).
//!
//! This file only parses the command line and dispatches; each subcommand lives in its
//! own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod mcp;

/// Background shell tasks for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "zidane", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve background shell tasks over MCP (stdio by default).
    Mcp(mcp::McpArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Mcp(args) => mcp::run(args),
    };
    // Exit now rather than wait for the runtime's blocking stdin reader, which only
    // returns on the next line of input.
    std::process::exit(match code {
        ExitCode::SUCCESS => 0,
        _ => 1,
    })
}
