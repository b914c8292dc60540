//! A real full disk for a test: a small tmpfs.

use std::path::Path;
use std::process::Command;

/// A small tmpfs mounted on a temp dir, unmounted when dropped (a failing test too).
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts one of `size` (`mount -o size=…`), or says why it cannot and gives none.
    pub fn mount(size: &str) -> Option<Self> {
        Self::mount_with_options(&format!("size={size}"))
    }

    /// Like [`mount`](Self::mount), with its root `0700`: for a store that refuses a
    /// directory others can write to (a fresh tmpfs is `1777`).
    pub fn mount_private(size: &str) -> Option<Self> {
        Self::mount_with_options(&format!("size={size},mode=0700"))
    }

    // The reason a test skips goes to its output, where a person running it looks.
    #[allow(clippy::print_stderr)]
    fn mount_with_options(options: &str) -> Option<Self> {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("no temp dir: {error}"));
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(Self { dir }),
            Ok(out) => {
                eprintln!(
                    "skipped: mount -t tmpfs failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(error) => {
                eprintln!("skipped: cannot run mount: {error}");
                None
            }
        }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a process of a failed test may still hold a file open in it.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
