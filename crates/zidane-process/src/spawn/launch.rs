//! What starts a command: the shell, the spawn mechanism, and the sandbox's program
//! that runs the shell (if any).

#[cfg(unix)]
use std::ffi::OsStr;
use std::ffi::OsString;

use crate::process_path::ProcessPath;
use crate::spawn::shell::Shell;

/// How one command is started: `PREFIX… SHELL [FLAGS] -c COMMAND` by `path`'s
/// mechanism.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Launch<'a> {
    pub(crate) shell: &'a Shell,
    pub(crate) path: ProcessPath,
    /// The sandbox's program and its arguments, run with the shell's `argv` after them;
    /// empty: the shell runs as it is.
    pub(crate) prefix: &'a [OsString],
}

impl<'a> Launch<'a> {
    /// The shell by `path`'s mechanism, unsandboxed.
    #[cfg(test)]
    #[cfg(unix)]
    pub(crate) fn plain(shell: &'a Shell, path: ProcessPath) -> Self {
        Self {
            shell,
            path,
            prefix: &[],
        }
    }

    /// The program executed: the sandbox's, else the shell.
    #[cfg(unix)]
    pub(crate) fn program(&self) -> &OsStr {
        self.prefix
            .first()
            .map_or(self.shell.path().as_os_str(), OsString::as_os_str)
    }

    /// The arguments after the program, up to the command: the sandbox's, the shell's
    /// path when a sandbox runs it, and the shell's flags.
    #[cfg(unix)]
    pub(crate) fn args(&self) -> impl Iterator<Item = &OsStr> {
        let sandboxed = !self.prefix.is_empty();
        self.prefix
            .iter()
            .skip(1)
            .map(OsString::as_os_str)
            .chain(sandboxed.then(|| self.shell.path().as_os_str()))
            .chain(self.shell.args().iter().map(OsStr::new))
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_runs_the_shell() {
        let shell = Shell::new("/bin/sh");
        let plain = Launch::plain(&shell, ProcessPath::platform_default());
        assert_eq!(plain.program(), "/bin/sh");
        assert_eq!(plain.args().collect::<Vec<_>>(), ["-c"]);
        let prefix = ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--"].map(OsString::from);
        let sandboxed = Launch {
            prefix: &prefix,
            ..plain
        };
        assert_eq!(sandboxed.program(), "/usr/bin/bwrap");
        assert_eq!(
            sandboxed.args().collect::<Vec<_>>(),
            ["--ro-bind", "/", "/", "--", "/bin/sh", "-c"]
        );
    }
}
