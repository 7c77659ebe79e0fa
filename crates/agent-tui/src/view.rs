//! Drawing the state on a frame: the conversation (scrolled to its end unless the user scrolled
//! up), the plan panel beside it (above it on a narrow terminal), the messages queued for the
//! running turn, the completion list, the message being typed, the status line (with what the
//! model client is doing about its server, a retry or a rate limit, while it does), and the
//! question of an approval over everything (`modal.rs`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::{App, Status};
use crate::cells::{Cell, Look, tokens_text};
use crate::wrap::{truncate, width};

/// Below this width the plan panel goes above the conversation instead of beside it.
const SIDE_BY_SIDE: u16 = 100;
/// The most rows the message being typed takes.
const INPUT_ROWS: usize = 8;

fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// Draws `app` on `frame`.
pub fn draw(frame: &mut Frame<'_>, app: &mut App) {
    let area = frame.area();
    let input_lines = input_lines(app, area.width.saturating_sub(2) as usize);
    let input_rows = input_lines.len().clamp(1, INPUT_ROWS) as u16 + 1;
    let queued_rows = app.queued.len().min(3) as u16 + u16::from(!app.attached.is_empty());
    let [main, queued, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(queued_rows),
        Constraint::Length(input_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let conversation = match app.plan_shown() {
        true => plan_and_rest(frame, app, main),
        false => main,
    };
    draw_conversation(frame, app, conversation);
    draw_queued(frame, app, queued);
    draw_input(frame, app, input, input_lines);
    draw_completion(frame, app, conversation, input);
    let columns = status.width as usize;
    frame.render_widget(
        Paragraph::new(status_line(&app.status, app, columns)),
        status,
    );
    if let Some(diff) = &mut app.diff {
        crate::diff_view::draw(frame, diff, main);
    }
    if let Some(shells) = &app.shells {
        crate::shells::draw(frame, shells, main);
    }
    crate::modal::draw(frame, app, area);
    crate::elicit::draw(frame, &app.forms, area);
}

/// Draws the plan panel in `area` and returns the room left for the conversation.
fn plan_and_rest(frame: &mut Frame<'_>, app: &App, area: Rect) -> Rect {
    let title = Line::from(vec![
        Span::styled(" Plan ", Style::new().add_modifier(Modifier::BOLD)),
        Span::styled("· Ctrl-P hides ", dim()),
    ]);
    if area.width >= SIDE_BY_SIDE {
        let panel_width = (area.width / 3).clamp(30, 48);
        let [rest, panel] =
            Layout::horizontal([Constraint::Min(1), Constraint::Length(panel_width)]).areas(area);
        let block = Block::new()
            .borders(Borders::LEFT)
            .border_style(dim())
            .title(title);
        let lines = app.plan.lines(panel_width.saturating_sub(2) as usize);
        frame.render_widget(Paragraph::new(lines).block(block), panel);
        return rest;
    }
    let lines = app.plan.lines(area.width as usize);
    let rows = (lines.len() as u16 + 1).min(area.height / 3).max(2);
    let [panel, rest] =
        Layout::vertical([Constraint::Length(rows), Constraint::Min(1)]).areas(area);
    let block = Block::new()
        .borders(Borders::BOTTOM)
        .border_style(dim())
        .title(title);
    // The current goal stays in view when the tree is longer than the panel.
    let current = app
        .plan
        .current_label()
        .and_then(|label| {
            let number = label.split(' ').next().unwrap_or_default().to_owned();
            lines
                .iter()
                .position(|line| line.to_string().contains(&format!("▶ {number} ")))
        })
        .unwrap_or(0);
    let room = rows.saturating_sub(2) as usize;
    let skip = current.saturating_sub(room.saturating_sub(1));
    let shown: Vec<Line<'static>> = lines.into_iter().skip(skip).collect();
    frame.render_widget(Paragraph::new(shown).block(block), panel);
    rest
}

/// The lines of `cells` as `look` draws them, a blank line between cells.
pub(crate) fn conversation_lines(cells: &[Cell], look: &Look) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut previous: Option<&Cell> = None;
    for cell in cells {
        // Notices that follow each other (goals focused one after the other) stay together.
        let together = matches!((previous, cell), (Some(Cell::Notice(_)), Cell::Notice(_)));
        if previous.is_some() && !together {
            lines.push(Line::default());
        }
        lines.extend(cell.lines(look));
        previous = Some(cell);
    }
    lines
}

fn draw_conversation(frame: &mut Frame<'_>, app: &mut App, area: Rect) {
    let look = Look {
        columns: area.width.max(1) as usize,
        now: app.now,
        reasoning: app.reasoning,
    };
    let lines = conversation_lines(&app.cells, &look);
    let height = area.height as usize;
    let most = lines.len().saturating_sub(height);
    app.scroll = app.scroll.min(most);
    let start = most - app.scroll;
    let shown: Vec<Line<'static>> = lines.into_iter().skip(start).take(height).collect();
    frame.render_widget(Paragraph::new(shown), area);
}

fn draw_queued(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let attached = app.attached_line().map(|line| {
        Line::styled(
            truncate(&line, area.width as usize),
            Style::new().fg(Color::Cyan),
        )
    });
    let queued = app.queued.iter().rev().take(3).rev().map(|text| {
        let first = text.lines().next().unwrap_or_default();
        Line::styled(
            truncate(
                &format!("↳ queued for the running turn: {first}"),
                area.width as usize,
            ),
            dim(),
        )
    });
    let lines: Vec<Line<'static>> = queued.chain(attached).collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// The message being typed as rows `columns` wide, each line cut into rows (not at words, so
/// that the cursor is where it is typed).
fn input_lines(app: &App, columns: usize) -> Vec<String> {
    crate::wrap::rows(&app.input.text, columns)
}

fn draw_input(frame: &mut Frame<'_>, app: &App, area: Rect, rows: Vec<String>) {
    let title = if app.running {
        " working · Esc or Ctrl-C stops · what you send now is queued for it "
    } else {
        " Enter sends · Shift+Enter, Ctrl-J or \\ Enter: new line · /help "
    };
    let block = Block::new()
        .borders(Borders::TOP)
        .border_style(dim())
        .title(Span::styled(title, dim()));
    let inner = block.inner(area);
    let columns = inner.width.saturating_sub(2).max(1) as usize;
    // Where the cursor is among the rows.
    let (line, column) = app.input.cursor_position();
    let before: usize = app
        .input
        .text
        .split('\n')
        .take(line)
        .map(|text| width(text) / columns + 1)
        .sum();
    let cursor_row = before + column / columns;
    let visible = inner.height.max(1) as usize;
    let skip = (cursor_row + 1).saturating_sub(visible);
    let lines: Vec<Line<'static>> = rows
        .into_iter()
        .enumerate()
        .skip(skip)
        .take(visible)
        .map(|(index, row)| {
            let lead = if index == 0 { "› " } else { "  " };
            Line::from(vec![
                Span::styled(lead, Style::new().fg(Color::Cyan)),
                Span::raw(row),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
    if app.asks.is_empty() {
        let x = inner.x + 2 + (column % columns) as u16;
        let y = inner.y + (cursor_row - skip) as u16;
        frame.set_cursor_position((x.min(inner.right().saturating_sub(1)), y));
    }
}

fn draw_completion(frame: &mut Frame<'_>, app: &App, above: Rect, input: Rect) {
    let items = &app.completion.items;
    if items.is_empty() {
        return;
    }
    let rows = items.len().min(crate::complete::SHOWN) as u16;
    let width = above.width.min(60);
    let top = input.y.saturating_sub(rows);
    let area = Rect::new(above.x, top.max(above.y), width, rows.min(above.height));
    let lines: Vec<Line<'static>> = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let about = crate::complete::COMMANDS
                .iter()
                .find(|(name, _)| *name == item.as_str())
                .map(|(_, about)| *about)
                .unwrap_or_default();
            let style = if index == 0 {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            };
            Line::from(vec![
                Span::styled(format!(" {item} "), style),
                Span::styled(format!(" {about}"), dim()),
            ])
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).style(Style::new().bg(Color::Black)),
        area,
    );
}

fn status_line(status: &Status, app: &App, columns: usize) -> Line<'static> {
    let line = |short: bool| {
        let mut parts = vec![status.model.clone()];
        let context = if short { "ctx" } else { "context" };
        match (status.context_used, status.context_window) {
            (Some(used), Some(window)) if window > 0 => {
                parts.push(format!("{context} {}%", used * 100 / window));
            }
            (Some(used), _) => parts.push(format!("{context} {}", tokens_text(used))),
            _ => {}
        }
        let tokens = status.tokens + status.sub_tokens;
        let cost = status.cost + status.sub_cost;
        let unit = if short { "tok" } else { "tokens" };
        parts.push(format!("{} {unit} · ${cost:.4}", tokens_text(tokens)));
        if let Some(trace) = &status.trace_id {
            let id: String = trace.chars().take(8).collect();
            parts.push(if short { id } else { format!("trace {id}") });
        }
        match short {
            true => parts.push(format!("{} · {}", status.approval, status.sandbox)),
            false => {
                parts.push(format!("approval {}", status.approval));
                parts.push(format!("sandbox {}", status.sandbox));
            }
        }
        parts.join(" · ")
    };
    // What the model client is doing about its server comes first, while it does.
    let notice = crate::notices::status_text(app);
    let columns = match &notice {
        Some(notice) => columns.saturating_sub(width(notice) + 3),
        None => columns,
    };
    let full = line(false);
    let text = if width(&full) + 2 <= columns {
        full
    } else {
        truncate(&line(true), columns.saturating_sub(2))
    };
    let (mark, color) = match (app.running, &notice) {
        (_, Some(_)) => ("⟳ ", Color::Yellow),
        (true, None) => ("● ", Color::Yellow),
        (false, None) => ("○ ", Color::DarkGray),
    };
    let mut spans = vec![Span::styled(mark, Style::new().fg(color))];
    if let Some(notice) = notice {
        spans.push(Span::styled(notice, Style::new().fg(Color::Yellow)));
        spans.push(Span::styled(" · ", dim()));
    }
    spans.push(Span::styled(text, dim()));
    Line::from(spans)
}
