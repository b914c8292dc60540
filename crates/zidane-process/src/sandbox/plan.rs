//! A [`SandboxPolicy`] made concrete for this machine: the [`SandboxPlan`] lists every
//! path a sandboxed command may write, the paths inside those it may not, and the paths
//! it may not read. Every OS's mechanism (bubblewrap, Seatbelt) is built from a plan, so
//! they all enforce the same sets.

use std::fmt;
use std::path::{Path, PathBuf};

use zidane_context::{NetworkAccess, SandboxMode, SandboxPolicy};

/// Credential stores under the home directory: no sandboxed command reads them.
pub const DENIED_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".config/hub",
    ".docker/config.json",
    ".netrc",
    ".kube",
    ".config/gcloud",
    ".azure",
    ".oci",
    ".config/doctl",
    ".git-credentials",
    ".config/git/credentials",
    ".password-store",
    ".local/share/keyrings",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/op",
];

/// Build caches under the home directory: writable under `workspace-write`, so that
/// `cargo build`, `npm install`, `pip install` and `go build` keep working.
pub const CACHES_IN_HOME: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".npm",
    ".cache",
    "go/pkg/mod",
    ".m2/repository",
    ".gradle/caches",
    ".local/share/pnpm",
    ".yarn/berry/cache",
];

/// Shell startup files under the home directory: never writable, even where the home
/// directory itself is.
pub const STARTUP_FILES_IN_HOME: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
];

/// Paths inside a workspace root that stay read-only: git's hooks and config (a hook
/// runs on the user's next commit) and the hosts' own configuration.
pub const READ_ONLY_IN_WORKSPACE: &[&str] = &[
    ".git/hooks",
    ".git/config",
    ".codex",
    ".claude",
    ".agents",
    ".gemini",
    ".qwen",
    ".opencode",
    ".vscode",
    ".mcp.json",
];

/// The held paths of [`READ_ONLY_IN_WORKSPACE`] that are files. The others are
/// directories, made empty where they are missing so that they can be held read-only:
/// otherwise a command could make one (a hook, a host's settings) that runs a command
/// of its choosing outside the sandbox later. `.git/hooks` is made only inside a
/// repository. A missing file is not made: an empty one would break what reads it.
pub const HELD_FILES_IN_WORKSPACE: &[&str] = &[".git/config", ".mcp.json"];

/// What a sandboxed command may touch, path by path.
///
/// ```
/// use std::path::Path;
/// use zidane_context::SandboxPolicy;
/// use zidane_process::SandboxPlan;
///
/// let plan = SandboxPlan::new(
///     &SandboxPolicy::workspace_write("/work"),
///     Some(Path::new("/home/ada")),
///     &[Path::new("/tmp").to_path_buf()],
/// );
/// assert!(plan.writable.contains(&Path::new("/work").to_path_buf()));
/// assert!(plan.denied.contains(&Path::new("/home/ada/.ssh").to_path_buf()));
/// assert!(plan.read_only.contains(&Path::new("/work/.git/hooks").to_path_buf()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxPlan {
    /// The mode it was made for.
    pub mode: SandboxMode,
    /// The network.
    pub network: NetworkAccess,
    /// Writable directories: the workspace roots, the extra writable directories, the
    /// temp directories and the build caches (those of `workspace-write`).
    pub writable: Vec<PathBuf>,
    /// Paths inside the writable ones that stay read-only.
    pub read_only: Vec<PathBuf>,
    /// Paths no command reads.
    pub denied: Vec<PathBuf>,
    /// Held directories made (empty) before a command runs where they are missing.
    pub made: Vec<PathBuf>,
    /// Directories inside the denied paths that stay readable: the context's own task
    /// logs (zidane's user dir is denied, a session's logs are not).
    pub readable: Vec<PathBuf>,
}

impl SandboxPlan {
    /// The plan of `policy` on a machine whose home directory is `home` and whose temp
    /// directories are `temp`.
    pub fn new(policy: &SandboxPolicy, home: Option<&Path>, temp: &[PathBuf]) -> Self {
        let mut writable: Vec<PathBuf> = temp.to_vec();
        let mut read_only = Vec::new();
        let mut made = Vec::new();
        if policy.mode == SandboxMode::WorkspaceWrite {
            for root in &policy.workspace {
                read_only.extend(READ_ONLY_IN_WORKSPACE.iter().map(|rel| root.join(rel)));
                made.extend(
                    READ_ONLY_IN_WORKSPACE
                        .iter()
                        .filter(|rel| !HELD_FILES_IN_WORKSPACE.contains(rel))
                        .filter(|rel| !rel.starts_with(".git/") || root.join(".git").is_dir())
                        .map(|rel| root.join(rel)),
                );
            }
            writable.extend(policy.workspace.iter().cloned());
            writable.extend(policy.writable.iter().cloned());
            if let Some(home) = home {
                writable.extend(CACHES_IN_HOME.iter().map(|rel| home.join(rel)));
            }
        }
        let mut denied = Vec::new();
        if let Some(home) = home {
            read_only.extend(STARTUP_FILES_IN_HOME.iter().map(|rel| home.join(rel)));
            denied.extend(DENIED_IN_HOME.iter().map(|rel| home.join(rel)));
        }
        denied.extend(policy.deny_read.iter().cloned());
        read_only.extend(policy.read_only.iter().cloned());
        // Only what lies inside a writable directory needs holding read-only.
        read_only.retain(|path| writable.iter().any(|root| path.starts_with(root)));
        dedup(&mut writable);
        dedup(&mut read_only);
        dedup(&mut denied);
        Self {
            mode: policy.mode,
            network: policy.network,
            writable,
            read_only,
            denied,
            made,
            readable: Vec::new(),
        }
    }

    /// The same plan with `dirs` readable inside the denied paths.
    #[must_use]
    pub fn readable_inside(mut self, dirs: &[PathBuf]) -> Self {
        for dir in dirs {
            if self.denied.iter().any(|denied| dir.starts_with(denied))
                && !self.readable.contains(dir)
            {
                self.readable.push(dir.clone());
            }
        }
        self
    }

    /// Whether a command may write `path` (an absolute path).
    pub fn may_write(&self, path: &Path) -> bool {
        self.writable.iter().any(|root| path.starts_with(root))
            && !self.read_only.iter().any(|held| path.starts_with(held))
            && !self.denied.iter().any(|denied| path.starts_with(denied))
    }

    /// Whether a command may read `path` (an absolute path).
    pub fn may_read(&self, path: &Path) -> bool {
        !self.denied.iter().any(|denied| path.starts_with(denied))
            || self.readable.iter().any(|dir| path.starts_with(dir))
    }

    /// Why a command may not write `path`, in one line for the model; `None` when it
    /// may.
    pub fn write_denial(&self, path: &Path) -> Option<String> {
        if self.denied.iter().any(|denied| path.starts_with(denied)) {
            return Some(format!("sandbox: {} is denied to commands", path.display()));
        }
        if self.read_only.iter().any(|held| path.starts_with(held)) {
            return Some(format!(
                "sandbox: {} is kept read-only inside the writable roots",
                path.display()
            ));
        }
        if !self.writable.iter().any(|root| path.starts_with(root)) {
            return Some(format!(
                "sandbox: {} is outside the writable roots ({})",
                path.display(),
                self.mode
            ));
        }
        None
    }
}

impl fmt::Display for SandboxPlan {
    /// The plan as `zidane mcp --print-sandbox` shows it: one setting or path per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "sandbox: {}", self.mode)?;
        writeln!(f, "network: {}", self.network)?;
        for (title, paths) in [
            ("writable", &self.writable),
            ("read-only inside the writable", &self.read_only),
            ("denied", &self.denied),
        ] {
            writeln!(f, "{title}:")?;
            for path in paths {
                writeln!(f, "  {}", path.display())?;
            }
        }
        Ok(())
    }
}

/// Keeps the first of each path, in order.
pub(crate) fn dedup(paths: &mut Vec<PathBuf>) {
    let mut seen = Vec::with_capacity(paths.len());
    paths.retain(|path| {
        if seen.contains(path) {
            false
        } else {
            seen.push(path.clone());
            true
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(policy: &SandboxPolicy) -> SandboxPlan {
        SandboxPlan::new(policy, Some(Path::new("/home/u")), &[PathBuf::from("/tmp")])
    }

    #[test]
    fn workspace_write_writes_the_workspace_temp_and_caches_only() {
        let plan = plan(&SandboxPolicy::workspace_write("/work"));
        assert!(plan.may_write(Path::new("/work/src/main.rs")));
        assert!(plan.may_write(Path::new("/tmp/x")));
        assert!(plan.may_write(Path::new("/home/u/.cargo/registry/cache/a.crate")));
        assert!(!plan.may_write(Path::new("/home/u/.bashrc")));
        assert!(!plan.may_write(Path::new("/work/.git/hooks/pre-commit")));
        assert!(plan.may_write(Path::new("/work/.git/objects/ab")));
        assert!(!plan.may_read(Path::new("/home/u/.ssh/id_ed25519")));
        assert_eq!(
            plan.write_denial(Path::new("/home/u/.bashrc")).unwrap(),
            "sandbox: /home/u/.bashrc is outside the writable roots (workspace-write)"
        );
    }

    #[test]
    fn startup_files_stay_read_only_in_a_writable_home() {
        let plan = plan(&SandboxPolicy::workspace_write("/home/u"));
        assert!(plan.may_write(Path::new("/home/u/notes.txt")));
        assert!(!plan.may_write(Path::new("/home/u/.bashrc")));
        assert!(!plan.may_write(Path::new("/home/u/.ssh/authorized_keys")));
        assert!(plan.read_only.contains(&PathBuf::from("/home/u/.profile")));
    }

    #[test]
    fn held_directories_are_made_but_held_files_are_not() {
        let work = tempfile::tempdir().unwrap();
        let plain = plan(&SandboxPolicy::workspace_write(work.path()));
        assert!(plain.made.contains(&work.path().join(".claude")));
        assert!(
            !plain.made.contains(&work.path().join(".git/hooks")),
            "not a repository"
        );
        assert!(!plain.made.contains(&work.path().join(".mcp.json")));
        std::fs::create_dir(work.path().join(".git")).unwrap();
        let repository = plan(&SandboxPolicy::workspace_write(work.path()));
        assert!(repository.made.contains(&work.path().join(".git/hooks")));
        assert!(!repository.made.contains(&work.path().join(".git/config")));
    }

    #[test]
    fn read_only_writes_temp_only() {
        let plan = plan(&SandboxPolicy::read_only().workspace_root("/work"));
        assert!(!plan.may_write(Path::new("/work/a")));
        assert!(!plan.may_write(Path::new("/home/u/.cache/x")));
        assert!(plan.may_write(Path::new("/tmp/a")));
    }
}
