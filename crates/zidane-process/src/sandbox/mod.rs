//! The sandbox every command of a [`ProcessContext`](crate::ProcessContext) runs in: its
//! policy made concrete for this machine ([`SandboxPlan`]), and the mechanism of the OS
//! that enforces it — bubblewrap on Linux (`bwrap.rs`), a Seatbelt profile on macOS
//! (`seatbelt.rs`). Windows has none yet: its commands run unsandboxed, and the report
//! says so.
//!
//! A sandbox wraps the shell: the spawn paths run `PREFIX… SHELL [FLAGS] -c COMMAND`
//! rather than the shell itself, in the same process group, with the same descriptors.
//! So everything that holds of a task (its group kill, its owner marker, its terminal,
//! its stdin, its budgets) holds of a sandboxed one.

#[cfg(target_os = "linux")]
pub(crate) mod bwrap;
pub(crate) mod denial;
pub(crate) mod plan;
#[cfg(unix)]
pub(crate) mod read_gate;
#[cfg(any(target_os = "macos", all(test, unix)))]
pub(crate) mod seatbelt;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, RwLock};

use zidane_context::{SandboxPolicy, SandboxReport, SandboxScope, SandboxStatus};

use crate::sandbox::plan::SandboxPlan;

/// The OS's mechanism, ready to wrap commands.
#[derive(Debug, Clone)]
enum Mechanism {
    /// bubblewrap at this path.
    #[cfg(target_os = "linux")]
    Bubblewrap(PathBuf),
    /// `sandbox-exec` with a generated profile.
    #[cfg(target_os = "macos")]
    Seatbelt,
}

/// A context's sandbox: its policy, the plan for this machine, and the mechanism (or
/// why there is none).
#[derive(Debug)]
pub(crate) struct Sandbox {
    /// The policy and its plan: workspace roots can be added while the context runs
    /// (an MCP client's roots).
    current: RwLock<(SandboxPolicy, SandboxPlan)>,
    home: Option<PathBuf>,
    temp: Vec<PathBuf>,
    mechanism: Result<Mechanism, String>,
    /// Under an `off` policy, the mechanism a host's stricter policy (`Within`) needs,
    /// looked for on the first such command: a host's sandbox holds even where the
    /// user's own is off.
    for_host: OnceLock<Result<Mechanism, String>>,
}

impl Sandbox {
    /// The sandbox of `policy` on this machine. Checks that the OS can build it (on
    /// Linux by running bubblewrap once); where it cannot, every command runs
    /// unsandboxed and [`report`](Self::report) says why.
    pub(crate) fn new(policy: SandboxPolicy) -> Self {
        let home = home_dir();
        let temp = temp_dirs();
        let plan = plan_of(&policy, home.as_deref(), &temp);
        let mechanism = if policy.is_on() {
            mechanism(&policy)
        } else {
            Err(String::new())
        };
        Self {
            current: RwLock::new((policy, plan)),
            home,
            temp,
            mechanism,
            for_host: OnceLock::new(),
        }
    }

    /// No sandbox (`off`), without looking for a mechanism.
    pub(crate) fn off() -> Self {
        Self::new(SandboxPolicy::off())
    }

    fn current(&self) -> std::sync::RwLockReadGuard<'_, (SandboxPolicy, SandboxPlan)> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The policy now, workspace roots added since included.
    pub(crate) fn policy(&self) -> SandboxPolicy {
        self.current().0.clone()
    }

    fn policy_is_on(&self) -> bool {
        self.current().0.is_on()
    }

    /// What this sandbox enforces.
    pub(crate) fn report(&self) -> SandboxReport {
        let policy = self.current().0.clone();
        let status = match (&self.mechanism, policy.is_on()) {
            (_, false) => SandboxStatus::Off,
            (Ok(_), true) => SandboxStatus::Enforced,
            (Err(reason), true) => SandboxStatus::Unavailable(reason.clone()),
        };
        SandboxReport::new(policy, status)
    }

    /// The context's plan.
    pub(crate) fn plan(&self) -> SandboxPlan {
        self.current().1.clone()
    }

    /// Adds workspace roots (under `workspace-write`; other modes write none).
    pub(crate) fn add_workspace_roots(&self, roots: &[PathBuf]) {
        let mut current = self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.0.mode != zidane_context::SandboxMode::WorkspaceWrite {
            return;
        }
        let mut changed = false;
        for root in roots {
            if root.is_absolute() && !current.0.workspace.contains(root) {
                current.0.workspace.push(root.clone());
                changed = true;
            }
        }
        if changed {
            current.1 = plan_of(&current.0, self.home.as_deref(), &self.temp);
        }
    }

    /// The plan one command runs under, `None` for none: the context's, a stricter one
    /// (`Within`), or none (`Outside`, an `off` policy, no mechanism). `readable` are
    /// directories that stay readable inside the denied ones (the context's task logs).
    pub(crate) fn plan_for(
        &self,
        scope: &SandboxScope,
        readable: &[PathBuf],
    ) -> Option<SandboxPlan> {
        self.mechanism_for(scope)?;
        let plan = match scope {
            SandboxScope::Outside => return None,
            SandboxScope::Context => self.plan(),
            SandboxScope::Within(host) => {
                let narrowed = self.current().0.narrowed_by(host);
                // A host that writes nothing (Codex's read-only) gets no temp directory
                // either: zidane never runs wider than the host.
                let temp: &[PathBuf] = if host.mode == zidane_context::SandboxMode::ReadOnly {
                    &[]
                } else {
                    &self.temp
                };
                plan_of(&narrowed, self.home.as_deref(), temp)
            }
        };
        Some(plan.readable_inside(readable))
    }

    /// What goes before the shell's `argv` to run a command in `cwd` under `plan` (from
    /// [`plan_for`](Self::plan_for) with the same `scope`); `None`: the shell runs as it
    /// is.
    pub(crate) fn prefix(
        &self,
        scope: &SandboxScope,
        plan: Option<&SandboxPlan>,
        cwd: &Path,
    ) -> Option<Vec<OsString>> {
        let plan = plan?;
        match self.mechanism_for(scope) {
            #[cfg(target_os = "linux")]
            Some(Mechanism::Bubblewrap(bwrap)) => Some(bwrap::prefix(bwrap, plan, cwd)),
            #[cfg(target_os = "macos")]
            Some(Mechanism::Seatbelt) => Some(seatbelt::prefix(plan, cwd)),
            #[cfg(not(any(target_os = "linux", target_os = "macos")))]
            Some(_) => None,
            None => {
                let _ = (plan, cwd);
                None
            }
        }
    }

    /// The mechanism a command under `scope` runs in: the context's, or, under an
    /// `off` policy, the one a host's policy needs; `None` when there is none.
    fn mechanism_for(&self, scope: &SandboxScope) -> Option<&Mechanism> {
        if self.policy_is_on() {
            return self.mechanism.as_ref().ok();
        }
        match scope {
            SandboxScope::Within(host) if host.is_on() => {
                let found = self.for_host.get_or_init(|| {
                    let found = mechanism(host);
                    if let Err(reason) = &found {
                        tracing::warn!("a host's sandbox cannot be built, unsandboxed: {reason}");
                    }
                    found
                });
                found.as_ref().ok()
            }
            _ => None,
        }
    }
}

/// The OS's mechanism for `policy`, or why there is none.
#[cfg(target_os = "linux")]
fn mechanism(policy: &SandboxPolicy) -> Result<Mechanism, String> {
    let bwrap = bwrap::find()?;
    bwrap::probe(&bwrap, policy.network)?;
    Ok(Mechanism::Bubblewrap(bwrap))
}

/// The OS's mechanism for `policy`, or why there is none.
#[cfg(target_os = "macos")]
fn mechanism(_policy: &SandboxPolicy) -> Result<Mechanism, String> {
    if Path::new(seatbelt::SANDBOX_EXEC).is_file() {
        Ok(Mechanism::Seatbelt)
    } else {
        Err(format!("{} is missing", seatbelt::SANDBOX_EXEC))
    }
}

/// The OS's mechanism for `policy`, or why there is none.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn mechanism(_policy: &SandboxPolicy) -> Result<Mechanism, String> {
    Err(if cfg!(windows) {
        "zidane has no sandbox on Windows yet; commands have the user's rights".to_owned()
    } else {
        "zidane has no sandbox on this OS; commands have the user's rights".to_owned()
    })
}

/// The user's home directory (`HOME`; on Windows `USERPROFILE`).
fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
}

/// The temp directories a sandboxed command may write: `/tmp`, `/var/tmp` and `TMPDIR`
/// (on macOS also its real `/private/…` paths).
fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![std::env::temp_dir()];
    if cfg!(unix) {
        dirs.extend([PathBuf::from("/tmp"), PathBuf::from("/var/tmp")]);
    }
    let mut real: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    dirs.append(&mut real);
    plan::dedup(&mut dirs);
    dirs
}

/// The plan of `policy` here, with zidane's private runtime directory hidden too: a
/// per-user supervisor listens there, and a sandboxed command must not reach it to run
/// commands outside its sandbox. The directory is made (private) first where it is
/// missing, so it is hidden even when the supervisor starts after the command.
fn plan_of(policy: &SandboxPolicy, home: Option<&Path>, temp: &[PathBuf]) -> SandboxPlan {
    let mut plan = SandboxPlan::new(policy, home, temp);
    if let Some(dir) = crate::ownership::runtime_dir() {
        if let Err(error) = crate::ownership::ensure_runtime_dir(&dir) {
            tracing::debug!(dir = %dir.display(), %error, "the runtime directory is not private");
        }
        plan.denied.push(dir);
    }
    plan
}
