//! The client's MCP roots, which become the session's workspace roots: commands started
//! after a root arrives may write it under a `workspace-write` sandbox.
//!
//! The server asks `roots/list` once the client is initialized (when it declared the
//! `roots` capability) and again on every `notifications/roots/list_changed`. Each
//! `file://` root is given to the session's context
//! ([`ProcessContext::add_workspace_roots`]); other URIs and relative paths are
//! skipped. Roots only add: one the client removes stays writable until the session
//! ends. A client that errors or never answers is waited for [`ROOTS_TIMEOUT`] at most,
//! on a task of its own: nothing else waits for it.

// Roots belong to the protocol before 2026-07-28, which this server still serves.
#![allow(deprecated)]

use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::ClientCapabilities;
use rmcp::service::{Peer, RoleServer};
use zidane_process::ProcessContext;

/// How long a `roots/list` is waited for before it is given up (and logged).
pub(crate) const ROOTS_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether a client's capabilities declare roots.
pub(crate) fn declared(capabilities: &ClientCapabilities) -> bool {
    capabilities.roots.is_some()
}

/// Asks the client for its roots (bounded by `timeout`) and adds every `file://` one to
/// `context`'s workspace roots. Errors and a timeout are logged, nothing more.
pub(crate) async fn refresh(peer: Peer<RoleServer>, context: &ProcessContext, timeout: Duration) {
    let listed = match tokio::time::timeout(timeout, peer.list_roots()).await {
        Ok(Ok(listed)) => listed,
        Ok(Err(error)) => {
            tracing::warn!(%error, "the client's roots/list failed; its roots are not workspace roots");
            return;
        }
        Err(_) => {
            tracing::warn!(
                timeout_secs = timeout.as_secs(),
                "the client did not answer roots/list in time; its roots are not workspace roots"
            );
            return;
        }
    };
    let paths: Vec<PathBuf> = listed
        .roots
        .iter()
        .filter_map(|root| {
            let path = root_path(&root.uri);
            if path.is_none() {
                tracing::debug!(uri = %root.uri, "root skipped: not a file:// URI of an absolute path");
            }
            path
        })
        .collect();
    tracing::debug!(?paths, "the client's roots become workspace roots");
    context.add_workspace_roots(&paths);
}

/// The absolute path a `file://` URI names (percent-decoded), `None` for any other URI,
/// a host other than `localhost`, or a path that is not absolute: an MCP root's, and
/// Codex's `sandboxCwd`.
pub(crate) fn root_path(uri: &str) -> Option<PathBuf> {
    const SCHEME: &str = "file://";
    let rest = uri
        .get(..SCHEME.len())
        .filter(|scheme| scheme.eq_ignore_ascii_case(SCHEME))
        .and_then(|_| uri.get(SCHEME.len()..))?;
    let (host, path) = rest.split_at(rest.find('/')?);
    if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let bytes = percent_decode(path)?;
    let path = path_from_bytes(bytes)?;
    path.is_absolute().then_some(path)
}

#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> Option<PathBuf> {
    let path = String::from_utf8(bytes).ok()?;
    // `file:///C:/dir` names `C:/dir`.
    let path = match path.strip_prefix('/') {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => rest.to_owned(),
        _ => path,
    };
    Some(PathBuf::from(path))
}

/// `%XX` escapes decoded; `None` for a malformed one.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    Some(decoded)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn file_uris_become_absolute_paths() {
        assert_eq!(
            root_path("file:///home/me/project").as_deref(),
            Some(Path::new("/home/me/project"))
        );
        assert_eq!(
            root_path("FILE://localhost/srv/a%20b/%C3%A9t%c3%a9").as_deref(),
            Some(Path::new("/srv/a b/été"))
        );
        assert_eq!(
            root_path("file:///srv/x%23y?query#fragment").as_deref(),
            Some(Path::new("/srv/x#y"))
        );
    }

    #[test]
    fn other_uris_are_not_roots() {
        for uri in [
            "https://example.com/project",
            "file://server/share",
            "file://",
            "file:relative/path",
            "/home/me/project",
            "file:///bad%zz",
            "file:///bad%2",
        ] {
            assert_eq!(root_path(uri), None, "{uri}");
        }
    }
}
