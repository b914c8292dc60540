//! Every behaviour, one file each.

mod bad_input;
mod budgets;
mod common;
mod gate;
mod process;
mod read_file;
mod readiness;
mod registry;
mod schemas;
mod shell;
mod shell_kill;
mod wait_task;
