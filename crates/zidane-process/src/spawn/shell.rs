//! Which shell runs a [`ProcessContext`](crate::ProcessContext)'s commands, and with
//! which arguments.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where bash is looked for by [`Shell::detect`].
pub const BASH_PATH: &str = "/bin/bash";

/// The POSIX shell, used where there is no bash.
pub const SH_PATH: &str = "/bin/sh";

/// The variable whose file a non-interactive bash sources before the command.
const BASH_ENV: &str = "BASH_ENV";

/// The shell a command runs under: `SHELL [FLAGS] -c COMMAND`.
///
/// Models write bash (`[[ … ]]`, `{1..3}`, arrays), so the default
/// ([`detect`](Self::detect)) is `/bin/bash` where it exists and `/bin/sh` elsewhere.
/// Bash runs non-login and without startup files, so a user's rc files never change
/// what a command does: `bash --norc --noprofile -c COMMAND`, with `BASH_ENV` emptied
/// for it when it is set (a non-interactive bash would source that file first). Any
/// other shell runs as `SHELL -c COMMAND`.
///
/// ```
/// use zidane_process::Shell;
///
/// let sh = Shell::new("/bin/sh");
/// assert_eq!(sh.name(), "sh");
/// assert_eq!(sh.args(), ["-c"]);
/// assert_eq!(Shell::new("/usr/local/bin/bash").args(), ["--norc", "--noprofile", "-c"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shell {
    path: PathBuf,
}

impl Shell {
    /// `/bin/bash` if it is there, else `/bin/sh`.
    pub fn detect() -> Self {
        let bash = Path::new(BASH_PATH);
        if is_executable(bash) {
            Self::new(bash)
        } else {
            Self::new(SH_PATH)
        }
    }

    /// The shell at `path` (an absolute path: it is executed, not looked up in `PATH`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The shell's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its file name, such as `bash` or `sh`: what the model is told it writes for.
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.to_string_lossy().into_owned(),
            |name| name.to_string_lossy().into_owned(),
        )
    }

    /// Whether this is bash (by its file name).
    pub fn is_bash(&self) -> bool {
        self.name() == "bash"
    }

    /// The arguments between the shell's path and the command.
    pub fn args(&self) -> &'static [&'static str] {
        if self.is_bash() {
            &["--norc", "--noprofile", "-c"]
        } else {
            &["-c"]
        }
    }

    /// Empties `BASH_ENV` in `env` (the variables the command gets on top of ours) when
    /// this is bash and the variable is set, here or in our own environment: the file it
    /// names would be sourced before every command.
    pub(crate) fn neutralise_startup_files(&self, env: &mut BTreeMap<String, String>) {
        if !self.is_bash() {
            return;
        }
        let set = env.get(BASH_ENV).is_some_and(|value| !value.is_empty())
            || std::env::var_os(BASH_ENV).is_some_and(|value| !value.is_empty());
        if set {
            env.insert(BASH_ENV.to_owned(), String::new());
        }
    }
}

impl Default for Shell {
    /// [`Shell::detect`].
    fn default() -> Self {
        Self::detect()
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_env_is_emptied_only_for_bash_and_only_when_set() {
        let bash = Shell::new("/bin/bash");
        let mut env = BTreeMap::from([(BASH_ENV.to_owned(), "/home/u/.bashrc".to_owned())]);
        bash.neutralise_startup_files(&mut env);
        assert_eq!(env[BASH_ENV], "");

        let mut env = BTreeMap::from([(BASH_ENV.to_owned(), "/home/u/.bashrc".to_owned())]);
        Shell::new("/bin/sh").neutralise_startup_files(&mut env);
        assert_eq!(env[BASH_ENV], "/home/u/.bashrc");
    }

    #[test]
    fn detect_prefers_bash() {
        let shell = Shell::detect();
        if Path::new(BASH_PATH).exists() {
            assert_eq!(shell.path(), Path::new(BASH_PATH));
        } else {
            assert_eq!(shell.path(), Path::new(SH_PATH));
        }
    }
}
