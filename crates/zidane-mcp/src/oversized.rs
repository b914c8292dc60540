//! Requests too large to take, answered instead of dropped.
//!
//! rmcp's stdio transport drops a line longer than its limit and goes on, so a client
//! that sent one waits for that id forever. [`StdioTransport`] watches the bytes on
//! their way into rmcp's transport: for each line, whether it is over the limit and,
//! read as it streams past, the top-level `"id"` of its JSON object. When such a line
//! ends, the transport answers its id with an Invalid Request error. A line whose id
//! cannot be read (a notification, or not JSON) gets no answer, as JSON-RPC has no id
//! to answer it with.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::RoleServer;
use rmcp::model::{ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// The largest request line the stdio transport takes, newline included; rmcp's own
/// limit, so one that is acceptable over HTTP is acceptable here.
pub const MAX_REQUEST_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The longest id kept while scanning; a longer one is not answered.
const MAX_ID_BYTES: usize = 256;

/// A line that was over the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Oversized {
    /// Its id, when one could be read.
    id: Option<RequestId>,
    /// Its length, newline included.
    bytes: u64,
}

/// rmcp's stdio transport, with an answer for each request too large to take.
pub(crate) struct StdioTransport<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, Watched<R>, W>,
    oversized: mpsc::UnboundedReceiver<Oversized>,
    limit: usize,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Over `reader` and `writer`, taking lines of at most `limit` bytes.
    pub(crate) fn new(reader: R, writer: W, limit: usize) -> Self {
        // One message per line over the limit, so the queue cannot outgrow the input
        // by more than one entry per `limit` bytes.
        let (sender, oversized) = mpsc::unbounded_channel();
        let watched = Watched {
            inner: reader,
            lines: LineWatch::new(limit),
            sender,
        };
        Self {
            inner: AsyncRwTransport::new_server(watched, writer).with_max_line_length(limit),
            oversized,
            limit,
        }
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // rmcp's `receive` is cancel-safe: a line it was reading stays buffered.
            tokio::select! {
                biased;
                Some(line) = self.oversized.recv() => {
                    let Some(id) = line.id else { continue };
                    let message = format!(
                        "request too large: {} bytes, over the limit of {} bytes; it was not read",
                        line.bytes, self.limit
                    );
                    let answer = TxJsonRpcMessage::<RoleServer>::error(
                        ErrorData::invalid_request(message, None),
                        Some(id),
                    );
                    if self.inner.send(answer).await.is_err() {
                        return None;
                    }
                }
                message = self.inner.receive() => return message,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// A reader that tells [`LineWatch`] every byte it passes on.
struct Watched<R> {
    inner: R,
    lines: LineWatch,
    sender: mpsc::UnboundedSender<Oversized>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            for byte in &buf.filled()[before..] {
                if let Some(line) = this.lines.feed(*byte) {
                    // The receiver lives as long as the transport that reads us.
                    let _ = this.sender.send(line);
                }
            }
        }
        polled
    }
}

/// Follows a stream of lines byte by byte: each line's length, and the raw value of the
/// top-level `"id"` of the JSON object on it.
#[derive(Debug)]
struct LineWatch {
    limit: usize,
    len: u64,
    scan: IdScan,
}

impl LineWatch {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            len: 0,
            scan: IdScan::default(),
        }
    }

    /// Takes one byte; at the end of a line over the limit, says so.
    fn feed(&mut self, byte: u8) -> Option<Oversized> {
        self.len += 1;
        if byte != b'\n' {
            self.scan.feed(byte);
            return None;
        }
        let bytes = std::mem::take(&mut self.len);
        let scan = std::mem::take(&mut self.scan);
        (bytes > self.limit as u64).then(|| Oversized {
            id: scan.id(),
            bytes,
        })
    }
}

/// A streaming scan of one JSON text for its top-level object's `"id"` value, without
/// keeping the text: a depth count, string and escape state, and the bytes of the
/// current key (only as many as `"id"` needs) and of the id's value.
#[derive(Debug, Default)]
struct IdScan {
    /// Open objects and arrays around the current byte.
    depth: u32,
    /// The first byte opened an object (not a batch array, not a scalar).
    object: bool,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// The current key's bytes, when it is a key being read (at most 3 kept).
    key: Option<Vec<u8>>,
    /// The last key read at depth 1 was exactly `id`.
    key_is_id: bool,
    /// The id's value is being read.
    capturing: bool,
    value: Vec<u8>,
    /// The id's raw value, once read whole.
    found: Option<Vec<u8>>,
    /// The id value was longer than kept.
    too_long: bool,
}

impl IdScan {
    fn feed(&mut self, byte: u8) {
        if self.capturing {
            self.capture(byte);
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
                // An escaped key is never read as `id`.
                if let Some(key) = &mut self.key {
                    key.clear();
                    key.extend_from_slice(b"\\\\\\");
                }
            } else if byte == b'"' {
                self.in_string = false;
                if let Some(key) = self.key.take() {
                    self.key_is_id = key == b"id";
                }
            } else if let Some(key) = &mut self.key
                && key.len() < 3
            {
                key.push(byte);
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.object && self.expect_key {
                    self.expect_key = false;
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 {
                    self.object = byte == b'{';
                    self.expect_key = self.object;
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.end_value();
                }
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.expect_key = self.object;
            }
            b':' if self.depth == 1 && self.key_is_id => {
                self.key_is_id = false;
                self.capturing = true;
                self.value.clear();
                self.too_long = false;
            }
            _ => {}
        }
    }

    fn capture(&mut self, byte: u8) {
        let ends = !self.in_string && self.depth == 1 && matches!(byte, b',' | b'}');
        if ends {
            return;
        }
        if self.value.len() < MAX_ID_BYTES {
            self.value.push(byte);
        } else {
            self.too_long = true;
        }
    }

    fn end_value(&mut self) {
        if self.capturing {
            self.capturing = false;
            self.found = (!self.too_long).then(|| std::mem::take(&mut self.value));
        }
    }

    /// The id, when the text had one that parses as a JSON-RPC id.
    fn id(&self) -> Option<RequestId> {
        let raw = self.found.as_deref()?;
        serde_json::from_slice(raw).ok()
    }
}

#[cfg(test)]
#[path = "oversized_tests.rs"]
mod tests;
