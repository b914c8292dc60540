//! The signals that end a server: SIGTERM and SIGINT.

use tokio::signal::unix::{SignalKind, signal};

/// Resolves when the process receives SIGTERM or SIGINT. If a handler cannot be
/// installed, that signal is not waited for (the other still is).
pub async fn shutdown_signal() {
    tokio::select! {
        () = received(SignalKind::terminate(), "SIGTERM") => {}
        () = received(SignalKind::interrupt(), "SIGINT") => {}
    }
}

/// Resolves when `kind` (named `name`) arrives; never, when it cannot be listened for.
async fn received(kind: SignalKind, name: &str) {
    match signal(kind) {
        Ok(mut stream) => {
            stream.recv().await;
            tracing::debug!("{name}: shutting down");
        }
        Err(error) => {
            tracing::warn!(%error, "cannot listen for {name}");
            std::future::pending::<()>().await;
        }
    }
}
