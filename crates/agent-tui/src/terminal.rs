//! The terminal while the UI is up: raw mode, the alternate screen, bracketed paste, focus
//! changes reported (for notifications, `notify.rs`), mouse buttons and wheel reported (no
//! motion; Shift held selects text in most terminals), and the
//! keyboard protocol that reports Shift+Enter where the terminal has it. All of it is undone
//! when the [`Screen`] is dropped, and by a panic before the panic is printed (undoing it when
//! it was already undone does no harm).

use std::io::{Stdout, Write};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use ratatui::crossterm::{cursor, execute};

/// Mouse reporting on: presses (the wheel is buttons 4 and 5) in the SGR encoding, without the
/// motion reports crossterm's `EnableMouseCapture` asks for too, which would redraw the screen
/// at every move.
const MOUSE_ON: &[u8] = b"\x1b[?1000h\x1b[?1006h";
/// Mouse reporting off.
const MOUSE_OFF: &[u8] = b"\x1b[?1006l\x1b[?1000l";

/// The terminal in the UI's modes.
pub(crate) struct Screen {
    pub(crate) terminal: Terminal<CrosstermBackend<Stdout>>,
}

/// Puts the terminal back as it was (each step tried even when one fails).
fn restore() {
    let mut out = std::io::stdout();
    let _ = execute!(out, PopKeyboardEnhancementFlags);
    let _ = out.write_all(MOUSE_OFF);
    let _ = execute!(
        out,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

impl Screen {
    /// Takes over the terminal.
    pub(crate) fn enter() -> std::io::Result<Self> {
        enable_raw_mode()?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        let mut out = std::io::stdout();
        execute!(
            out,
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableFocusChange
        )?;
        out.write_all(MOUSE_ON)?;
        out.flush()?;
        if matches!(supports_keyboard_enhancement(), Ok(true)) {
            execute!(
                out,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )?;
        }
        let terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
        Ok(Self { terminal })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}
