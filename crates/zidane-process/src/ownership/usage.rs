//! What a task's process tree uses now — CPU time and resident memory — from one
//! reading of the process table, for `zidane ps`.

use std::time::Duration;

/// The CPU time and resident memory of a process and every descendant of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeUsage {
    /// CPU time used so far (user and system, of the live processes).
    pub cpu: Duration,
    /// Resident memory now, in bytes.
    pub rss_bytes: u64,
    /// How many processes the tree holds.
    pub processes: usize,
}

/// One reading of the process table: every process's parent, CPU time and memory.
#[derive(Debug, Clone, Default)]
pub struct ProcessTable {
    /// `(pid, ppid, cpu, rss_bytes)` of every process read.
    rows: Vec<(u32, u32, Duration, u64)>,
}

impl ProcessTable {
    /// Reads the process table; `None` where it cannot be read here.
    pub fn read() -> Option<Self> {
        imp::read().map(|rows| Self { rows })
    }

    /// The usage of `root` and its descendants; `None` when `root` is not in the table.
    pub fn tree_usage(&self, root: u32) -> Option<TreeUsage> {
        if !self.rows.iter().any(|row| row.0 == root) {
            return None;
        }
        let mut usage = TreeUsage::default();
        let mut frontier = vec![root];
        while let Some(pid) = frontier.pop() {
            for &(child, parent, cpu, rss) in &self.rows {
                if child == pid {
                    usage.cpu += cpu;
                    usage.rss_bytes += rss;
                    usage.processes += 1;
                }
                if parent == pid && child != pid {
                    frontier.push(child);
                }
            }
        }
        Some(usage)
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::time::Duration;

    use crate::containment::procfs;

    /// Every process's `(pid, ppid, cpu, rss)` from `/proc/<pid>/stat`.
    pub(super) fn read() -> Option<Vec<(u32, u32, Duration, u64)>> {
        let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .and_then(|ticks| u64::try_from(ticks).ok())
            .filter(|ticks| *ticks > 0)?;
        let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .and_then(|page| u64::try_from(page).ok())?;
        Some(
            procfs::processes_with_stat()?
                .filter_map(|(pid, stat)| {
                    let (ppid, cpu_ticks, rss_pages) = parse(&stat)?;
                    let cpu = Duration::from_micros(cpu_ticks.saturating_mul(1_000_000) / ticks);
                    Some((pid, ppid, cpu, rss_pages.saturating_mul(page)))
                })
                .collect(),
        )
    }

    /// The parent, user + system ticks and resident pages of one `stat` text; fields
    /// are counted after the last `)`, which ends the command name.
    pub(super) fn parse(stat: &str) -> Option<(u32, u64, u64)> {
        let fields: Vec<&str> = stat[stat.rfind(')')? + 1..]
            .split_ascii_whitespace()
            .collect();
        // Field n of stat(5) is at n - 3 here: ppid 4, utime 14, stime 15, rss 24.
        let ppid = fields.get(1)?.parse().ok()?;
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        let rss: i64 = fields.get(21)?.parse().ok()?;
        Some((ppid, utime + stime, u64::try_from(rss).unwrap_or(0)))
    }
}

/// macOS, the other Unixes and Windows: no reading yet; `zidane ps` shows `-`.
#[cfg(not(target_os = "linux"))]
mod imp {
    use std::time::Duration;

    pub(super) fn read() -> Option<Vec<(u32, u32, Duration, u64)>> {
        None
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_parent_ticks_and_pages() {
        let stat = "42 (a (b) c) S 7 42 42 0 -1 4194560 100 0 0 0 30 12 0 0 20 0 1 0 999 8192 256 18446744073709551615";
        assert_eq!(imp::parse(stat), Some((7, 42, 256)));
    }

    #[test]
    fn a_tree_adds_up_its_descendants() {
        use std::os::unix::process::CommandExt as _;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let usage = (0..200)
            .find_map(|_| {
                let usage = ProcessTable::read()?.tree_usage(child.id())?;
                if usage.processes == 3 {
                    Some(usage)
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    None
                }
            })
            .unwrap();
        assert!(usage.rss_bytes > 0);
        let group = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
        nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL).unwrap();
        child.wait().unwrap();
    }
}
