//! The user's private runtime directory: `$XDG_RUNTIME_DIR/zidane`, else
//! `/run/user/<uid>/zidane`; on macOS, under the per-user `$TMPDIR`. Never `/tmp`.

use std::io;
use std::path::{Path, PathBuf};

/// The name of zidane's directory inside the user's runtime directory.
pub const RUNTIME_DIR_NAME: &str = "zidane";

/// zidane's private runtime directory for this user, when the machine has a per-user
/// runtime directory; `None` otherwise (the caller picks a private place of its own,
/// such as a directory under zidane's user dir). Nothing is created: see
/// [`ensure_runtime_dir`].
///
/// Every sandboxed command has it hidden, so a per-user supervisor's socket there is
/// out of reach of what it runs.
pub fn runtime_dir() -> Option<PathBuf> {
    imp::user_runtime_dir().map(|base| base.join(RUNTIME_DIR_NAME))
}

/// Makes `dir` (and its parents) if missing, mode `0700` on Unix, and checks that it is
/// a directory of this user that no one else may enter — a socket is only as private
/// as the directory it is bound in.
///
/// Errors: it cannot be made, it is not a directory (a link counts as not), or on Unix
/// another user owns it or its mode lets group or others in.
pub fn ensure_runtime_dir(dir: &Path) -> io::Result<()> {
    imp::make_private(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} is not a directory", dir.display()),
        ));
    }
    imp::check_private(dir, &meta)
}

#[cfg(unix)]
mod imp {
    use std::fs::Metadata;
    use std::io;
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
    use std::path::{Path, PathBuf};

    /// `$XDG_RUNTIME_DIR` when it names an absolute directory of this user, else
    /// `/run/user/<uid>` when it exists; on macOS, which has neither, the per-user
    /// temp directory launchd gives every login (`/var/folders/…`), never `/tmp`.
    pub(super) fn user_runtime_dir() -> Option<PathBuf> {
        let uid = nix::unistd::geteuid().as_raw();
        let owned = |dir: &Path| {
            dir.is_absolute()
                && std::fs::metadata(dir).is_ok_and(|meta| meta.is_dir() && meta.uid() == uid)
        };
        if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
            && owned(&dir)
        {
            return Some(dir);
        }
        let run_user = PathBuf::from(format!("/run/user/{uid}"));
        if owned(&run_user) {
            return Some(run_user);
        }
        if cfg!(target_os = "macos") {
            let temp = std::env::temp_dir();
            if owned(&temp) && !temp.starts_with("/tmp") && !temp.starts_with("/private/tmp") {
                return Some(temp);
            }
        }
        None
    }

    pub(super) fn make_private(dir: &Path) -> io::Result<()> {
        match std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
        {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(error) => Err(error),
        }
    }

    pub(super) fn check_private(dir: &Path, meta: &Metadata) -> io::Result<()> {
        let uid = nix::unistd::geteuid().as_raw();
        if meta.uid() != uid {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} belongs to uid {}, not to this user",
                    dir.display(),
                    meta.uid()
                ),
            ));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} lets group or others in (mode {:o}); it must be 0700",
                    dir.display(),
                    meta.permissions().mode() & 0o777
                ),
            ));
        }
        Ok(())
    }
}

/// Windows has no runtime directory: its supervisor listens on a named pipe whose
/// access list is the user's, and the directory, when one is asked for, is an
/// ordinary one under the user's profile, private by its inherited access list.
#[cfg(windows)]
mod imp {
    use std::fs::Metadata;
    use std::io;
    use std::path::{Path, PathBuf};

    pub(super) fn user_runtime_dir() -> Option<PathBuf> {
        None
    }

    pub(super) fn make_private(dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    pub(super) fn check_private(_dir: &Path, _meta: &Metadata) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_new_runtime_dir_is_private() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a/zidane");
        ensure_runtime_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        ensure_runtime_dir(&dir).unwrap();
    }

    #[test]
    fn a_runtime_dir_others_may_enter_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("zidane");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let error = ensure_runtime_dir(&dir).unwrap_err();
        assert!(error.to_string().contains("0700"), "{error}");
    }

    #[test]
    fn a_link_is_not_a_runtime_dir() {
        let base = tempfile::tempdir().unwrap();
        let real = base.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = base.path().join("zidane");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(ensure_runtime_dir(&link).is_err());
    }
}
