//! Probes of `/proc` (Linux), read straight from the kernel, independently of what
//! the crates under test scan.

/// Every pid listed in `/proc`.
fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .unwrap_or_else(|error| panic!("cannot read /proc: {error}"))
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
}

/// The fields of `/proc/<pid>/stat` after `(comm)`: state, ppid, pgrp, …
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The comm may hold spaces and parentheses: the fields follow the last `)`.
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// Whether a process is alive (a zombie counts as dead).
pub fn alive(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|fields| fields.first().is_some_and(|state| state != "Z"))
}

/// The live processes of a process group (each task leads its own).
///
/// Reads `/proc` and skips zombies: a child killed with its group whose parent died
/// first stays a zombie until init reaps it — dead, yet still a member for
/// `kill(-pgid, 0)`.
pub fn live_processes_in_group(pgid: u32) -> Vec<u32> {
    let pgrp = pgid.to_string();
    pids()
        .filter(|&pid| {
            stat_fields(pid)
                .is_some_and(|fields| fields.len() > 2 && fields[0] != "Z" && fields[2] == pgrp)
        })
        .collect()
}

/// Whether the environment of `pid` holds an entry `matches` accepts.
fn environ_has(pid: u32, matches: impl Fn(&[u8]) -> bool) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&byte| byte == 0).any(&matches))
}

/// The processes whose environment holds `var=value` exactly: what a test marked
/// with a token of its own. A zombie's environment reads empty, so only live ones.
pub fn processes_with_env(var: &str, value: &str) -> Vec<u32> {
    let entry = format!("{var}={value}");
    pids()
        .filter(|&pid| environ_has(pid, |e| e == entry.as_bytes()))
        .collect()
}

/// The live processes (zombies excluded: dead, whatever their environment said)
/// whose `var` starts with `value_prefix`: those whose owner marker names a host, say.
pub fn live_processes_with_env_prefix(var: &str, value_prefix: &str) -> Vec<u32> {
    let prefix = format!("{var}={value_prefix}");
    pids()
        .filter(|&pid| environ_has(pid, |e| e.starts_with(prefix.as_bytes())) && alive(pid))
        .collect()
}

/// Sends SIGKILL to `pid`, ignoring a process already gone (cleanup of processes a
/// test let escape on purpose).
pub fn kill_pid(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else {
        return;
    };
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}
