//! Drawing the [`App`]: the transcript (bottom-anchored, only the lines that fit are
//! laid out, wrapped at words by display width), the input line, the footer, and the `ctrl+k` picker over them;
//! or, attached to a task, its terminal between a title and the transcript's newest line.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use zidane::context::TtySize;
use zidane::wire::{Tone, format_duration};

use super::keys::DETACH_KEY;
use super::state::{App, Attached, Entry, Look};
use super::wrap;

/// Rows of the attached screen that are not the task's terminal: the title, the
/// transcript's newest line, the footer.
const ATTACHED_CHROME: u16 = 3;

/// A banner's log path on screen, to be re-painted as an OSC 8 link after the frame
/// (ratatui's cells cannot carry the escape sequence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSpot {
    /// Column of the path's first character.
    pub x: u16,
    /// Row.
    pub y: u16,
    /// The path as painted.
    pub text: String,
    /// The `file://` URL it opens.
    pub url: String,
    /// The banner's tone, painted again with the link.
    pub tone: Tone,
}

/// The style of an entry's lines.
pub fn style(look: Look) -> Style {
    match look {
        Look::User => Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        Look::Assistant => Style::new(),
        Look::ToolCall => Style::new().fg(Color::Magenta),
        Look::ToolResult | Look::Note => Style::new().add_modifier(Modifier::DIM),
        Look::ToolError | Look::Error => Style::new().fg(Color::Red),
        Look::Banner(tone) => tone_style(tone),
    }
}

/// The style of a tone, as the wire's [`Tone::sgr`] paints it: dim, yellow, red.
pub fn tone_style(tone: Tone) -> Style {
    match tone {
        Tone::Dim => Style::new().add_modifier(Modifier::DIM),
        Tone::Warn => Style::new().fg(Color::Yellow),
        Tone::Error => Style::new().fg(Color::Red),
    }
}

/// Draws the whole screen; returns where banner paths landed.
pub fn draw(frame: &mut Frame<'_>, app: &App) -> Vec<LinkSpot> {
    if let Some(attached) = &app.attached {
        draw_attached(frame, app, attached);
        return Vec::new();
    }
    let [transcript, rule, input, footer] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let links = draw_transcript(frame, transcript, app);
    frame.render_widget(
        Paragraph::new("─".repeat(usize::from(rule.width)))
            .style(Style::new().add_modifier(Modifier::DIM)),
        rule,
    );
    if app.approval.is_some() {
        let question = "run it outside the sandbox? [y/N] ";
        frame.render_widget(
            Paragraph::new(Span::styled(question, Style::new().fg(Color::Yellow))),
            input,
        );
        let column = u16::try_from(question.chars().count()).unwrap_or(0);
        frame.set_cursor_position((input.x + column.min(input.width), input.y));
    } else {
        let (shown, column) = app.input.window(usize::from(input.width).saturating_sub(3));
        let prompt = Line::from(vec![
            Span::styled("› ", Style::new().fg(Color::Cyan)),
            Span::raw(shown),
        ]);
        frame.render_widget(Paragraph::new(prompt), input);
        frame.set_cursor_position((input.x + 2 + u16::try_from(column).unwrap_or(0), input.y));
    }
    frame.render_widget(Paragraph::new(footer_line(app)), footer);
    if app.picker.is_some() {
        draw_picker(frame, transcript, app);
        // Links under the picker would show through it.
        return links
            .into_iter()
            .filter(|spot| !picker_area(transcript, app).contains((spot.x, spot.y).into()))
            .collect();
    }
    links
}

/// The footer: model, session, run state, and the keys.
pub fn footer_line(app: &App) -> Line<'static> {
    let dim = Style::new().add_modifier(Modifier::DIM);
    let state = if app.quit_armed {
        Span::styled("press ctrl+c again to quit", Style::new().fg(Color::Yellow))
    } else if app.running {
        Span::styled("running · esc abort", Style::new().fg(Color::Green))
    } else if app.suppressed {
        Span::styled(
            "wake-ups paused until your next prompt",
            Style::new().fg(Color::Yellow),
        )
    } else {
        Span::styled("idle", dim)
    };
    if let Some(attached) = &app.attached {
        // The way back comes first: on a narrow screen the rest is cut, not it.
        let state = if app.running {
            Span::styled("running", Style::new().fg(Color::Green))
        } else {
            state
        };
        let back = match attached.gone {
            None => format!("{DETACH_KEY} detach"),
            Some(_) => "any key returns".to_owned(),
        };
        return Line::from(vec![
            Span::styled(back, Style::new().fg(Color::Yellow)),
            Span::styled(" · ", dim),
            Span::styled(format!("attached to {}", attached.task_id), dim),
            Span::styled(" · ", dim),
            state,
            Span::styled(" · ", dim),
            Span::styled(
                app.model_name.clone(),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::styled(" · ", dim),
            Span::styled(app.session_id.clone(), dim),
        ]);
    }
    let chip = if app.in_flight > 0 {
        Span::styled(
            format!("ctrl+k cancel ({})", app.in_flight),
            Style::new().fg(Color::Yellow),
        )
    } else {
        Span::styled("ctrl+k cancel", dim)
    };
    let mut spans = vec![
        Span::styled(
            app.model_name.clone(),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::styled(" · ", dim),
        Span::styled(app.session_id.clone(), dim),
        Span::styled(" · ", dim),
        state,
        Span::styled(" · ", dim),
        chip,
    ];
    spans.push(Span::styled(" · ctrl+d quit", dim));
    if app.running && app.in_flight > 0 {
        // A foreground command in flight can be moved to the background.
        spans.push(Span::styled(" · ctrl+b background", dim));
    }
    Line::from(spans)
}

/// One visual line of the transcript: its text, style, and a link in it.
struct Row<'a> {
    text: String,
    style: Style,
    link: Option<(&'a str, Tone, usize)>,
}

fn draw_transcript(frame: &mut Frame<'_>, area: Rect, app: &App) -> Vec<LinkSpot> {
    let width = usize::from(area.width).max(1);
    let wanted = usize::from(area.height) + app.scroll;
    let streaming = app.streaming.as_ref().map(|text| Entry {
        look: Look::Assistant,
        lines: zidane::wire::Painter::plain()
            .event(&zidane::wire::StreamEvent::AssistantText { text: text.clone() })
            .lines()
            .map(str::to_owned)
            .collect(),
        link: None,
    });
    // Lay out entries from the newest back, only until the screen (and the scroll) is
    // full: a resumed session of any length draws in the same time.
    let mut rows: Vec<Row<'_>> = Vec::new();
    for entry in streaming.iter().chain(app.entries.iter().rev()) {
        let mut block = Vec::new();
        for line in &entry.lines {
            if entry.look == Look::ToolCall {
                // A call's input can be long: one row of it, the session has the rest.
                block.push(Row {
                    text: wrap::truncate(line, width),
                    style: style(entry.look),
                    link: None,
                });
                continue;
            }
            let wrapped = wrap::wrap(line, width);
            let last = wrapped.len() - 1;
            for (index, text) in wrapped.into_iter().enumerate() {
                // The path ends the banner's line: a link where its last row shows it whole.
                let link = match (&entry.look, &entry.link) {
                    (Look::Banner(tone), Some(path))
                        if index == last && text.ends_with(path.as_str()) =>
                    {
                        let column = wrap::columns(&text[..text.len() - path.len()]);
                        Some((path.as_str(), *tone, column))
                    }
                    _ => None,
                };
                block.push(Row {
                    text,
                    style: style(entry.look),
                    link,
                });
            }
        }
        rows.extend(block.into_iter().rev());
        if rows.len() >= wanted {
            break;
        }
    }
    let skip = app
        .scroll
        .min(rows.len().saturating_sub(usize::from(area.height)));
    let visible: Vec<Row<'_>> = rows
        .into_iter()
        .skip(skip)
        .take(usize::from(area.height))
        .collect();
    let top = area.y + area.height - u16::try_from(visible.len()).unwrap_or(area.height);
    let mut links = Vec::new();
    let mut lines = Vec::new();
    for (offset, row) in visible.iter().rev().enumerate() {
        if let Some((path, tone, column)) = row.link
            && path.starts_with('/')
        {
            links.push(LinkSpot {
                x: area.x + u16::try_from(column).unwrap_or(0),
                y: top + u16::try_from(offset).unwrap_or(0),
                text: path.to_owned(),
                url: zidane::wire::file_url(path),
                tone,
            });
        }
        lines.push(Line::styled(row.text.clone(), row.style));
    }
    let used = Rect {
        y: top,
        height: u16::try_from(lines.len()).unwrap_or(0),
        ..area
    };
    frame.render_widget(Paragraph::new(lines), used);
    links
}

/// The size of the task's terminal that fills a screen of `width` by `height` when
/// attached (what the task is resized to).
pub fn attached_terminal_size(width: u16, height: u16) -> TtySize {
    TtySize::new(height.saturating_sub(ATTACHED_CHROME).max(1), width.max(1))
}

/// The attached screen: a title naming the task and the detach key, the task's
/// terminal, the transcript's newest line (so a banner or the model's answer shows
/// while attached), the footer.
fn draw_attached(frame: &mut Frame<'_>, app: &App, attached: &Attached) {
    let [title, terminal, news, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    // The way back sits at the right, whole; the command is cut to what is left.
    let width = usize::from(title.width);
    let state = match &attached.gone {
        None => format!(" {DETACH_KEY} detaches "),
        Some(reason) => format!(" {reason} · any key returns "),
    };
    let state = wrap::truncate(&state, width);
    let room = width.saturating_sub(wrap::columns(&state));
    let task = wrap::truncate(
        &format!(" ⌁ {} · {}", attached.task_id, attached.label),
        room,
    );
    let padding = room.saturating_sub(wrap::columns(&task));
    frame.render_widget(
        Paragraph::new(format!("{task}{}{state}", " ".repeat(padding)))
            .style(Style::new().add_modifier(Modifier::REVERSED)),
        title,
    );
    match &attached.screen {
        None => frame.render_widget(
            Paragraph::new(Line::styled(
                format!("reading {}'s terminal…", attached.task_id),
                Style::new().add_modifier(Modifier::DIM),
            )),
            terminal,
        ),
        Some(screen) => {
            // A terminal taller than the area shows the rows down to its cursor.
            let (cursor_row, cursor_col) = screen.cursor;
            let top = (cursor_row + 1).saturating_sub(terminal.height);
            let lines: Vec<Line<'_>> = screen
                .lines
                .iter()
                .skip(usize::from(top))
                .take(usize::from(terminal.height))
                .map(|line| Line::raw(line.as_str()))
                .collect();
            // Not wrapped: a row wider than the area is cut, as a terminal would.
            frame.render_widget(Paragraph::new(lines), terminal);
            let row = cursor_row.saturating_sub(top);
            if attached.gone.is_none() && row < terminal.height && cursor_col < terminal.width {
                frame.set_cursor_position((terminal.x + cursor_col, terminal.y + row));
            }
        }
    }
    frame.render_widget(
        Paragraph::new(newest_line(app, usize::from(news.width))),
        news,
    );
    frame.render_widget(Paragraph::new(footer_line(app)), footer);
}

/// The transcript's newest entry on one line, cut to `width`: the model's text as it
/// streams, else the first line of the last entry (a banner, the model's answer with
/// its `model ›`), in its look.
fn newest_line(app: &App, width: usize) -> Line<'static> {
    let newest = match &app.streaming {
        Some(text) => Entry {
            look: Look::Assistant,
            lines: zidane::wire::Painter::plain()
                .event(&zidane::wire::StreamEvent::AssistantText { text: text.clone() })
                .lines()
                .map(str::to_owned)
                .collect(),
            link: None,
        },
        None => match app.entries.last() {
            Some(entry) => entry.clone(),
            None => return Line::default(),
        },
    };
    let text = newest.lines.first().map_or("", String::as_str);
    Line::styled(wrap::truncate(text, width), style(newest.look))
}

/// Where the picker sits: centred over the transcript.
fn picker_area(transcript: Rect, app: &App) -> Rect {
    let rows = app.picker.as_ref().map_or(1, |picker| {
        picker.rows.iter().map(row_height).sum::<usize>().max(1)
    });
    let height = u16::try_from(rows + 3)
        .unwrap_or(u16::MAX)
        .min(transcript.height);
    let width = transcript
        .width
        .saturating_sub(4)
        .max(10)
        .min(transcript.width);
    Rect {
        x: transcript.x + (transcript.width - width) / 2,
        y: transcript.y + (transcript.height - height) / 2,
        width,
        height,
    }
}

/// Lines of a picker row: a task shows its log on a second line.
fn row_height(row: &zidane::agent::PickerRow) -> usize {
    1 + usize::from(row.log_path.is_some())
}

fn draw_picker(frame: &mut Frame<'_>, transcript: Rect, app: &App) {
    let Some(picker) = &app.picker else { return };
    let area = picker_area(transcript, app);
    let block = Block::new()
        .borders(Borders::ALL)
        .title(" ctrl+k · enter cancels a call / kills a task · esc closes ");
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let mut lines = Vec::new();
    if picker.rows.is_empty() {
        lines.push(Line::styled(
            "nothing running: no tool call in flight, no background task",
            Style::new().add_modifier(Modifier::DIM),
        ));
    }
    for (index, row) in picker.rows.iter().enumerate() {
        let text = format!(
            "{} {:<8} {:>6}  {}{}",
            row.glyph(),
            row.id,
            format_duration(row.runtime),
            if row.tty.is_some() { "[tty] " } else { "" },
            row.label
        );
        let selected = index == picker.selected;
        let style = if selected {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        lines.push(Line::styled(
            format!("{} {text}", if selected { "›" } else { " " }),
            style,
        ));
        if let Some(log) = &row.log_path {
            lines.push(Line::styled(
                format!("{:>19}log {}", "", log.display()),
                Style::new().add_modifier(Modifier::DIM),
            ));
        }
    }
    let footer = Rect {
        y: inner.y + inner.height.saturating_sub(1),
        height: 1,
        ..inner
    };
    frame.render_widget(
        Paragraph::new(lines),
        Rect {
            height: inner.height.saturating_sub(1),
            ..inner
        },
    );
    let hint = if picker.rows.iter().any(|row| row.tty.is_some()) {
        "↑/↓ choose · a attaches to a [tty] task"
    } else {
        "↑/↓ choose"
    };
    frame.render_widget(
        Paragraph::new(Line::styled(hint, Style::new().add_modifier(Modifier::DIM))),
        footer,
    );
}

#[cfg(test)]
#[path = "view_tests.rs"]
pub(crate) mod tests;
