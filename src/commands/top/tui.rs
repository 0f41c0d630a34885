//! `top`'s view on a terminal, live or replayed, drawn with ratatui on
//! crossterm: the header (the interval's local time to the second, the
//! node's pressure), the guests (as many columns as the width holds,
//! scrolled when they do not fit, sorted as `s` cycles), the disks, the
//! hints and a line of keys, marked in color unless `NO_COLOR` is set.
//!
//! The terminal is taken raw on the alternate screen and given back as it
//! was on every way out: when [`Tui`] is dropped (q, the run's end, SIGTERM
//! or SIGINT raising the flag the loop watches; Ctrl-C, which raw mode
//! turns into a key, raises SIGINT as the terminal would; a terminal hung
//! up, whose stdin ends), and from a panic hook before the panic's message
//! is printed.

use std::io::IsTerminal as _;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use crate::nodeio::sample::{DiskIo, GuestIo, TopSample};

/// Whether the terminal is held (for the panic hook and drop).
static HELD: AtomicBool = AtomicBool::new(false);

fn restore() {
    if HELD.swap(false, Ordering::SeqCst) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(
            std::io::stdout(),
            terminal::LeaveAlternateScreen,
            cursor::Show
        );
    }
}

/// A key the view acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Quit,
    Left,
    Right,
    Up,
    Down,
    PageUp,
    PageDown,
    /// `w`: the next bad moment (replay).
    Worst,
    /// `s`: the next sort.
    Sort,
}

/// How the guests are sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    #[default]
    Iops,
    Latency,
    Bandwidth,
    Id,
}

impl Sort {
    fn next(self) -> Sort {
        match self {
            Sort::Iops => Sort::Latency,
            Sort::Latency => Sort::Bandwidth,
            Sort::Bandwidth => Sort::Id,
            Sort::Id => Sort::Iops,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Sort::Iops => "IOPS",
            Sort::Latency => "latency",
            Sort::Bandwidth => "MiB/s",
            Sort::Id => "ID",
        }
    }

    fn order(self, guests: &mut [&GuestIo]) {
        let lat = |g: &GuestIo| g.read_ms.unwrap_or(0.0).max(g.write_ms.unwrap_or(0.0));
        let bw = |g: &GuestIo| g.read_mib_s + g.write_mib_s;
        match self {
            Sort::Iops => {
                guests.sort_by(|a, b| b.iops().total_cmp(&a.iops()).then(a.id.cmp(&b.id)))
            }
            Sort::Latency => guests.sort_by(|a, b| lat(b).total_cmp(&lat(a)).then(a.id.cmp(&b.id))),
            Sort::Bandwidth => guests.sort_by(|a, b| bw(b).total_cmp(&bw(a)).then(a.id.cmp(&b.id))),
            Sort::Id => guests.sort_by(|a, b| a.id.cmp(&b.id).then(a.drive.cmp(&b.drive))),
        }
    }
}

/// The view's own state: the sort and how far the guests are scrolled.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewState {
    pub sort: Sort,
    pub scroll: usize,
    /// Guest rows the last draw showed (a page).
    page: usize,
}

impl ViewState {
    /// `k` applied to the view (sort, scroll); whether it was one of its keys.
    pub fn apply(&mut self, k: Key, paging: bool) -> bool {
        match k {
            Key::Sort => {
                self.sort = self.sort.next();
                self.scroll = 0;
            }
            Key::Up => self.scroll = self.scroll.saturating_sub(1),
            Key::Down => self.scroll += 1,
            Key::PageUp if paging => self.scroll = self.scroll.saturating_sub(self.page.max(1)),
            Key::PageDown if paging => self.scroll += self.page.max(1),
            _ => return false,
        }
        true
    }
}

/// The terminal held by the view.
pub struct Tui {
    term: Terminal<CrosstermBackend<std::io::Stdout>>,
    keys: std::sync::mpsc::Receiver<Key>,
    pub state: ViewState,
    color: bool,
}

impl Tui {
    /// Takes the terminal (raw, the alternate screen); `None` when stdin or
    /// stdout is no terminal.
    pub fn take() -> Option<Tui> {
        if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
            return None;
        }
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        terminal::enable_raw_mode().ok()?;
        HELD.store(true, Ordering::SeqCst);
        if execute!(
            std::io::stdout(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )
        .is_err()
        {
            restore();
            return None;
        }
        let term = match Terminal::new(CrosstermBackend::new(std::io::stdout())) {
            Ok(t) => t,
            Err(_) => {
                restore();
                return None;
            }
        };
        Some(Tui {
            term,
            keys: key_reader(),
            state: ViewState::default(),
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        })
    }

    /// The next key pressed, waiting at most `wait`. A terminal that can
    /// no longer be read (hung up, its window closed) quits the view.
    pub fn key(&mut self, wait: Duration) -> Option<Key> {
        match self.keys.recv_timeout(wait) {
            Ok(k) => Some(k),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Some(Key::Quit),
        }
    }

    /// `s` drawn, with `footer`'s lines under it.
    pub fn draw(&mut self, s: &TopSample, footer: &[String]) {
        let color = self.color;
        let state = &mut self.state;
        let _ = self.term.draw(|f| {
            let area = f.area();
            let hints = s.hints.len().min(4) as u16;
            let disks = (s.disks.len().max(1) as u16 + 1)
                .min(area.height / 3)
                .max(2);
            let [head, guests, gap, disk_area, hint_area, foot] = Layout::vertical([
                Constraint::Length(2),
                Constraint::Min(4),
                Constraint::Length(1),
                Constraint::Length(disks),
                Constraint::Length(hints),
                Constraint::Length(footer.len() as u16 + 1),
            ])
            .areas(area);
            let _ = gap;
            f.render_widget(Paragraph::new(header(s)), head);
            let [title_area, table_area] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(2)]).areas(guests);
            // The table's own header takes a row.
            state.page = table_area.height.saturating_sub(1) as usize;
            let (title, table) = guest_table(s, state, guests.width, color);
            f.render_widget(
                Paragraph::new(Line::styled(
                    title,
                    Style::default().add_modifier(Modifier::BOLD),
                )),
                title_area,
            );
            f.render_widget(table, table_area);
            f.render_widget(disk_table(&s.disks, disk_area.width, color), disk_area);
            let warn = style(color, Color::Yellow);
            let hint_lines: Vec<Line> = s
                .hints
                .iter()
                .take(hints as usize)
                .map(|h| Line::styled(format!("hint {}: {}", h.code, h.sentence()), warn))
                .collect();
            f.render_widget(Paragraph::new(hint_lines), hint_area);
            let mut lines = vec![Line::raw("")];
            lines.extend(footer.iter().map(|l| Line::raw(l.clone())));
            f.render_widget(Paragraph::new(lines), foot);
        });
    }
}

/// Reads stdin's bytes on a thread of its own and sends the keys in them;
/// at its end (EOF or an error: the terminal hung up) the channel closes.
/// (Not crossterm's event reader: on a terminal hung up under it, its poll
/// spins and never returns, so no signal flag would be seen.)
fn key_reader() -> std::sync::mpsc::Receiver<Key> {
    let (send, keys) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Read as _;
        // A key's escape sequence arrives in one read.
        let mut buf = [0u8; 64];
        while let Ok(n @ 1..) = std::io::stdin().lock().read(&mut buf) {
            for key in keys_of(&buf[..n]) {
                if send.send(key).is_err() {
                    return;
                }
            }
        }
    });
    keys
}

/// The keys in `bytes` as a terminal in raw mode sends them (arrows and
/// pages as escape sequences); Ctrl-C raises SIGINT, as the terminal would
/// have; what is no key is passed over.
pub fn keys_of(bytes: &[u8]) -> Vec<Key> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let (key, len) = match &bytes[i..] {
            [0x03, ..] => {
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGINT);
                (None, 1)
            }
            [b'q' | b'Q', ..] => (Some(Key::Quit), 1),
            [b'w' | b'W', ..] => (Some(Key::Worst), 1),
            [b's' | b'S', ..] => (Some(Key::Sort), 1),
            [0x1b, b'[' | b'O', b'A', ..] => (Some(Key::Up), 3),
            [0x1b, b'[' | b'O', b'B', ..] => (Some(Key::Down), 3),
            [0x1b, b'[' | b'O', b'C', ..] => (Some(Key::Right), 3),
            [0x1b, b'[' | b'O', b'D', ..] => (Some(Key::Left), 3),
            [0x1b, b'[', b'5', b'~', ..] => (Some(Key::PageUp), 4),
            [0x1b, b'[', b'6', b'~', ..] => (Some(Key::PageDown), 4),
            [0x1b] => (Some(Key::Quit), 1),
            _ => (None, 1),
        };
        out.extend(key);
        i += len;
    }
    out
}

impl Drop for Tui {
    fn drop(&mut self) {
        restore();
    }
}

fn style(color: bool, c: Color) -> Style {
    if color {
        Style::default().fg(c)
    } else {
        Style::default()
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}%"))
}

fn header(s: &TopSample) -> Vec<Line<'static>> {
    let p = &s.pressure;
    vec![
        Line::styled(
            format!(
                "pveprobe top: {} at {}, over {:.1} s (read-only; this sampling: {:.1}% of a CPU, {} MiB)",
                s.node,
                super::when::local(&s.timestamp),
                s.seconds,
                s.own.cpu_pct,
                s.own.rss_kib / 1024
            ),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::raw(format!(
            "IO delay {}   IO pressure some {} full {}   CPU pressure {}   memory pressure {}",
            pct(p.iowait_pct),
            pct(p.io_some_pct),
            pct(p.io_full_pct),
            pct(p.cpu_some_pct),
            pct(p.memory_some_pct)
        )),
    ]
}

/// A column: its heading, its width, how much it matters (0 most: the
/// columns that fit are kept in that order) and its cell.
struct Column<T> {
    name: &'static str,
    width: u16,
    rank: u8,
    cell: fn(&T, bool) -> Cell<'static>,
}

/// A column: its heading, width, rank (the lower kept first when the
/// width is short) and how a row's cell is drawn.
const fn col<T>(
    name: &'static str,
    width: u16,
    rank: u8,
    cell: fn(&T, bool) -> Cell<'static>,
) -> Column<T> {
    Column {
        name,
        width,
        rank,
        cell,
    }
}

/// The columns that fit `width`, in their own order.
fn fitting<T>(columns: Vec<Column<T>>, width: u16) -> Vec<Column<T>> {
    let mut by_rank: Vec<usize> = (0..columns.len()).collect();
    by_rank.sort_by_key(|&i| columns[i].rank);
    let mut used = 0u16;
    let mut keep = vec![false; columns.len()];
    // In order of rank until one does not fit: a pair (R and W) is kept
    // or left out whole, and a column never skips one that matters more.
    for i in by_rank {
        let w = columns[i].width + 1;
        if used + w > width {
            break;
        }
        used += w;
        keep[i] = true;
    }
    columns
        .into_iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(c))
        .collect()
}

fn num(v: f64, decimals: usize) -> Cell<'static> {
    Cell::from(Line::from(format!("{v:.decimals$}")).right_aligned())
}

/// A latency in ms: yellow from 5 ms, red from 20 (the hints' threshold).
fn ms(v: Option<f64>, color: bool) -> Cell<'static> {
    let Some(v) = v else {
        return Cell::from(Line::from("-").right_aligned());
    };
    let st = match v {
        20.0.. => style(color, Color::Red),
        5.0.. => style(color, Color::Yellow),
        _ => Style::default(),
    };
    Cell::from(Line::from(format!("{v:.2}")).right_aligned()).style(st)
}

/// What a guest drive's and a disk's rows both have: operations and MiB
/// a second, each way.
trait Rates {
    fn rates(&self) -> [f64; 4];
}

impl Rates for GuestIo {
    fn rates(&self) -> [f64; 4] {
        [
            self.read_iops,
            self.write_iops,
            self.read_mib_s,
            self.write_mib_s,
        ]
    }
}

impl Rates for DiskIo {
    fn rates(&self) -> [f64; 4] {
        [
            self.read_iops,
            self.write_iops,
            self.read_mib_s,
            self.write_mib_s,
        ]
    }
}

/// R IOPS, W IOPS, R MiB/s and W MiB/s, for guests and disks alike.
fn rate_columns<T: Rates>() -> [Column<T>; 4] {
    [
        col("R IOPS", 8, 0, |r, _| num(r.rates()[0], 0)),
        col("W IOPS", 8, 0, |r, _| num(r.rates()[1], 0)),
        col("R MiB/s", 8, 3, |r, _| num(r.rates()[2], 1)),
        col("W MiB/s", 8, 3, |r, _| num(r.rates()[3], 1)),
    ]
}

fn guest_columns() -> Vec<Column<GuestIo>> {
    let mut out = vec![
        col("GUEST", 16, 0, |g: &GuestIo, _| Cell::from(g.label())),
        col("ON", 10, 2, |g, _| {
            Cell::from(g.disk.clone().unwrap_or_else(|| "-".into()))
        }),
    ];
    out.extend(rate_columns());
    out.extend([
        col("R ms", 8, 0, |g: &GuestIo, c| ms(g.read_ms, c)),
        col("W ms", 8, 0, |g, c| ms(g.write_ms, c)),
        col("R p99", 8, 4, |g, c| ms(g.read_p99_ms, c)),
        col("W p99", 8, 4, |g, c| ms(g.write_p99_ms, c)),
        col("NAME", 16, 1, |g, _| {
            Cell::from(g.name.clone().unwrap_or_default())
        }),
        col("FILE", 40, 5, |g, _| {
            Cell::from(g.file.clone().unwrap_or_default())
        }),
    ]);
    out
}

fn guest_table(
    s: &TopSample,
    state: &mut ViewState,
    width: u16,
    color: bool,
) -> (String, Table<'static>) {
    let cols = fitting(guest_columns(), width);
    let mut guests: Vec<&GuestIo> = s.guests.iter().collect();
    state.sort.order(&mut guests);
    let page = state.page.max(1);
    state.scroll = state.scroll.min(guests.len().saturating_sub(page));
    let shown: Vec<Row> = if guests.is_empty() {
        vec![Row::new(vec![Cell::from("(no running guest)")])]
    } else {
        guests
            .iter()
            .skip(state.scroll)
            .take(page)
            .map(|g| Row::new(cols.iter().map(|c| (c.cell)(g, color)).collect::<Vec<_>>()))
            .collect()
    };
    let title = match guests.len() {
        n if n > page => format!(
            "GUESTS {}-{} of {n}, by {} (s: sort, up/down: scroll)",
            state.scroll + 1,
            (state.scroll + page).min(n),
            state.sort.word()
        ),
        n => format!("GUESTS {n}, by {} (s: sort)", state.sort.word()),
    };
    let names: Vec<Cell> = cols.iter().map(|c| Cell::from(c.name)).collect();
    let widths: Vec<Constraint> = cols.iter().map(|c| Constraint::Length(c.width)).collect();
    let table = Table::new(shown, widths)
        .header(Row::new(names).style(Style::default().add_modifier(Modifier::BOLD)))
        .column_spacing(1);
    (title, table)
}

fn disk_columns() -> Vec<Column<DiskIo>> {
    let mut out = vec![col("DISK", 10, 0, |d: &DiskIo, _| {
        Cell::from(d.name.clone())
    })];
    out.extend(rate_columns());
    out.extend([
        col("R AWAIT", 8, 1, |d: &DiskIo, c| ms(d.read_await_ms, c)),
        col("W AWAIT", 8, 1, |d, c| ms(d.write_await_ms, c)),
        col("QUEUE", 6, 2, |d, _| num(d.queue, 1)),
        Column {
            name: "UTIL",
            width: 6,
            rank: 0,
            cell: |d, c| {
                let st = match d.util_pct {
                    95.0.. => style(c, Color::Red),
                    80.0.. => style(c, Color::Yellow),
                    _ => Style::default(),
                };
                Cell::from(Line::from(format!("{:.0}%", d.util_pct)).right_aligned()).style(st)
            },
        },
        col("STORAGES AND GUESTS", 40, 4, |d, _| {
            Cell::from([d.storages.clone(), d.guests.clone()].concat().join(", "))
        }),
    ]);
    out
}

fn disk_table(disks: &[DiskIo], width: u16, color: bool) -> Table<'static> {
    let cols = fitting(disk_columns(), width);
    let rows: Vec<Row> = disks
        .iter()
        .map(|d| Row::new(cols.iter().map(|c| (c.cell)(d, color)).collect::<Vec<_>>()))
        .collect();
    let widths: Vec<Constraint> = cols.iter().map(|c| Constraint::Length(c.width)).collect();
    Table::new(rows, widths)
        .header(
            Row::new(cols.iter().map(|c| Cell::from(c.name)).collect::<Vec<_>>())
                .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .column_spacing(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_columns_that_matter_most_fit_first_and_keep_their_order() {
        let names =
            |w| -> Vec<&str> { fitting(guest_columns(), w).iter().map(|c| c.name).collect() };
        assert_eq!(names(60), ["GUEST", "R IOPS", "W IOPS", "R ms", "W ms"]);
        assert_eq!(
            names(80),
            ["GUEST", "R IOPS", "W IOPS", "R ms", "W ms", "NAME"]
        );
        let wide = names(200);
        assert_eq!(wide.len(), guest_columns().len(), "{wide:?}");
        assert_eq!(wide[0], "GUEST");
        assert_eq!(*wide.last().unwrap(), "FILE");
    }

    #[test]
    fn keys_are_read_as_a_terminal_sends_them() {
        assert_eq!(
            keys_of(b"\x1b[D\x1b[Cx\x1b[5~\x1b[6~\x1bOAwsq\x1b[B"),
            [
                Key::Left,
                Key::Right,
                Key::PageUp,
                Key::PageDown,
                Key::Up,
                Key::Worst,
                Key::Sort,
                Key::Quit,
                Key::Down
            ]
        );
        assert_eq!(keys_of(b"\x1b"), [Key::Quit], "Esc alone");
        assert!(keys_of(b"\x1b[").is_empty());
    }

    #[test]
    fn the_view_s_keys_sort_and_scroll() {
        let mut v = ViewState {
            page: 10,
            ..ViewState::default()
        };
        assert!(v.apply(Key::Sort, true));
        assert_eq!(v.sort, Sort::Latency);
        assert!(v.apply(Key::PageDown, true));
        assert_eq!(v.scroll, 10);
        assert!(!v.apply(Key::PageDown, false), "replay's PgDn is an hour");
        assert!(v.apply(Key::Up, false));
        assert_eq!(v.scroll, 9);
        assert!(!v.apply(Key::Quit, true));
    }
}
