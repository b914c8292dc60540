//! What the model and the transcript see of zidane's background tasks.
//!
//! When a background task ends, the agent prepends a `<task-notification>` block to the
//! model's next user turn; when one goes quiet, a `<task-stall>` block. This crate owns
//! that text, exactly: [`TaskNotification::render`] and [`TaskStall::render`] write it,
//! [`parse`] reads it back (the exact inverse: every string is escaped, so any command
//! round-trips and none can forge a block), and the session content model — [`Turn`],
//! [`ContentBlock`] — is how it persists (serde JSON, see `docs/WIRE.md`).
//!
//! For hosts, [`events_from_turns`] replays a stored session as [`StreamEvent`]s,
//! turning each block back into a structured event instead of raw XML, [`Banner`]
//! renders the one-line `⌁ bash_1 exited (0) 4.2s PATH` a transcript shows for it, and
//! [`Painter`] paints whole transcripts for a terminal. The context types these take
//! ([`TaskExitInfo`], [`TaskId`], …) are re-exported. The `testing` feature adds
//! `insta` filters so hosts can snapshot all of this stably.
//!
//! Nothing here is async: the crate takes `zidane-context` without its `runtime`
//! feature, so it builds without tokio or any other runtime.
//!
//! ```
//! use std::time::Duration;
//! use zidane_wire::{
//!     events_from_turns, parse, Banner, ContentBlock, Signal, StreamEvent, TaskExitInfo,
//!     TaskId, TaskNotification, TaskStatus, Tone, Turn, WireBlock,
//! };
//!
//! let exit = TaskExitInfo::new(
//!     TaskId::from_number(1),
//!     "npm run dev",
//!     "/tmp/tasks/bash_1.20260523-024147-123.log",
//!     TaskStatus::Killed,
//!     143,
//!     Duration::from_millis(1200),
//! )
//! .signal(Signal::TERM);
//! let notification = TaskNotification::from_exit(&exit);
//! assert_eq!(notification.summary, "npm run dev (1.2s) — killed (SIGTERM)");
//!
//! // The model reads the block; parsing gives the same value back.
//! let xml = notification.render();
//! assert!(xml.starts_with("<task-notification>\n<task-id>bash_1</task-id>\n"));
//! assert_eq!(parse(&xml)?, vec![WireBlock::Notification(notification.clone())]);
//!
//! // A host replaying the session paints a banner, not the XML.
//! let session = vec![Turn::user(vec![
//!     ContentBlock::text(xml),
//!     ContentBlock::text("What happened?"),
//! ])];
//! let events = events_from_turns(&session);
//! assert_eq!(events[0], StreamEvent::TaskNotification(notification.clone()));
//! let banner = Banner::for_notification(&notification);
//! assert_eq!(banner.tone, Tone::Error);
//! assert!(banner.text.starts_with("⌁ bash_1 killed (SIGTERM) 1.2s /tmp/tasks/"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Snapshot tests of a host, with the `testing` feature:
//!
//! ```
//! # #[cfg(feature = "testing")] {
//! let _guard = zidane_wire::testing::settings().bind_to_scope();
//! insta::assert_snapshot!(
//!     "⌁ bash_3 exited (1) 2m 03s /home/u/tasks/bash_3.20260523-024147-123.log",
//!     @"⌁ bash_3 exited (1) [DURATION] [LOG bash_3]"
//! );
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use banner::{Banner, TASK_GLYPH, TOOL_GLYPH, Tone, file_url};
pub use error::WireError;
pub use event::{EventLine, MoreLines, TaskEventBlock};
pub use notification::{TaskNotification, kill_reason_text};
pub use paint::{MAX_RESULT_LINES, Painter};
pub use parse::{WireBlock, is_wire_block, parse};
pub use replay::{StreamEvent, events_from_turn, events_from_turns};
pub use stall::{STALL_HINT, STALL_INPUT_HINT, STALL_TERMINAL_HINT, TaskStall};
pub use summary::{command_preview, exit_summary, format_duration};
pub use tool_spec::{ToolAnnotations, ToolSpec};
pub use turn::{ContentBlock, Role, Turn};
/// The context types this crate's functions take and give, re-exported so that a host
/// (or a snapshot test) needs no `zidane-context` dependency of its own.
pub use zidane_context::{KillReason, Signal, StallInfo, TaskExitInfo, TaskId, TaskStatus};

#[cfg(any(test, feature = "testing"))]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

mod banner;
mod cursor;
mod error;
mod escape;
mod event;
mod notification;
mod paint;
mod parse;
mod replay;
mod stall;
mod summary;
mod tool_spec;
mod turn;

/// This crate's README, run as a doc test: its example compiles with `zidane-wire`
/// alone.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
