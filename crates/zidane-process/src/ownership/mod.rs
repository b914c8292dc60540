//! What a process outside any context needs to own tasks across hosts: a stamp that
//! tells a process from a later one with its pid, and the user's private runtime
//! directory, where a per-user supervisor listens and which every sandbox hides.

mod runtime_dir;
mod stamp;
mod usage;

pub use runtime_dir::{RUNTIME_DIR_NAME, ensure_runtime_dir, runtime_dir};
pub use stamp::ProcessStamp;
pub use usage::{ProcessTable, TreeUsage};
