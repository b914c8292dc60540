//! Drawing [`Top`]: a title with the counts and the last action's note, the tasks'
//! table (a CPU sparkline in each row, the selected row marked and highlighted), the
//! selected task's log, and the keys. The live view and `--once` draw the same frame:
//! `--once` renders it into a buffer ([`render`]) and prints that as text
//! ([`frame_text`]).
//!
//! A narrow terminal drops columns rather than cutting every one: the session first,
//! then the history, the host, the age, the memory, the CPU; the command takes what is
//! left. A short one gives the table its rows and the log what remains.

use crossterm::Command as _;
use crossterm::style::{Attribute, SetAttribute, SetBackgroundColor, SetForegroundColor};
use ratatui::Frame;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline, SparklineBar};
use zidane::wire::{Tone, command_preview};

use super::state::{Mode, Task, Top};
use crate::interactive::wrap;
use crate::listing::{age, mebibytes};

/// The fewest rows the log keeps (its title and two lines) while the table grows, when
/// the terminal has them.
const LOG_MIN_ROWS: u16 = 3;

/// The fewest columns the command is given before other columns are dropped.
const MIN_COMMAND: u16 = 12;

/// Columns of the history on a wide terminal, and on a narrower one.
const HISTORY_WIDE: u16 = 20;
const HISTORY_NARROW: u16 = 10;

/// The terminal width from which the history is wide.
const WIDE: u16 = 100;

/// The mark before the selected row (its highlight does not show in plain text).
const MARK: &str = "›";

/// Columns before the first cell: the mark and a space.
const MARK_COLUMNS: u16 = 2;

/// The keys, as the footer says them; on a narrow terminal, those that act.
const KEYS: &str = "↑↓ select · x stop · a attach · l log · / filter · q quit";
const KEYS_SHORT: &str = "x stop · a attach · l log · / filter · q quit";

/// A column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Id,
    State,
    Host,
    Session,
    Age,
    Cpu,
    Mem,
    History,
    Command,
}

impl Column {
    fn heading(self) -> &'static str {
        match self {
            Self::Id => "ID",
            Self::State => "STATE",
            Self::Host => "HOST",
            Self::Session => "SESSION",
            Self::Age => "AGE",
            Self::Cpu => "CPU",
            Self::Mem => "MEM",
            Self::History => "HISTORY",
            Self::Command => "COMMAND",
        }
    }

    /// Whether its cells are numbers, aligned right.
    fn numeric(self) -> bool {
        matches!(self, Self::Age | Self::Cpu | Self::Mem)
    }

    /// The text of its cell for `task` (the history is drawn, not written).
    fn cell(self, task: &Task, top: &Top) -> String {
        let row = &task.row;
        match self {
            Self::Id => row.id.clone(),
            Self::State => row.state.clone(),
            Self::Host => row.host.clone(),
            Self::Session => row.session.clone(),
            Self::Age => age(row.started_at, top.now),
            Self::Cpu => task
                .cpu_percent()
                .map_or_else(|| "-".to_owned(), |percent| format!("{percent}%")),
            Self::Mem => row
                .usage
                .map_or_else(|| "-".to_owned(), |usage| mebibytes(usage.rss_bytes)),
            Self::History => String::new(),
            Self::Command => command_preview(&row.command),
        }
    }
}

/// Draws the whole view.
pub fn draw(frame: &mut Frame<'_>, top: &Top) {
    let [title, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let shown = top.shown();
    let wanted = 1 + u16::try_from(shown.len().max(1)).unwrap_or(u16::MAX);
    let log_min = LOG_MIN_ROWS.min(body.height.saturating_sub(2));
    let table_height = wanted.min(body.height - log_min);
    let [table, log] =
        Layout::vertical([Constraint::Length(table_height), Constraint::Min(0)]).areas(body);
    frame.render_widget(Paragraph::new(title_line(top, shown.len())), title);
    draw_table(frame, table, top, &shown);
    draw_log(frame, log, top);
    draw_footer(frame, footer, top);
}

/// The frame of `top` on a terminal of `width` by `height`.
pub fn render(top: &Top, width: u16, height: u16) -> std::io::Result<Buffer> {
    let mut terminal = Terminal::new(TestBackend::new(width, height))?;
    terminal.draw(|frame| draw(frame, top))?;
    Ok(terminal.backend().buffer().clone())
}

/// A frame as text, one line per row, trailing blanks cut; with `colour`, its styles
/// as ANSI SGR sequences. A wide character's second cell is not a character of its own.
pub fn frame_text(buffer: &Buffer, colour: bool) -> String {
    let mut text = String::new();
    for y in 0..buffer.area.height {
        let shows = |x: u16| {
            let cell = &buffer[(x, y)];
            cell.symbol() != " "
                || (colour
                    && (cell.bg != Color::Reset || cell.modifier.contains(Modifier::REVERSED)))
        };
        let end = (0..buffer.area.width)
            .rev()
            .find(|x| shows(*x))
            .map_or(0, |x| x + 1);
        let plain = (Color::Reset, Color::Reset, Modifier::empty());
        let mut current = plain;
        let mut x = 0;
        while x < end {
            let cell = &buffer[(x, y)];
            let look = (cell.fg, cell.bg, cell.modifier);
            if colour && look != current {
                push_sgr(&mut text, look);
                current = look;
            }
            let symbol = cell.symbol();
            text.push_str(symbol);
            x += u16::try_from(wrap::columns(symbol)).unwrap_or(1).max(1);
        }
        if current != plain {
            text.push_str("\x1b[0m");
        }
        text.push('\n');
    }
    text
}

/// Resets the style, then sets `look`'s colours and modifiers.
fn push_sgr(text: &mut String, (fg, bg, modifier): (Color, Color, Modifier)) {
    text.push_str("\x1b[0m");
    // Writing into a String cannot fail.
    if fg != Color::Reset {
        let _ = SetForegroundColor(fg.into()).write_ansi(text);
    }
    if bg != Color::Reset {
        let _ = SetBackgroundColor(bg.into()).write_ansi(text);
    }
    for (flag, attribute) in [
        (Modifier::BOLD, Attribute::Bold),
        (Modifier::DIM, Attribute::Dim),
        (Modifier::ITALIC, Attribute::Italic),
        (Modifier::UNDERLINED, Attribute::Underlined),
        (Modifier::REVERSED, Attribute::Reverse),
        (Modifier::CROSSED_OUT, Attribute::CrossedOut),
    ] {
        if modifier.contains(flag) {
            let _ = SetAttribute(attribute).write_ansi(text);
        }
    }
}

fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

fn tone_style(tone: Tone) -> Style {
    match tone {
        Tone::Dim => dim(),
        Tone::Warn => Style::new().fg(Color::Yellow),
        Tone::Error => Style::new().fg(Color::Red),
    }
}

/// `zidane top · 3 tasks, 2 running`, the filter and how many it shows, the note.
fn title_line(top: &Top, shown: usize) -> Line<'static> {
    let running = top.tasks.iter().filter(|task| task.running()).count();
    let total = top.tasks.len();
    let mut spans = vec![
        Span::styled("zidane top", Style::new().add_modifier(Modifier::BOLD)),
        Span::styled(" · ", dim()),
        Span::raw(format!(
            "{total} task{}, {running} running",
            if total == 1 { "" } else { "s" }
        )),
    ];
    if !top.filter.trim().is_empty() {
        spans.push(Span::styled(" · ", dim()));
        spans.push(Span::styled(
            format!("filter {:?}: {shown} shown", top.filter.trim()),
            Style::new().fg(Color::Cyan),
        ));
    }
    if let Some((note, tone)) = &top.note {
        spans.push(Span::styled(" · ", dim()));
        spans.push(Span::styled(note.clone(), tone_style(*tone)));
    }
    Line::from(spans)
}

/// The columns that fit `width`, each with its width, in order.
fn columns(width: u16, shown: &[&Task], top: &Top) -> Vec<(Column, u16)> {
    let fit = |column: Column, least: u16, most: u16| {
        let widest = shown
            .iter()
            .map(|task| wrap::columns(&column.cell(task, top)))
            .chain([wrap::columns(column.heading())])
            .max()
            .unwrap_or_default();
        u16::try_from(widest).unwrap_or(most).clamp(least, most)
    };
    let mut columns = vec![
        (Column::Id, fit(Column::Id, 2, 16)),
        (Column::State, fit(Column::State, 5, 10)),
        (Column::Host, fit(Column::Host, 4, 12)),
        (Column::Session, fit(Column::Session, 7, 20)),
        (Column::Age, fit(Column::Age, 3, 4)),
        (Column::Cpu, fit(Column::Cpu, 3, 5)),
        (Column::Mem, fit(Column::Mem, 3, 8)),
        (
            Column::History,
            if width >= WIDE {
                HISTORY_WIDE
            } else {
                HISTORY_NARROW
            },
        ),
    ];
    // What goes first when the command would be cut short.
    let dropped = [
        Column::Session,
        Column::History,
        Column::Host,
        Column::Age,
        Column::Mem,
        Column::Cpu,
        Column::State,
    ];
    let used = |columns: &[(Column, u16)]| -> u16 {
        MARK_COLUMNS + columns.iter().map(|(_, width)| width + 1).sum::<u16>()
    };
    for column in dropped {
        if used(&columns) + MIN_COMMAND <= width {
            break;
        }
        columns.retain(|(kept, _)| *kept != column);
    }
    let rest = width.saturating_sub(used(&columns));
    if rest > 0 {
        columns.push((Column::Command, rest));
    }
    columns
}

fn draw_table(frame: &mut Frame<'_>, area: Rect, top: &Top, shown: &[&Task]) {
    if area.height == 0 {
        return;
    }
    let columns = columns(area.width, shown, top);
    let heading = Style::new().add_modifier(Modifier::BOLD);
    let buffer = frame.buffer_mut();
    let mut x = area.x + MARK_COLUMNS;
    for (column, width) in &columns {
        put(
            buffer,
            x,
            area.y,
            *width,
            column.heading(),
            column.numeric(),
            heading,
        );
        x += width + 1;
    }
    let rows = usize::from(area.height - 1);
    if shown.is_empty() {
        let empty = if top.filter.trim().is_empty() {
            "no tasks: none running or ended untold for this user".to_owned()
        } else {
            format!(
                "no task matches {:?} (/ then esc clears it)",
                top.filter.trim()
            )
        };
        if rows > 0 {
            put(
                buffer,
                area.x + MARK_COLUMNS,
                area.y + 1,
                area.width,
                &empty,
                false,
                dim(),
            );
        }
        return;
    }
    // The selected row stays in sight: the list scrolls once it passes the last row.
    let selected = top.selected_index();
    let skip = selected.map_or(0, |at| (at + 1).saturating_sub(rows));
    for (offset, task) in shown.iter().skip(skip).take(rows).enumerate() {
        let y = area.y + 1 + u16::try_from(offset).unwrap_or(0);
        let row_style = if task.running() { Style::new() } else { dim() };
        let is_selected = selected == Some(skip + offset);
        if is_selected {
            put(buffer, area.x, y, 1, MARK, false, Style::new());
        }
        let mut x = area.x + MARK_COLUMNS;
        for (column, width) in &columns {
            let cell = Rect::new(x, y, *width, 1);
            match column {
                Column::History => draw_history(buffer, cell, task),
                Column::State => {
                    let text = column.cell(task, top);
                    put(
                        buffer,
                        x,
                        y,
                        *width,
                        &text,
                        false,
                        state_style(&task.row.state),
                    );
                }
                _ => {
                    let text = column.cell(task, top);
                    put(buffer, x, y, *width, &text, column.numeric(), row_style);
                }
            }
            x += width + 1;
        }
        if is_selected {
            buffer.set_style(
                Rect::new(area.x, y, area.width, 1),
                Style::new().add_modifier(Modifier::REVERSED),
            );
        }
    }
}

/// The style of a state: running green, a clean exit dim, another yellow, a kill red.
fn state_style(state: &str) -> Style {
    match state {
        "running" => Style::new().fg(Color::Green),
        "exited 0" => dim(),
        "killed" | "lost" => Style::new().fg(Color::Red),
        _ => Style::new().fg(Color::Yellow),
    }
}

/// Writes `text` in a cell of `width` columns at `(x, y)`, cut with `…` when longer,
/// aligned right when `right`.
fn put(buffer: &mut Buffer, x: u16, y: u16, width: u16, text: &str, right: bool, style: Style) {
    let text = wrap::truncate(text, usize::from(width));
    let pad = if right {
        width.saturating_sub(u16::try_from(wrap::columns(&text)).unwrap_or(width))
    } else {
        0
    };
    buffer.set_stringn(x + pad, y, text, usize::from(width - pad), style);
}

/// The task's CPU history as a sparkline, newest at the right: a running task's idle
/// reading is the lowest bar, a reading where it did not run is blank.
fn draw_history(buffer: &mut Buffer, cell: Rect, task: &Task) {
    let width = usize::from(cell.width);
    let newest = task.history.len().saturating_sub(width);
    let mut bars: Vec<SparklineBar> =
        vec![SparklineBar::from(None); width.saturating_sub(task.history.len())];
    bars.extend(task.history.iter().skip(newest).map(|percent| {
        SparklineBar::from(percent.map(|percent| 1 + u64::from(percent.min(100)) * 7 / 100))
    }));
    ratatui::widgets::Widget::render(
        Sparkline::default()
            .data(bars)
            .max(8)
            .style(Style::new().fg(Color::Green)),
        cell,
        buffer,
    );
}

/// The selected task's log: a rule naming the task, where it runs and who started it,
/// then its last lines.
fn draw_log(frame: &mut Frame<'_>, area: Rect, top: &Top) {
    if area.height == 0 {
        return;
    }
    let Some(task) = top.selected_task() else {
        frame.render_widget(Block::new().borders(Borders::TOP).border_style(dim()), area);
        return;
    };
    let row = &task.row;
    let mut about = format!(" {} · {}", row.id, row.host);
    if !row.session.is_empty() {
        about.push_str(&format!(" {}", row.session));
    }
    about.push_str(&format!(" · {} ", row.cwd.display()));
    let about = wrap::truncate(&about, usize::from(area.width.saturating_sub(2)));
    let block = Block::new()
        .borders(Borders::TOP)
        .border_style(dim())
        .title(Line::from(vec![
            Span::styled("─", dim()),
            Span::styled(about, Style::new().add_modifier(Modifier::BOLD)),
        ]));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let lines: Vec<Line<'_>> = if top.log.id != row.id {
        vec![Line::styled("reading its log…", dim())]
    } else if let Some(missing) = &top.log.missing {
        vec![Line::styled(missing.clone(), dim())]
    } else {
        let skip = top
            .log
            .lines
            .len()
            .saturating_sub(usize::from(inner.height));
        top.log.lines[skip..]
            .iter()
            .map(|line| Line::raw(wrap::truncate(line, width)))
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The keys, or what the mode asks.
fn draw_footer(frame: &mut Frame<'_>, area: Rect, top: &Top) {
    let line = match &top.mode {
        Mode::Browse if wrap::columns(KEYS) <= usize::from(area.width) => Line::styled(KEYS, dim()),
        Mode::Browse => Line::styled(KEYS_SHORT, dim()),
        Mode::Filter => {
            let typed = format!("filter: {}", top.filter);
            let column = u16::try_from(wrap::columns(&typed)).unwrap_or(area.width);
            frame.set_cursor_position((area.x + column.min(area.width), area.y));
            Line::from(vec![
                Span::styled(typed, Style::new().fg(Color::Cyan)),
                Span::styled(
                    " · a path (/, ~, .) or text · enter keeps · esc clears",
                    dim(),
                ),
            ])
        }
        Mode::Confirm { id } => {
            let command = top
                .tasks
                .iter()
                .find(|task| &task.row.id == id)
                .map(|task| command_preview(&task.row.command))
                .unwrap_or_default();
            // The question first: on a narrow terminal the command is what is cut.
            Line::styled(
                format!("stop {id}? y stops it, any other key keeps it · {command}"),
                Style::new().fg(Color::Yellow),
            )
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
