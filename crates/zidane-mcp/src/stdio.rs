//! The stdio transport: one session for the life of the process.

use std::future::Future;

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::McpServeError;
use crate::handler::McpSession;
use crate::options::ServeOptions;
use crate::oversized::{MAX_REQUEST_BYTES, StdioTransport};

/// Serves one session over stdin/stdout until stdin closes or `shutdown` resolves (the
/// CLI passes [`shutdown_signal`](crate::shutdown_signal)); then tears the session down
/// — every task's process group killed — and returns.
pub async fn serve_stdio(
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<(), McpServeError> {
    serve_io(options, tokio::io::stdin(), tokio::io::stdout(), shutdown).await
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
    let handler = session.clone();
    tokio::pin!(shutdown);
    let served = tokio::select! {
        served = handler.serve(StdioTransport::new(reader, writer, MAX_REQUEST_BYTES)) => served,
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
