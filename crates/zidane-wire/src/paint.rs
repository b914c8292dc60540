//! Painting a transcript for a terminal: one block of lines per [`StreamEvent`], a `⌁`
//! [`Banner`] for a task that ended — never the raw XML, unless asked for with
//! [`Painter::wire_block`].

use std::fmt::Write as _;
use std::io::IsTerminal;

use crate::banner::{Banner, TASK_GLYPH};
use crate::banner::{SGR_RESET, printable, printable_line};
use crate::replay::StreamEvent;
use crate::summary::format_duration;

/// Lines of a tool result shown before the rest is summarised.
pub const MAX_RESULT_LINES: usize = 12;

/// The ANSI sequence for dim text (notes, the raw blocks the model read).
const SGR_DIM: &str = "\x1b[2m";

/// The ANSI sequence for bold text (headings).
const SGR_BOLD: &str = "\x1b[1m";

/// Paints transcript events as the text a terminal shows: who speaks, an arrow, the
/// text; a tool result cut to its first [`MAX_RESULT_LINES`] lines; a `⌁` banner for
/// each ended task, coloured by its [`Tone`](crate::Tone) with the log path an OSC 8
/// link when [`colour`](Self::colour) is on.
///
/// Every method returns whole lines (each ending in `\n`), so a host prints or
/// collects them as it likes. Control characters in the painted text (a command's own
/// escape sequences, say) show as `U+FFFD`: printing a transcript can never drive the
/// terminal (tabs stay). Live events (an agent's stream) and a replayed session
/// ([`events_from_turns`](crate::events_from_turns)) paint the same.
///
/// ```
/// use zidane_wire::{Painter, StreamEvent};
///
/// let painter = Painter::plain();
/// let event = StreamEvent::ToolCall {
///     id: "call_1".into(),
///     name: "shell".into(),
///     input: serde_json::json!({ "command": "make", "run_in_background": true }),
/// };
/// assert_eq!(
///     painter.event(&event),
///     " model → shell {\"command\":\"make\",\"run_in_background\":true}\n"
/// );
/// assert_eq!(painter.note("idle"), "·· idle\n");
/// assert_eq!(Painter::coloured().note("idle"), "\x1b[2m·· idle\x1b[0m\n");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Painter {
    colour: bool,
    links: bool,
}

impl Painter {
    /// No colour, no links: plain text (logs, files, snapshot tests).
    pub const fn plain() -> Self {
        Self {
            colour: false,
            links: false,
        }
    }

    /// Colour and OSC 8 links.
    pub const fn coloured() -> Self {
        Self {
            colour: true,
            links: true,
        }
    }

    /// A painter for stdout: colour and links when it is a terminal and `NO_COLOR` is
    /// not set, else plain.
    pub fn for_stdout() -> Self {
        if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
            Self::coloured()
        } else {
            Self::plain()
        }
    }

    /// Turns OSC 8 links on or off (a terminal that shows them as garbage); colour
    /// stays as it is. Links are only ever painted with colour on.
    #[must_use]
    pub const fn with_links(mut self, links: bool) -> Self {
        self.links = links;
        self
    }

    /// Whether ANSI colour is painted.
    pub const fn colour(&self) -> bool {
        self.colour
    }

    /// Whether a banner's log path is painted as an OSC 8 link.
    pub const fn links(&self) -> bool {
        self.colour && self.links
    }

    /// The lines of one event.
    pub fn event(&self, event: &StreamEvent) -> String {
        match event {
            StreamEvent::UserText { text } => block("you", "›", text),
            StreamEvent::AssistantText { text } => block("model", "›", text),
            StreamEvent::ToolCall { name, input, .. } => {
                block("model", "→", &format!("{name} {input}"))
            }
            StreamEvent::ToolResult {
                content, is_error, ..
            } => {
                let label = if *is_error { "error" } else { "tool" };
                block(label, "←", &shorten(content))
            }
            StreamEvent::TaskNotification(notification) => {
                self.banner(&Banner::for_notification(notification))
            }
            StreamEvent::TaskStall(stall) => {
                let line = format!(
                    "{TASK_GLYPH} {} quiet for {} {}",
                    stall.task_id,
                    format_duration(stall.stalled_for()),
                    printable(&stall.output_file)
                );
                self.toned(crate::Tone::Warn.sgr(), &line)
            }
            StreamEvent::TaskEvent(event) => {
                self.toned(crate::Tone::Dim.sgr(), &printable(&event.banner_text()))
            }
        }
    }

    /// The lines of every event, in order.
    pub fn events<'a>(&self, events: impl IntoIterator<Item = &'a StreamEvent>) -> String {
        events.into_iter().map(|event| self.event(event)).collect()
    }

    /// A banner's line: coloured by its tone, the path a link when links are on.
    pub fn banner(&self, banner: &Banner) -> String {
        if self.links() {
            format!("{}\n", banner.ansi())
        } else {
            self.toned(banner.tone.sgr(), &banner.text)
        }
    }

    /// A line of the host's own narration, dimmed (not part of the transcript).
    pub fn note(&self, text: &str) -> String {
        self.toned(SGR_DIM, &format!("·· {text}"))
    }

    /// A section heading, after an empty line; bold.
    pub fn heading(&self, text: &str) -> String {
        format!("\n{}", self.toned(SGR_BOLD, &format!("── {text}")))
    }

    /// A raw `<task-notification>` or `<task-stall>` block exactly as the model read
    /// it, indented and dimmed — for a host that wants to show what the model was told
    /// (transcripts paint the banner instead).
    pub fn wire_block(&self, text: &str) -> String {
        let mut out = String::new();
        for line in text.lines() {
            out.push_str(&self.toned(SGR_DIM, &format!("{:>6}   {line}", "")));
        }
        out
    }

    /// `text` (one or more lines) in `sgr`, each line reset at its end.
    fn toned(&self, sgr: &str, text: &str) -> String {
        let mut out = String::new();
        for line in text.lines() {
            let line = printable_line(line);
            if self.colour {
                let _ = writeln!(out, "{sgr}{line}{SGR_RESET}");
            } else {
                let _ = writeln!(out, "{line}");
            }
        }
        out
    }
}

impl Default for Painter {
    /// [`Painter::plain`].
    fn default() -> Self {
        Self::plain()
    }
}

/// `who arrow first line`, the other lines indented under it.
fn block(who: &str, arrow: &str, text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut out = format!("{who:>6} {arrow} {}\n", printable_line(first));
    for line in lines {
        // No indent on an empty line: no trailing blanks.
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{:>6}   {}", "", printable_line(line));
        }
    }
    out
}

/// The first lines of a long tool result, and how many were left out.
fn shorten(content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    if lines.len() <= MAX_RESULT_LINES {
        return content.to_owned();
    }
    let mut shown = lines[..MAX_RESULT_LINES - 1].join("\n");
    let _ = write!(
        shown,
        "\n… ({} more lines)",
        lines.len() - (MAX_RESULT_LINES - 1)
    );
    shown
}
