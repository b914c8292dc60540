//! How a task log is opened, the same on both process paths: read by the portable
//! path's open (`task/log_file.rs`) and by the fast path's spawn child (`sys/`).

/// Mode of a task log: only the owner may read it (it holds whatever the task printed).
#[cfg(unix)]
pub(crate) const LOG_MODE: u32 = 0o600;

/// How a task log is opened, by `task::log_file::open_new` and by `vfork_spawn`'s
/// child alike: new (`O_EXCL`: never over an existing file), close-on-exec, and
/// readable as well as writable, so that `finish` can look at the last kept byte (splice never shows us
/// the bytes it moves).
#[cfg(target_os = "linux")]
pub(crate) const LOG_OPEN_FLAGS: libc::c_int =
    libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
