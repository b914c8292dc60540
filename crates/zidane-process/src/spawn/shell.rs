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
/// On Windows it is PowerShell (`pwsh` when installed, else Windows PowerShell), or
/// `cmd.exe` where neither runs; PowerShell runs as `-NoLogo -NoProfile
/// -NonInteractive -Command COMMAND` with its output in UTF-8, `cmd.exe` as
/// `/d /s /c "COMMAND"` (no AutoRun commands). A Git Bash or any other `bash.exe` given
/// to [`new`](Self::new) runs as bash does.
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
    /// `/bin/bash` if it is there, else `/bin/sh`; on Windows, the first of `pwsh`,
    /// Windows PowerShell and `cmd.exe` that runs (asked once per process).
    #[cfg(windows)]
    pub fn detect() -> Self {
        static DETECTED: std::sync::OnceLock<Shell> = std::sync::OnceLock::new();
        DETECTED.get_or_init(windows::detect).clone()
    }

    /// `/bin/bash` if it is there, else `/bin/sh`; on Windows, the first of `pwsh`,
    /// Windows PowerShell and `cmd.exe` that runs (asked once per process).
    #[cfg(unix)]
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

    /// Its file name without `.exe`, in lower case on Windows (whose file names
    /// ignore case).
    fn stem(&self) -> String {
        let name = self.name();
        if cfg!(windows) {
            let lower = name.to_ascii_lowercase();
            lower
                .strip_suffix(".exe")
                .map_or(lower.clone(), str::to_owned)
        } else {
            name
        }
    }

    /// Whether this is bash (by its file name).
    pub fn is_bash(&self) -> bool {
        self.stem() == "bash"
    }

    /// Whether this is PowerShell, `pwsh` or Windows PowerShell (by its file name).
    pub fn is_powershell(&self) -> bool {
        matches!(self.stem().as_str(), "pwsh" | "powershell")
    }

    /// Whether this is Windows' `cmd.exe` (by its file name).
    pub fn is_cmd(&self) -> bool {
        cfg!(windows) && self.stem() == "cmd"
    }

    /// The arguments between the shell's path and the command.
    pub fn args(&self) -> &'static [&'static str] {
        if self.is_bash() {
            &["--norc", "--noprofile", "-c"]
        } else if self.is_powershell() {
            &["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]
        } else if self.is_cmd() {
            &["/d", "/s", "/c"]
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

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Finding and starting the shell on Windows.
#[cfg(windows)]
pub(crate) mod windows {
    use std::ffi::OsStr;
    use std::os::windows::process::CommandExt;
    use std::path::PathBuf;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::Shell;

    /// What runs before a PowerShell command: its output, to a pipe, in UTF-8 rather
    /// than the console's code page. A console that refuses is left as it is.
    const POWERSHELL_UTF8: &str = "try { [Console]::OutputEncoding = [System.Text.Encoding]::UTF8 } catch {}; $OutputEncoding = [System.Text.Encoding]::UTF8; ";

    /// How long a candidate shell may take to run `exit 0` during detection.
    const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

    /// The first of `pwsh` (on `PATH`), Windows PowerShell and `cmd.exe` that runs.
    pub(super) fn detect() -> Shell {
        let system_root = std::env::var_os("SystemRoot")
            .map_or_else(|| PathBuf::from(r"C:\Windows"), PathBuf::from);
        let system32 = system_root.join("System32");
        let candidates = find_on_path("pwsh.exe")
            .into_iter()
            .chain([system32.join(r"WindowsPowerShell\v1.0\powershell.exe")]);
        for candidate in candidates {
            let shell = Shell::new(candidate);
            if shell.path().is_file() && runs(&shell) {
                return shell;
            }
        }
        let cmd =
            std::env::var_os("ComSpec").map_or_else(|| system32.join("cmd.exe"), PathBuf::from);
        Shell::new(cmd)
    }

    fn find_on_path(name: &str) -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    }

    /// Whether `shell` starts and answers `echo zidane` within [`PROBE_TIMEOUT`]
    /// (a stand-in that exits 0 and prints nothing, as Wine's PowerShell does, does
    /// not count).
    fn runs(shell: &Shell) -> bool {
        let mut command = Command::new(shell.path());
        add_command(shell, &mut command, "echo zidane");
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .creation_flags(
                crate::sys::windows::task_creation_flags()
                    & !windows_sys::Win32::System::Threading::CREATE_SUSPENDED,
            );
        let Ok(mut child) = command.spawn() else {
            return false;
        };
        // The answer is a few bytes: read on a thread, so the wait below stays bounded.
        let stdout = child.stdout.take();
        let answer = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut stdout) = stdout {
                let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
            }
            text
        });
        let deadline = Instant::now() + PROBE_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    return status.success()
                        && answer.join().is_ok_and(|text| text.trim() == "zidane");
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return false;
                }
            }
        }
    }

    /// Adds the shell's arguments and `command` to `process`, quoted as the shell
    /// parses its command line: `cmd.exe` takes the command as it is, inside one pair
    /// of quotes (`/s`), which std's quoting would break.
    pub(crate) fn add_command(shell: &Shell, process: &mut Command, command: &str) {
        if shell.is_cmd() {
            process.raw_arg(format!("/d /s /c \"{command}\""));
        } else if shell.is_powershell() {
            process
                .args(shell.args())
                .arg(format!("{POWERSHELL_UTF8}{command}"));
        } else {
            process.args(shell.args()).arg(OsStr::new(command));
        }
    }
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
    #[cfg(unix)]
    fn detect_prefers_bash() {
        let shell = Shell::detect();
        if Path::new(BASH_PATH).exists() {
            assert_eq!(shell.path(), Path::new(BASH_PATH));
        } else {
            assert_eq!(shell.path(), Path::new(SH_PATH));
        }
    }
}
