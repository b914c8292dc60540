//! A task's budgets: past its wall time or its CPU time, the task is killed (the usual
//! `SIGTERM`, then `SIGKILL` after the grace) with a [`KillReason`] the model reads.
//!
//! What the kernel enforces, and what it does not: `RLIMIT_CPU` limits each *process*
//! (`SIGXCPU`, then `SIGKILL`), never a process group, and a task is a group — a build
//! spreads its CPU over many short-lived compilers, each far under any per-process
//! limit. So the group's CPU time is measured here instead: the `utime + stime` of every
//! live member (`/proc/<pid>/stat`), plus the `cutime + cstime` each member has
//! collected from children it reaped. A child reaped by a process outside the group
//! (one that left with `setsid`, or was re-parented to init) is not counted. The sample
//! is taken every [`CPU_SAMPLE`], so a task may overrun its budget by up to that much
//! times its parallelism. Wall time needs no measuring: a deadline from the start.

use std::time::Duration;

use tokio::time::Instant;
use zidane_context::KillReason;

/// How often the CPU time of a task with a CPU budget is sampled.
pub(crate) const CPU_SAMPLE: Duration = Duration::from_millis(250);

/// The budgets of one task, and when each must next be looked at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budgets {
    wall: Option<(Instant, Duration)>,
    cpu: Option<Duration>,
    next_sample: Option<Instant>,
}

impl Budgets {
    /// Budgets counted from `started`; `None` for either means none of that kind.
    pub(crate) fn new(started: Instant, wall: Option<Duration>, cpu: Option<Duration>) -> Self {
        Self {
            wall: wall.map(|budget| (started + budget, budget)),
            cpu,
            next_sample: cpu.map(|_| started + CPU_SAMPLE),
        }
    }

    /// The next moment a budget must be checked.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match (self.wall.map(|(at, _)| at), self.next_sample) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// At `now`, whether a budget ran out (and which); schedules the next CPU sample.
    /// `cpu_used` is asked only when a sample is due.
    pub(crate) fn check(
        &mut self,
        now: Instant,
        cpu_used: impl FnOnce() -> Option<Duration>,
    ) -> Option<KillReason> {
        if let Some((at, budget)) = self.wall
            && now >= at
        {
            self.disarm();
            return Some(KillReason::WallTime { budget });
        }
        if let (Some(budget), Some(at)) = (self.cpu, self.next_sample)
            && now >= at
        {
            if cpu_used().is_some_and(|used| used > budget) {
                self.disarm();
                return Some(KillReason::CpuTime { budget });
            }
            self.next_sample = Some(now + CPU_SAMPLE);
        }
        None
    }

    /// No more checks: the task is being killed.
    pub(crate) fn disarm(&mut self) {
        self.wall = None;
        self.next_sample = None;
    }
}

/// The CPU time the processes of group `pgid` have used, from the process table
/// (`libproc` on macOS); `None` when it cannot be read.
#[cfg(target_os = "macos")]
pub(crate) fn group_cpu_time(pgid: u32) -> Option<Duration> {
    crate::containment::procfs::group_cpu_time(pgid)
}

/// The CPU time the processes of group `pgid` have used, read from `/proc`; `None`
/// when `/proc` cannot be read.
#[cfg(all(unix, not(target_os = "macos")))]
pub(crate) fn group_cpu_time(pgid: u32) -> Option<Duration> {
    let ticks_per_second = clock_ticks()?;
    let mut ticks = 0_u64;
    for (_, stat) in crate::containment::procfs::processes_with_stat()? {
        if let Some((group, used)) = parse_cpu(&stat)
            && group == pgid
        {
            ticks = ticks.saturating_add(used);
        }
    }
    Some(Duration::from_secs_f64(
        ticks as f64 / ticks_per_second as f64,
    ))
}

/// `(process group, utime + stime + cutime + cstime)` from `/proc/<pid>/stat`, in clock
/// ticks. Fields are counted from the last `)`, since the name may hold spaces.
#[cfg_attr(any(target_os = "macos", windows), allow(dead_code))] // no `/proc` to parse there
pub(crate) fn parse_cpu(stat: &str) -> Option<(u32, u64)> {
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_ascii_whitespace()
        .collect();
    // After the name: state(3) ppid(4) pgrp(5) … utime(14) stime(15) cutime(16) cstime(17).
    let field = |n: usize| fields.get(n - 3).copied();
    let pgrp = field(5)?.parse().ok()?;
    let mut used = 0_u64;
    for n in 14..=17 {
        // cutime and cstime are signed in the kernel's format; they are never negative.
        used = used.saturating_add(field(n)?.parse::<i64>().ok()?.max(0).unsigned_abs());
    }
    Some((pgrp, used))
}

#[cfg(all(unix, not(target_os = "macos")))]
fn clock_ticks() -> Option<u64> {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|t| *t > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_fields_are_counted_from_the_last_parenthesis() {
        let stat = "42 (a) b (c)) S 1 40 40 0 -1 4194304 100 0 0 0 7 3 2 1 20 0 1 0 5 0 0";
        assert_eq!(parse_cpu(stat), Some((40, 13)));
        assert_eq!(parse_cpu("garbage"), None);
    }

    #[test]
    fn wall_time_runs_out_at_its_deadline_and_only_once() {
        let start = Instant::now();
        let mut budgets = Budgets::new(start, Some(Duration::from_secs(10)), None);
        assert_eq!(budgets.deadline(), Some(start + Duration::from_secs(10)));
        assert_eq!(budgets.check(start + Duration::from_secs(9), || None), None);
        assert_eq!(
            budgets.check(start + Duration::from_secs(10), || None),
            Some(KillReason::WallTime {
                budget: Duration::from_secs(10)
            })
        );
        assert_eq!(budgets.deadline(), None);
        assert_eq!(
            budgets.check(start + Duration::from_secs(11), || None),
            None
        );
    }

    #[test]
    fn cpu_time_is_sampled_and_runs_out_when_over() {
        let start = Instant::now();
        let budget = Duration::from_secs(2);
        let mut budgets = Budgets::new(start, None, Some(budget));
        assert_eq!(budgets.deadline(), Some(start + CPU_SAMPLE));
        // Not due yet: not even sampled.
        assert_eq!(budgets.check(start, || panic!("sampled early")), None);
        let due = start + CPU_SAMPLE;
        assert_eq!(budgets.check(due, || Some(Duration::from_secs(1))), None);
        assert_eq!(budgets.deadline(), Some(due + CPU_SAMPLE));
        assert_eq!(
            budgets.check(due + CPU_SAMPLE, || Some(Duration::from_secs(3))),
            Some(KillReason::CpuTime { budget })
        );
        assert_eq!(budgets.deadline(), None);
    }
}
