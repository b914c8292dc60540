//! Where things are on this machine, as the hosts find them: the home directory (`HOME`),
//! the config directories (`XDG_CONFIG_HOME`), the working directory (a project's files),
//! the `PATH` a bare command is looked up on, and this binary.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The places `zidane doctor` looks in, read once from the environment.
#[derive(Debug, Clone, Default)]
pub(crate) struct Here {
    /// The home directory (`HOME` on Unix).
    pub(crate) home: Option<PathBuf>,
    /// The platform's config directory (`$XDG_CONFIG_HOME`, else `~/.config`, on Linux;
    /// `~/Library/Application Support` on macOS; `%APPDATA%` on Windows).
    pub(crate) config_dir: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, else `~/.config`, on every platform: where tools that follow
    /// the XDG layout everywhere (opencode) keep their config.
    pub(crate) xdg_config: Option<PathBuf>,
    /// The working directory, where a project's own config files are.
    pub(crate) cwd: Option<PathBuf>,
    /// `PATH`.
    pub(crate) path: OsString,
    /// This binary.
    pub(crate) exe: Option<PathBuf>,
}

impl Here {
    /// The places of this process's environment.
    pub(crate) fn from_env() -> Self {
        let home = dirs::home_dir();
        let xdg_config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| home.as_ref().map(|home| home.join(".config")));
        Self {
            config_dir: dirs::config_dir(),
            xdg_config,
            cwd: std::env::current_dir().ok(),
            path: std::env::var_os("PATH").unwrap_or_default(),
            exe: std::env::current_exe().ok(),
            home,
        }
    }

    /// `~/rest`, where there is a home.
    pub(crate) fn in_home(&self, rest: &str) -> Option<PathBuf> {
        self.home.as_ref().map(|home| home.join(rest))
    }

    /// The program `name` (no `/`) as a host without a shell finds it: the first
    /// executable file of that name in a `PATH` directory (with `.exe` on Windows).
    pub(crate) fn which(&self, name: &str) -> Option<PathBuf> {
        std::env::split_paths(&self.path)
            .filter(|dir| dir.is_absolute())
            .flat_map(|dir| {
                let plain = dir.join(name);
                let exe = cfg!(windows).then(|| dir.join(format!("{name}.exe")));
                std::iter::once(plain).chain(exe)
            })
            .find(|candidate| is_executable(candidate))
    }

    /// The command a new host entry should run: `zidane` when the `zidane` on `PATH` is
    /// this one, else this binary's full path (hosts start servers without a shell).
    pub(crate) fn zidane_command(&self) -> String {
        match (&self.exe, self.which("zidane")) {
            (Some(exe), Some(found)) if !same_file(exe, &found) => exe.display().to_string(),
            (Some(exe), None) => exe.display().to_string(),
            _ => "zidane".to_owned(),
        }
    }

    /// `path` as a person reads it: `~/…` under the home directory.
    pub(crate) fn show(&self, path: &Path) -> String {
        match self
            .home
            .as_ref()
            .and_then(|home| path.strip_prefix(home).ok())
        {
            Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
            Some(rest) => format!("~/{}", rest.display()),
            None => path.display().to_string(),
        }
    }
}

/// Whether `path` is a file this user may run.
pub(crate) fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && runnable(&meta))
}

#[cfg(unix)]
fn runnable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o111 != 0
}

/// Windows has no execute bit: a file is runnable.
#[cfg(not(unix))]
fn runnable(_meta: &std::fs::Metadata) -> bool {
    true
}

/// Whether two paths name the same file, links followed.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_home_read_with_a_tilde() {
        let here = Here {
            home: Some(PathBuf::from("/home/ada")),
            ..Here::default()
        };
        assert_eq!(
            here.show(Path::new("/home/ada/.codex/config.toml")),
            "~/.codex/config.toml"
        );
        assert_eq!(here.show(Path::new("/home/ada")), "~");
        assert_eq!(here.show(Path::new("/home/adam/x")), "/home/adam/x");
    }

    #[cfg(unix)]
    #[test]
    fn a_bare_command_is_found_on_path_only_when_it_can_run() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let here = Here {
            path: std::env::join_paths([Path::new("relative"), dir.path()]).unwrap(),
            ..Here::default()
        };
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(here.which("tool"), None);
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(here.which("tool"), Some(tool));
        assert_eq!(here.which("missing"), None);
    }
}
