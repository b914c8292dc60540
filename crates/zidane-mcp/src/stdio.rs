//! The stdio transport: one session for the life of the process.

use std::future::Future;

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::McpServeError;
use crate::options::ServeOptions;
use crate::oversized::{MAX_REQUEST_BYTES, StdioTransport};
use crate::server::McpServer;
use crate::session::McpSession;
use crate::startup_sweep;

/// Serves one session over stdin/stdout until stdin closes or `shutdown` resolves (the
/// CLI passes [`shutdown_signal`](crate::shutdown_signal)); then tears the session down
/// — every task's process group killed — and returns. As it starts, it ends what
/// crashed hosts left running, in the background, unless
/// [`ServeOptions::sweep_orphans`] says not to.
///
/// The protocol owns stdout: the server writes to a copy of it and, on Unix, points the
/// process's own stdout at stderr, so a stray print anywhere in the process lands in
/// the host's log instead of corrupting the JSON-RPC stream. (On Windows stdout stays
/// as it is: nothing in the server prints, and tasks never inherit it.)
pub async fn serve_stdio(
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<(), McpServeError> {
    let protocol_out = claim_stdout().map_err(McpServeError::Stdout)?;
    serve_io(options, tokio::io::stdin(), protocol_out, shutdown).await
}

/// A writer on the process's stdout that only the protocol uses: stdout is duplicated,
/// then fd 1 is made a copy of stderr.
#[cfg(unix)]
fn claim_stdout() -> std::io::Result<tokio::fs::File> {
    use std::os::fd::AsFd;
    let protocol = std::io::stdout().as_fd().try_clone_to_owned()?;
    nix::unistd::dup2_stdout(std::io::stderr()).map_err(std::io::Error::from)?;
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}

/// A writer on a copy of the process's stdout handle.
#[cfg(windows)]
fn claim_stdout() -> std::io::Result<tokio::fs::File> {
    use std::os::windows::io::AsHandle;
    let protocol = std::io::stdout().as_handle().try_clone_to_owned()?;
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}

/// [`serve_stdio`] over any reader and writer (a pipe, a socket, an in-memory duplex).
/// A request line over [`MAX_REQUEST_BYTES`] is not read; it is answered with a JSON-RPC
/// Invalid Request error when its id can be read.
pub async fn serve_io<R, W>(
    options: ServeOptions,
    reader: R,
    writer: W,
    shutdown: impl Future<Output = ()>,
) -> Result<(), McpServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let session = McpSession::new(&options)?;
    startup_sweep::start(&options);
    let server = McpServer::new(session.clone());
    tokio::pin!(shutdown);
    let served = tokio::select! {
        served = server.serve(StdioTransport::new(reader, writer, MAX_REQUEST_BYTES)) => served,
        () = &mut shutdown => {
            session.teardown().await;
            return Ok(());
        }
    };
    let result = match served {
        Ok(service) => {
            let cancel = service.cancellation_token();
            let waiting = service.waiting();
            tokio::pin!(waiting);
            tokio::select! {
                quit = &mut waiting => {
                    tracing::debug!(?quit, "the client closed the session");
                    Ok(())
                }
                () = &mut shutdown => {
                    cancel.cancel();
                    Ok(())
                }
            }
        }
        Err(error) => Err(McpServeError::Transport(error.to_string())),
    };
    session.teardown().await;
    result
}
