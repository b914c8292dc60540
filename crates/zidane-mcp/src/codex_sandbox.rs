//! Codex's sandbox, followed: a server that declares the experimental capability
//! [`SANDBOX_META`] is sent, on every `tools/call`, the sandbox Codex runs its own
//! commands in (`_meta["codex/sandbox-state-meta"]`). zidane reads it into a
//! [`SandboxPolicy`] and runs that call's commands under the stricter of it and its own
//! ([`SandboxScope::Within`](zidane_context::SandboxScope::Within)): a command started
//! through zidane can do no more than one Codex runs itself.
//!
//! What Codex sends (0.169), in `workspace-write`:
//!
//! ```json
//! { "permissionProfile": { "type": "managed",
//!     "file_system": { "type": "restricted", "entries": [
//!       { "path": { "type": "special", "value": { "kind": "root" } }, "access": "read" },
//!       { "path": { "type": "path", "path": "/w" }, "access": "write" },
//!       { "path": { "type": "special", "value": { "kind": "slash_tmp" } }, "access": "write" },
//!       { "path": { "type": "path", "path": "/w/.git" }, "access": "read",
//!         "missing_path_behavior": "skip" } ] },
//!     "network": "restricted" },
//!   "sandboxCwd": "file:///w", "codexLinuxSandboxExe": "…", "useLegacyLandlock": false }
//! ```
//!
//! `read-only` has only the root entry; `danger-full-access` is `{"type": "disabled"}`.
//!
//! The reading never widens what Codex said: a path written is kept only where an
//! entry names it; one Codex holds read-only inside it stays read-only; a path it denies
//! is denied; the network is on only where Codex says `enabled`. What zidane cannot
//! express narrows instead: a write to a glob or a special path it does not know is
//! dropped, and a denial of one makes the whole state unreadable. Metadata it cannot
//! read is logged and taken as `read-only` with the network off. Two things zidane's sandbox keeps wider than Codex's: the temp
//! directories stay writable in `read-only`, and reads are narrowed only by the paths
//! Codex denies, not by a root it leaves unreadable.

use std::path::{Component, Path, PathBuf};

use rmcp::model::JsonObject;
use serde_json::Value;
use zidane_context::{NetworkAccess, SandboxMode, SandboxPolicy};

use crate::error::SandboxMetaError;

/// The experimental capability a server declares to be sent Codex's sandbox, and the
/// `_meta` key each `tools/call` carries it under.
pub(crate) const SANDBOX_META: &str = "codex/sandbox-state-meta";

/// The server's `experimental` capabilities: [`SANDBOX_META`].
pub(crate) fn experimental_capabilities() -> rmcp::model::ExperimentalCapabilities {
    [(SANDBOX_META.to_owned(), JsonObject::new())]
        .into_iter()
        .collect()
}

/// The host's sandbox for one call, from its `_meta`: `None` where the host sends none
/// (not Codex, or a Codex that did not see the capability). Metadata that cannot be
/// read is logged and taken as [`fallback`].
pub(crate) fn host_policy_in(meta: &JsonObject) -> Option<SandboxPolicy> {
    let state = meta.get(SANDBOX_META)?;
    // `RUST_LOG=zidane_mcp=debug` shows what Codex sent (how the fixture was taken).
    tracing::debug!(%state, "Codex's sandbox state");
    Some(host_policy(state).unwrap_or_else(|error| {
        tracing::warn!(
            %error,
            "Codex's sandbox state cannot be read; this call's commands run read-only \
             without network"
        );
        fallback()
    }))
}

/// What a call whose sandbox state cannot be read runs under: `read-only`, network off.
pub(crate) fn fallback() -> SandboxPolicy {
    SandboxPolicy::read_only().network(NetworkAccess::Off)
}

/// Codex's sandbox state (the value of `_meta["codex/sandbox-state-meta"]`) as a
/// policy.
pub(crate) fn host_policy(state: &Value) -> Result<SandboxPolicy, SandboxMetaError> {
    let state = object(state, "the sandbox state")?;
    let profile = object(field(state, "permissionProfile")?, "permissionProfile")?;
    match text(profile, "type")? {
        // danger-full-access: Codex runs its own commands unsandboxed, so it asks
        // nothing narrower than zidane's own policy.
        "disabled" => Ok(SandboxPolicy::off()),
        "managed" => {
            let cwd = match state.get("sandboxCwd") {
                None | Some(Value::Null) => None,
                Some(Value::String(url)) => Some(file_url_path(url)?),
                Some(_) => return Err(SandboxMetaError::NotText("sandboxCwd")),
            };
            managed(profile, cwd.as_deref())
        }
        other => Err(SandboxMetaError::Unknown {
            what: "permissionProfile.type",
            value: other.to_owned(),
        }),
    }
}

/// A `managed` profile: its file system entries and its network.
fn managed(profile: &JsonObject, cwd: Option<&Path>) -> Result<SandboxPolicy, SandboxMetaError> {
    let network = match text(profile, "network")? {
        "enabled" => NetworkAccess::On,
        "restricted" => NetworkAccess::Off,
        other => {
            return Err(SandboxMetaError::Unknown {
                what: "permissionProfile.network",
                value: other.to_owned(),
            });
        }
    };
    let file_system = object(field(profile, "file_system")?, "file_system")?;
    match text(file_system, "type")? {
        "restricted" => {}
        // Every path writable, yet (maybe) no network: zidane's nearest is the whole
        // tree as a writable root.
        "unrestricted" if network == NetworkAccess::On => return Ok(SandboxPolicy::off()),
        "unrestricted" => {
            return Ok(SandboxPolicy::default()
                .network(NetworkAccess::Off)
                .writable("/"));
        }
        other => {
            return Err(SandboxMetaError::Unknown {
                what: "file_system.type",
                value: other.to_owned(),
            });
        }
    }
    let Some(entries) = field(file_system, "entries")?.as_array() else {
        return Err(SandboxMetaError::NotA {
            what: "file_system.entries",
            kind: "list",
        });
    };
    let mut policy = SandboxPolicy::read_only().network(network);
    let mut writable: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = object(entry, "a file_system entry")?;
        let access = text(entry, "access")?;
        let target = target(object(field(entry, "path")?, "an entry's path")?, cwd)?;
        match (access, target) {
            ("write", Target::Path(path)) => writable.push(path),
            // zidane's temp directories are writable in every mode.
            ("write", Target::Temp) => {}
            ("write", Target::Unknown(what)) => {
                tracing::debug!(%what, "a writable path of Codex's zidane cannot name: not writable");
            }
            // Held read-only where it lies inside a writable path (below).
            ("read", Target::Path(path)) => policy.read_only.push(path),
            ("read", Target::Temp | Target::Unknown(_)) => {}
            ("none" | "deny", Target::Path(path)) if path == Path::new("/") => {
                return Err(SandboxMetaError::Unknown {
                    what: "an entry denying",
                    value: "/".to_owned(),
                });
            }
            ("none" | "deny", Target::Path(path)) => policy.deny_read.push(path),
            // A denial zidane cannot hold would leave the path writable inside a
            // writable root: the whole state is taken as unreadable instead.
            ("none" | "deny", Target::Temp) => {
                return Err(SandboxMetaError::Unknown {
                    what: "an entry denying",
                    value: "a temp directory".to_owned(),
                });
            }
            ("none" | "deny", Target::Unknown(what)) => {
                return Err(SandboxMetaError::Unknown {
                    what: "an entry denying",
                    value: what,
                });
            }
            (other, _) => {
                return Err(SandboxMetaError::Unknown {
                    what: "an entry's access",
                    value: other.to_owned(),
                });
            }
        }
    }
    // A read entry matters only inside a writable path (the root's, in every profile,
    // does not).
    policy
        .read_only
        .retain(|held| writable.iter().any(|root| held.starts_with(root)));
    if !writable.is_empty() {
        policy.mode = SandboxMode::WorkspaceWrite;
        for path in writable {
            if Some(path.as_path()) == cwd {
                policy.workspace.push(path);
            } else {
                policy.writable.push(path);
            }
        }
    }
    Ok(policy)
}

/// What an entry's path names.
enum Target {
    /// A path.
    Path(PathBuf),
    /// A temp directory (`/tmp`, `$TMPDIR`): writable in every zidane sandbox.
    Temp,
    /// Something zidane cannot name (a glob, a special path it does not know), said
    /// for the log.
    Unknown(String),
}

/// An entry's `path`: `{"type": "path", "path": …}`, `{"type": "special", "value":
/// {"kind": …}}` or a glob.
fn target(path: &JsonObject, cwd: Option<&Path>) -> Result<Target, SandboxMetaError> {
    match text(path, "type")? {
        "path" => {
            let given = text(path, "path")?;
            let path = if given.starts_with("file:") {
                file_url_path(given)?
            } else {
                absolute(given)?
            };
            Ok(Target::Path(path))
        }
        "special" => {
            let value = object(field(path, "value")?, "a special path")?;
            let kind = text(value, "kind")?;
            match kind {
                "root" => Ok(Target::Path(PathBuf::from("/"))),
                "slash_tmp" | "tmpdir" => Ok(Target::Temp),
                "project_roots" | "current_working_directory" => {
                    let Some(cwd) = cwd else {
                        return Ok(Target::Unknown(format!("{kind} without sandboxCwd")));
                    };
                    match value.get("subpath") {
                        None | Some(Value::Null) => Ok(Target::Path(cwd.to_path_buf())),
                        Some(Value::String(sub)) => Ok(Target::Path(cwd.join(relative(sub)?))),
                        Some(_) => Err(SandboxMetaError::NotText("subpath")),
                    }
                }
                other => Ok(Target::Unknown(format!("special path {other}"))),
            }
        }
        other => Ok(Target::Unknown(format!("a {other} entry"))),
    }
}

/// The path of a `file://` URL (Codex's `sandboxCwd`), read as an MCP root's is, and
/// held to what [`absolute`] accepts.
fn file_url_path(url: &str) -> Result<PathBuf, SandboxMetaError> {
    let bad = || SandboxMetaError::BadPath(url.to_owned());
    let path = crate::roots::root_path(url).ok_or_else(bad)?;
    absolute(path.to_str().ok_or_else(bad)?).map_err(|_| bad())
}

/// An absolute path without `..`, as given.
fn absolute(given: &str) -> Result<PathBuf, SandboxMetaError> {
    let path = PathBuf::from(given);
    let parent = path.components().any(|part| part == Component::ParentDir);
    if !path.is_absolute() || parent || given.contains('\0') {
        return Err(SandboxMetaError::BadPath(given.to_owned()));
    }
    Ok(path)
}

/// A relative path that stays below where it is joined.
fn relative(given: &str) -> Result<PathBuf, SandboxMetaError> {
    let path = PathBuf::from(given);
    let below = path
        .components()
        .all(|part| matches!(part, Component::Normal(_) | Component::CurDir));
    if !below || given.contains('\0') {
        return Err(SandboxMetaError::BadPath(given.to_owned()));
    }
    Ok(path)
}

fn field<'a>(object: &'a JsonObject, name: &'static str) -> Result<&'a Value, SandboxMetaError> {
    object.get(name).ok_or(SandboxMetaError::Missing(name))
}

fn text<'a>(object: &'a JsonObject, name: &'static str) -> Result<&'a str, SandboxMetaError> {
    field(object, name)?
        .as_str()
        .ok_or(SandboxMetaError::NotText(name))
}

fn object<'a>(value: &'a Value, what: &'static str) -> Result<&'a JsonObject, SandboxMetaError> {
    value.as_object().ok_or(SandboxMetaError::NotA {
        what,
        kind: "object",
    })
}

// Codex's captured state names Unix paths (its sandbox runs on Linux and macOS).
#[cfg(test)]
#[cfg(unix)]
#[path = "codex_sandbox_tests.rs"]
mod tests;
