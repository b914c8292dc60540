//! The orphan sweep a server runs as it starts: the backstop for the tasks that hosts
//! of this user left running when they died without cleaning up.
//!
//! Each session's context has a lifeline that ends its processes the moment the server
//! dies, however it dies. Where there is none (no `/proc` to find them in: macOS), or
//! it was itself killed first, they run on, re-parented to init, and the next server to
//! start ends them here.

use zidane_context::{EnvInherit, EnvPolicy};
use zidane_process::{ProcessContext, ProcessPath};

use crate::options::ServeOptions;

/// Starts the sweep in the background when `options` ask for it
/// ([`ServeOptions::sweep_orphans`]); the server does not wait for it. Call inside a
/// tokio runtime.
///
/// The sweep belongs to the server's start, not to a session: over HTTP sessions come
/// and go, one per client. So it runs from a context of its own, which starts nothing:
/// no lifeline, no environment to compute.
pub(crate) fn start(options: &ServeOptions) {
    if !options.sweep_orphans {
        return;
    }
    let sweeper = ProcessContext::builder()
        .kill_grace(options.kill_grace)
        .lifeline(false)
        .process_path(ProcessPath::platform_default())
        .env_policy(EnvPolicy::default().inherit(EnvInherit::None))
        .sweep_orphans_on_start(true)
        .build();
    tokio::spawn(async move {
        // What it ended is logged by the sweep itself.
        let _ = sweeper.startup_sweep().await;
        // Dropping a context looks for processes of its own (this one has none): a
        // scan, which belongs on the blocking pool rather than on a runtime worker.
        let _ = tokio::task::spawn_blocking(move || drop(sweeper)).await;
    });
}
