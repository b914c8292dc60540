//! Where a supervisor keeps its state and listens.

use std::path::{Path, PathBuf};

use zidane_context::TaskId;

/// The state directory's name under zidane's user dir.
pub const STATE_DIR_NAME: &str = "detached";

/// The socket and state of the supervisor of one user dir.
///
/// The state (one directory per task: what to run, when it started, how it ended, who
/// was told) lives under `<user_dir>/detached/`, private to the user. The socket lives
/// in the user's private runtime directory (`$XDG_RUNTIME_DIR/zidane`, else
/// `/run/user/<uid>/zidane`; under `<user_dir>/run` where the machine has neither),
/// never in `/tmp`, never abstract, never TCP. Its name carries a hash of the state
/// directory, so two user dirs have two supervisors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorPaths {
    /// The Unix socket (on Windows, the pipe's name is derived from it).
    pub socket: PathBuf,
    /// The state directory.
    pub state: PathBuf,
}

impl SupervisorPaths {
    /// The paths of the supervisor of `user_dir`.
    pub fn for_user_dir(user_dir: &Path) -> Self {
        let state = user_dir.join(STATE_DIR_NAME);
        let runtime = zidane_process::runtime_dir().unwrap_or_else(|| user_dir.join("run"));
        let socket = runtime.join(format!("supervisor-{:08x}.sock", fnv1a(&state)));
        Self { socket, state }
    }

    /// The directory holding every task's directory.
    pub fn tasks_dir(&self) -> PathBuf {
        self.state.join("tasks")
    }

    /// One task's directory: `tasks/<n>` for `bash_d<n>`.
    pub fn task_dir(&self, id: TaskId) -> PathBuf {
        self.tasks_dir()
            .join(id.detached_number().unwrap_or_default().to_string())
    }

    /// The socket of task `n`'s monitor, beside the supervisor's (so as private, and as
    /// hidden from sandboxed tasks): where its input, screen and kill are relayed.
    pub fn monitor_socket(&self, n: u64) -> PathBuf {
        let stem = self
            .socket
            .file_stem()
            .map_or_else(|| "supervisor".into(), |stem| stem.to_string_lossy());
        self.socket.with_file_name(format!("{stem}-task-{n}.sock"))
    }

    /// The supervisor's own log (what it could not do, for a person to read).
    pub fn log_file(&self) -> PathBuf {
        self.state.join("supervisor.log")
    }

    /// The lock only one running supervisor holds.
    pub fn lock_file(&self) -> PathBuf {
        self.state.join("supervisor.lock")
    }
}

/// 32-bit FNV-1a of a path's bytes: a short, stable name, not a secret.
fn fnv1a(path: &Path) -> u32 {
    path.as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0x811c_9dc5_u32, |hash, byte| {
            (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_user_dirs_have_two_sockets_and_one_has_one() {
        let a = SupervisorPaths::for_user_dir(Path::new("/home/a/.local/share/zidane"));
        let b = SupervisorPaths::for_user_dir(Path::new("/srv/zidane"));
        assert_ne!(a.socket, b.socket);
        assert_eq!(
            a,
            SupervisorPaths::for_user_dir(Path::new("/home/a/.local/share/zidane"))
        );
        assert!(a.state.ends_with("detached"));
        let id = TaskId::detached(12).unwrap();
        assert!(a.task_dir(id).ends_with("tasks/12"));
        assert_eq!(a.monitor_socket(12).parent(), a.socket.parent());
        assert_ne!(a.monitor_socket(12), a.monitor_socket(13));
        assert_ne!(a.monitor_socket(12), b.monitor_socket(12));
    }
}
