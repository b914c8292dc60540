//! The signals that end a server: SIGTERM and SIGINT on Unix; on Windows ctrl-c,
//! ctrl-break and the console's close.

#[cfg(unix)]
use tokio::signal::unix::{SignalKind, signal};

/// Resolves when the process receives SIGTERM or SIGINT. The handlers are installed
/// when this is called, not when the future is first polled: a server that calls it
/// before it says it is ready is never ended by a signal's default action. If a handler
/// cannot be installed, that signal is not waited for (the other still is). Call it
/// inside a tokio runtime.
#[cfg(unix)]
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    let terminate = received(SignalKind::terminate(), "SIGTERM");
    let interrupt = received(SignalKind::interrupt(), "SIGINT");
    async move {
        tokio::select! {
            () = terminate => {}
            () = interrupt => {}
        }
    }
}

/// Listens for `kind` (named `name`) now; the future resolves when it arrives, never
/// when it cannot be listened for.
#[cfg(unix)]
fn received(kind: SignalKind, name: &'static str) -> impl Future<Output = ()> + Send + 'static {
    listened(
        signal(kind).map(|mut stream| async move { stream.recv().await }),
        name,
    )
}

/// Resolves when the console sends ctrl-c, ctrl-break or its close. The handlers are
/// installed when this is called, as on Unix. If a handler cannot be installed, that
/// event is not waited for (the others still are).
#[cfg(windows)]
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    let c = listened(
        ctrl_c().map(|mut s| async move { s.recv().await }),
        "ctrl-c",
    );
    let brk = listened(
        ctrl_break().map(|mut s| async move { s.recv().await }),
        "ctrl-break",
    );
    let close = listened(
        ctrl_close().map(|mut s| async move { s.recv().await }),
        "the console's close",
    );
    async move {
        tokio::select! {
            () = c => {}
            () = brk => {}
            () = close => {}
        }
    }
}

/// Waits for the event `name` once it is listened for; never, when it cannot be.
async fn listened<F: Future>(listening: std::io::Result<F>, name: &'static str) {
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
