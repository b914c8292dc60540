//! The signals that end a server: SIGTERM and SIGINT.

/// Resolves when the process receives SIGTERM or SIGINT. If a handler cannot be
/// installed, that signal is not waited for (the other still is).
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    let int = async {
        match signal(SignalKind::interrupt()) {
            Ok(mut int) => {
                int.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGINT");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = term => tracing::debug!("SIGTERM: shutting down"),
        () = int => tracing::debug!("SIGINT: shutting down"),
    }
}
