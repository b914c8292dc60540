//! What each known MCP client does with zidane's results, by a part of its
//! `clientInfo.name` (lowercase): how long it lets one request run, what of a result it
//! shows its model, how many times it shows the model an error result's content (so
//! whether notification blocks may ride on one), whether it handles a tool call answered
//! as an MCP task, and whether it polls such a task in a loop (so its polls may be held
//! until the task ends). The name
//! is read per request (from the request's metadata in the 2026-07-28 era, from
//! `initialize` before it), so one table serves both eras.
//!
//! A client not in the table gets the choices that lose nothing: a wait under a minute,
//! the structured content that repeats the text's blocks (a host that shows it alone
//! still sees every exit; one that shows both sees a block twice, never none), blocks held
//! back from error results for the next successful one (see [`ShowsErrors::Unknown`]),
//! and no MCP tasks (a client that declares the extension may still not follow a task to
//! its result, as the Inspector does not).

use std::time::Duration;

use rmcp::model::Implementation;

/// What of a tool result a client shows its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shows {
    /// `JSON.stringify(structuredContent)` instead of the text whenever there is
    /// structured content (Claude Code, Codex).
    Structured,
    /// The text content only (Gemini CLI, opencode).
    Text,
    /// The text and the structured content's JSON, one after the other (qwen-code,
    /// Copilot CLI, the Inspector).
    Both,
    /// Not known: treated as [`Shows::Structured`], the shape that loses nothing.
    Unknown,
}

/// How many times a client shows its model the content of an error result (`isError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShowsErrors {
    /// Once, as it shows a successful result's: notification blocks may ride on an error.
    Once,
    /// Twice (qwen-code quotes the error's content inside its own error message, then the
    /// content again): a block on an error would be read twice, so blocks wait for the
    /// next successful result.
    Twice,
    /// Not known: treated as [`ShowsErrors::Twice`]. Holding the blocks loses nothing —
    /// they stay queued in the agent, latched only when a successful result carries them
    /// — and that result reaches the model once however the host renders errors; riding
    /// on the error would show a block twice in a host like qwen-code, and none in a host
    /// that shows the model only a generic failure. The cost is one result's delay.
    Unknown,
}

/// The shape of a result's structured content for a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultShape {
    /// The tool's data with what the text says added (the blocks and the answer), for a
    /// client that shows the model the structured content alone, or may.
    Full,
    /// The tool's data only: the client shows the model the text, which says it all.
    DataOnly,
}

/// One known client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Client {
    /// A part of its `clientInfo.name`, lowercase.
    name_part: &'static str,
    /// How long it lets one request run, where known.
    pub(crate) ceiling: Option<Duration>,
    /// What of a result it shows its model.
    pub(crate) shows: Shows,
    /// How many times it shows its model an error result's content.
    pub(crate) shows_errors: ShowsErrors,
    /// Whether it follows a tool call answered as an MCP task to its result.
    pub(crate) handles_tasks: bool,
    /// Whether it polls an MCP task in a loop, each `tasks/get` sent only after the
    /// last one's answer, with a request timeout well over the hold of `mcp_tasks`:
    /// then its polls are held until the task ends.
    pub(crate) polls_tasks_in_a_loop: bool,
}

/// What is known of clients that take no MCP tasks: a ceiling, what they show of a
/// result, and how they show an error.
const fn client(
    name_part: &'static str,
    ceiling_secs: Option<u64>,
    shows: Shows,
    shows_errors: ShowsErrors,
) -> Client {
    let ceiling = match ceiling_secs {
        Some(secs) => Some(Duration::from_secs(secs)),
        None => None,
    };
    Client {
        name_part,
        ceiling,
        shows,
        shows_errors,
        handles_tasks: false,
        polls_tasks_in_a_loop: false,
    }
}

/// The same client, following MCP tasks to their results and polling them in a loop.
const fn polling_tasks_in_a_loop(mut client: Client) -> Client {
    client.handles_tasks = true;
    client.polls_tasks_in_a_loop = true;
    client
}

/// The known clients, the first match winning. "Shows" and "tasks" were established by
/// the host tests for the hosts they run; the other rows are what hosts document.
const CLIENTS: &[Client] = &[
    // No ceiling is documented; a 150 s call was seen to pass. Its interactive CLI moves
    // a call answered as an MCP task to its own background and wakes the model with its
    // result; it polls `tasks/get` in a loop, each with a 60 s timeout.
    polling_tasks_in_a_loop(client(
        "claude-code",
        Some(300),
        Shows::Structured,
        ShowsErrors::Once,
    )),
    client("codex", Some(300), Shows::Structured, ShowsErrors::Once),
    // `gemini-cli-mcp-client`: its default MCP request timeout.
    client("gemini-cli", Some(600), Shows::Text, ShowsErrors::Once),
    // `qwen-cli-mcp-client-<server>`: a Gemini CLI fork, its timeout kept; its error path
    // puts the error's content in its message and the content again.
    client("qwen-cli", Some(600), Shows::Both, ShowsErrors::Twice),
    // A 310 s call was cut at 180 s.
    client("copilot-cli", Some(180), Shows::Both, ShowsErrors::Once),
    // A 70 s call was cut at 60 s.
    client("opencode", Some(60), Shows::Text, ShowsErrors::Once),
    // `inspector-cli` and the web UI's client: both print the whole result, an error's too.
    client("inspector", None, Shows::Both, ShowsErrors::Once),
    client("cursor", Some(300), Shows::Unknown, ShowsErrors::Unknown),
    client(
        "visual studio code",
        Some(300),
        Shows::Unknown,
        ShowsErrors::Unknown,
    ),
    client("vscode", Some(300), Shows::Unknown, ShowsErrors::Unknown),
    client("goose", Some(300), Shows::Unknown, ShowsErrors::Unknown),
    client("zed", Some(60), Shows::Unknown, ShowsErrors::Unknown),
    client("cline", Some(60), Shows::Unknown, ShowsErrors::Unknown),
    client("claude-ai", Some(60), Shows::Unknown, ShowsErrors::Unknown),
];

/// What is known of the client named `client`, if anything.
pub(crate) fn known(client: Option<&Implementation>) -> Option<&'static Client> {
    let name = client?.name.to_lowercase();
    CLIENTS.iter().find(|known| name.contains(known.name_part))
}

/// The structured content's shape for `client` (see [`ResultShape`]).
pub(crate) fn result_shape(client: Option<&Implementation>) -> ResultShape {
    match known(client).map_or(Shows::Unknown, |known| known.shows) {
        Shows::Structured | Shows::Unknown => ResultShape::Full,
        Shows::Text | Shows::Both => ResultShape::DataOnly,
    }
}

/// Whether the notification blocks pending for the model (task notifications, stalls,
/// task events) ride on a result for `client`: on every successful result; on an error
/// result only where the client shows an error's content once ([`ShowsErrors`]). Where
/// they do not, the caller leaves them pending, and the next result they ride on tells
/// them, exactly once.
pub(crate) fn blocks_ride(client: Option<&Implementation>, is_error: bool) -> bool {
    !is_error
        || known(client).map_or(ShowsErrors::Unknown, |known| known.shows_errors)
            == ShowsErrors::Once
}

/// Whether `client` follows a tool call answered as an MCP task to its result.
pub(crate) fn handles_tasks(client: Option<&Implementation>) -> bool {
    known(client).is_some_and(|known| known.handles_tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Implementation {
        Implementation::new(name, "1.0")
    }

    #[test]
    fn each_host_is_known_by_the_name_it_sends() {
        let shape = |name: &str| result_shape(Some(&named(name)));
        assert_eq!(shape("claude-code"), ResultShape::Full);
        assert_eq!(shape("codex-mcp-client"), ResultShape::Full);
        assert_eq!(shape("gemini-cli-mcp-client"), ResultShape::DataOnly);
        assert_eq!(shape("qwen-cli-mcp-client-zidane"), ResultShape::DataOnly);
        assert_eq!(shape("copilot-cli"), ResultShape::DataOnly);
        assert_eq!(shape("opencode"), ResultShape::DataOnly);
        assert_eq!(shape("inspector-cli"), ResultShape::DataOnly);
    }

    #[test]
    fn an_unknown_client_gets_what_loses_nothing() {
        assert_eq!(result_shape(Some(&named("my-host"))), ResultShape::Full);
        assert_eq!(result_shape(None), ResultShape::Full);
        assert!(!handles_tasks(Some(&named("my-host"))));
        assert!(!handles_tasks(None));
    }

    #[test]
    fn blocks_ride_on_an_error_only_where_it_is_shown_once() {
        let rides_on_error = |name: &str| blocks_ride(Some(&named(name)), true);
        for once in [
            "claude-code",
            "codex-mcp-client",
            "gemini-cli-mcp-client",
            "copilot-cli",
            "opencode",
            "inspector-cli",
        ] {
            assert!(rides_on_error(once), "{once}");
        }
        // qwen-code shows an error's content twice; an unknown client may too.
        assert!(!rides_on_error("qwen-cli-mcp-client-zidane"));
        assert!(!rides_on_error("my-host"));
        assert!(!rides_on_error("cursor"));
        assert!(!blocks_ride(None, true));
        // A successful result carries them for every client.
        for name in ["qwen-cli-mcp-client-zidane", "my-host", "codex-mcp-client"] {
            assert!(blocks_ride(Some(&named(name)), false), "{name}");
        }
        assert!(blocks_ride(None, false));
    }

    #[test]
    fn only_claude_code_takes_mcp_tasks() {
        let takers: Vec<&str> = CLIENTS
            .iter()
            .filter(|client| client.handles_tasks)
            .map(|client| client.name_part)
            .collect();
        assert_eq!(takers, ["claude-code"]);
        assert!(!handles_tasks(Some(&named("inspector-cli"))));
    }
}
