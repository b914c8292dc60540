//! One JSON value per line on a stream, bounded.

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

use crate::error::{Result, SupervisorError};
use crate::protocol::MAX_LINE_BYTES;

/// Writes `value` and a newline.
pub(crate) async fn send<T: Serialize>(
    stream: &mut (impl AsyncWrite + Unpin),
    value: &T,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line).await?;
    stream.flush().await
}

/// Reads one line (at most [`MAX_LINE_BYTES`]) and parses it; `what` names it in an error.
pub(crate) async fn receive<T: DeserializeOwned>(
    stream: &mut (impl AsyncRead + Unpin),
    what: &'static str,
) -> Result<T> {
    let mut reader = BufReader::new(tokio::io::AsyncReadExt::take(stream, MAX_LINE_BYTES as u64));
    let mut line = Vec::new();
    reader
        .read_until(b'\n', &mut line)
        .await
        .map_err(|error| SupervisorError::Malformed {
            what,
            detail: error.to_string(),
        })?;
    if line.last() != Some(&b'\n') {
        return Err(SupervisorError::Malformed {
            what,
            detail: if line.is_empty() {
                "the other side closed without answering".to_owned()
            } else {
                format!("no end of line within {MAX_LINE_BYTES} bytes")
            },
        });
    }
    serde_json::from_slice(&line).map_err(|error| SupervisorError::Malformed {
        what,
        detail: error.to_string(),
    })
}
