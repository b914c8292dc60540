//! How a host paints a transcript: one block per stream event, and a `⌁` banner (from
//! `zidane::wire::Banner`) for a task that ended — never the raw XML. Shared by the
//! `quickstart` (live events) and `replay` (a stored session) examples, which is the
//! point: both paint the same thing.

// Each example uses only part of the painter.
#![allow(dead_code)]

use std::io::IsTerminal;

use zidane::wire::{Banner, StreamEvent, TASK_GLYPH};

/// Lines of a tool result shown before the rest is summarised.
const MAX_RESULT_LINES: usize = 12;

/// Paints transcript events to stdout, in colour on a terminal.
#[derive(Debug, Clone, Copy)]
pub struct Painter {
    colour: bool,
}

impl Painter {
    /// A painter for stdout; colour only on a terminal and without `NO_COLOR`.
    pub fn stdout() -> Self {
        Self {
            colour: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// One event as the lines a host shows for it.
    pub fn event(&self, event: &StreamEvent) {
        match event {
            StreamEvent::UserText { text } => self.block("you", "›", text),
            StreamEvent::AssistantText { text } => self.block("model", "›", text),
            StreamEvent::ToolCall { name, input, .. } => {
                self.block("model", "→", &format!("{name} {input}"));
            }
            StreamEvent::ToolResult {
                content, is_error, ..
            } => {
                let label = if *is_error { "error" } else { "tool" };
                self.block(label, "←", &shorten(content));
            }
            StreamEvent::TaskNotification(notification) => {
                let banner = Banner::for_notification(notification);
                let line = if self.colour {
                    banner.ansi()
                } else {
                    banner.text
                };
                println!("{line}");
            }
            StreamEvent::TaskStall(stall) => {
                println!(
                    "{TASK_GLYPH} {} quiet for {} ms {}",
                    stall.task_id, stall.stalled_for_ms, stall.output_file
                );
            }
        }
    }

    /// A line of the host's own narration (not part of the transcript).
    pub fn note(&self, text: &str) {
        if self.colour {
            println!("\x1b[2m·· {text}\x1b[0m");
        } else {
            println!("·· {text}");
        }
    }

    /// A section heading.
    pub fn heading(&self, text: &str) {
        if self.colour {
            println!("\n\x1b[1m── {text}\x1b[0m");
        } else {
            println!("\n── {text}");
        }
    }

    fn block(&self, who: &str, arrow: &str, text: &str) {
        let mut lines = text.lines();
        let first = lines.next().unwrap_or_default();
        println!("{who:>6} {arrow} {first}");
        for line in lines {
            println!("{:>6}   {line}", "");
        }
    }
}

/// The first lines of a long tool result, and how many were left out.
fn shorten(content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    if lines.len() <= MAX_RESULT_LINES {
        return content.to_owned();
    }
    let mut shown = lines[..MAX_RESULT_LINES - 1].join("\n");
    shown.push_str(&format!(
        "\n… ({} more lines)",
        lines.len() - (MAX_RESULT_LINES - 1)
    ));
    shown
}
