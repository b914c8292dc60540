//! The signals that end a server: SIGTERM and SIGINT on Unix; on Windows ctrl-c,
//! ctrl-break and the console's close.

#[cfg(unix)]
use tokio::signal::unix::{SignalKind, signal};

/// Resolves when the process receives SIGTERM or SIGINT. If a handler cannot be
/// installed, that signal is not waited for (the other still is).
#[cfg(unix)]
pub async fn shutdown_signal() {
    tokio::select! {
        () = received(SignalKind::terminate(), "SIGTERM") => {}
        () = received(SignalKind::interrupt(), "SIGINT") => {}
    }
}

/// Resolves when `kind` (named `name`) arrives; never, when it cannot be listened for.
#[cfg(unix)]
async fn received(kind: SignalKind, name: &str) {
    listened(
        signal(kind).map(|mut stream| async move { stream.recv().await }),
        name,
    )
    .await;
}

/// Resolves when the console sends ctrl-c, ctrl-break or its close. If a handler
/// cannot be installed, that event is not waited for (the others still are).
#[cfg(windows)]
pub async fn shutdown_signal() {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    tokio::select! {
        () = listened(ctrl_c().map(|mut s| async move { s.recv().await }), "ctrl-c") => {}
        () = listened(ctrl_break().map(|mut s| async move { s.recv().await }), "ctrl-break") => {}
        () = listened(ctrl_close().map(|mut s| async move { s.recv().await }), "the console's close") => {}
    }
}

/// Waits for the event `name` once it is listened for; never, when it cannot be.
async fn listened<F: Future>(listening: std::io::Result<F>, name: &str) {
    match listening {
        Ok(event) => {
            event.await;
            tracing::debug!("{name}: shutting down");
        }
        Err(error) => {
            tracing::warn!(%error, "cannot listen for {name}");
            std::future::pending::<()>().await;
        }
    }
}
