//! Entering and leaving the terminal's interactive mode — raw input, the alternate
//! screen — so that it is restored however the session ends: a normal quit (the guard's
//! drop), a panic (a hook that restores before the message is printed), or a signal
//! (the loop quits through the same path as `ctrl+d`).

use std::io::{Stdout, Write as _, stdout};

use crossterm::cursor::{MoveTo, RestorePosition, SavePosition, Show};
use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::style::{Attribute, Color as TermColor, Print, SetAttribute, SetForegroundColor};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{execute, queue};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use zidane::wire::Tone;

use super::event_loop::Surface;
use super::state::App;
use super::view::LinkSpot;

/// The terminal in interactive mode; dropping it restores the terminal.
pub struct Screen {
    /// The ratatui terminal.
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    /// Enters raw mode and the alternate screen, and installs the panic hook.
    pub fn enter() -> std::io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        // Bracketed paste: a pasted line break must not send the prompt.
        if let Err(error) = execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste) {
            restore();
            return Err(error);
        }
        match Terminal::new(CrosstermBackend::new(stdout())) {
            Ok(terminal) => Ok(Self { terminal }),
            Err(error) => {
                restore();
                Err(error)
            }
        }
    }

    /// Enters interactive mode again after [`restore`] lent the terminal to another
    /// program (`zidane top`'s pager or `zidane attach`); the next draw repaints all.
    pub fn resume(&mut self) -> std::io::Result<()> {
        enable_raw_mode()?;
        execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste)?;
        self.terminal.clear()
    }

    /// Paints banner paths again over the frame, as OSC 8 links in their tone: the
    /// same characters, now clickable in terminals that support links.
    pub fn paint_links(&self, links: &[LinkSpot]) -> std::io::Result<()> {
        if links.is_empty() {
            return Ok(());
        }
        let mut out = stdout().lock();
        // Saved, not asked for: a position query would read stdin, the key stream's.
        queue!(out, SavePosition)?;
        for link in links {
            queue!(out, MoveTo(link.x, link.y))?;
            match link.tone {
                Tone::Dim => queue!(out, SetAttribute(Attribute::Dim))?,
                Tone::Warn => queue!(out, SetForegroundColor(TermColor::Yellow))?,
                Tone::Error => queue!(out, SetForegroundColor(TermColor::Red))?,
            }
            queue!(
                out,
                Print(format!(
                    "\x1b]8;;{}\x1b\\{}\x1b]8;;\x1b\\",
                    link.url, link.text
                )),
                SetAttribute(Attribute::Reset)
            )?;
        }
        // Put the cursor back where the frame left it (the input line).
        queue!(out, RestorePosition)?;
        out.flush()
    }
}

impl Surface for Screen {
    /// Draws the frame, then paints its banner paths as links.
    fn draw(&mut self, app: &App) -> std::io::Result<()> {
        let mut links = Vec::new();
        self.terminal
            .draw(|frame| links = super::view::draw(frame, app))?;
        self.paint_links(&links)
    }

    fn size(&self) -> std::io::Result<(u16, u16)> {
        let size = self.terminal.size()?;
        Ok((size.width, size.height))
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Leaves raw mode and the alternate screen, shows the cursor. Safe to call twice.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(stdout(), DisableBracketedPaste, LeaveAlternateScreen, Show);
}

/// Restores the terminal before a panic's message is printed, so it is readable and the
/// shell is usable.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
