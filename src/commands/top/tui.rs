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

use super::panels::{
    Column, NetRow, cpu_columns, disk_columns, fitting, guest_columns, memory_columns, net_columns,
    style,
};
use crate::nodeio::guests::GuestUse;
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
    /// `i`, `c`, `m`, `n`: the guests' I/O, CPU, memory or network panel.
    GuestPanel(GuestPanel),
}

/// What the guests' table shows, switched by key as esxtop switches its
/// panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GuestPanel {
    #[default]
    Io,
    Cpu,
    Memory,
    Network,
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

    pub(super) fn word(self) -> &'static str {
        match self {
            Sort::Iops => "IOPS",
            Sort::Latency => "latency",
            Sort::Bandwidth => "MiB/s",
            Sort::Id => "ID",
        }
    }

    pub(super) fn order(self, guests: &mut [&GuestIo]) {
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
    pub panel: GuestPanel,
    pub scroll: usize,
    /// Guest rows the last draw showed (a page).
    pub(super) page: usize,
}

impl ViewState {
    /// `k` applied to the view (sort, scroll); whether it was one of its keys.
    pub fn apply(&mut self, k: Key, paging: bool) -> bool {
        match k {
            Key::Sort => {
                self.sort = self.sort.next();
                self.scroll = 0;
            }
            Key::GuestPanel(p) => {
                self.panel = p;
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
        let (color, state) = (self.color, &mut self.state);
        let _ = self.term.draw(|f| view(f, s, state, footer, color));
    }
}

/// The view of `s` on frame `f`: the header, the guests' panel, the disks,
/// the hints and `footer`.
fn view(
    f: &mut ratatui::Frame,
    s: &TopSample,
    state: &mut ViewState,
    footer: &[String],
    color: bool,
) {
    let area = f.area();
    let hints = s.hints.len().min(4) as u16;
    let disks = (s.disks.len().max(1) as u16 + 1)
        .min(area.height / 3)
        .max(2);
    let [head, guests, _gap, disk_area, hint_area, foot] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Min(4),
        Constraint::Length(1),
        Constraint::Length(disks),
        Constraint::Length(hints),
        Constraint::Length(footer.len() as u16 + 1),
    ])
    .areas(area);
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
            [b'i' | b'I', ..] => (Some(Key::GuestPanel(GuestPanel::Io)), 1),
            [b'c' | b'C', ..] => (Some(Key::GuestPanel(GuestPanel::Cpu)), 1),
            [b'm' | b'M', ..] => (Some(Key::GuestPanel(GuestPanel::Memory)), 1),
            [b'n' | b'N', ..] => (Some(Key::GuestPanel(GuestPanel::Network)), 1),
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
        Line::raw(super::render_use::node_use_line(s)),
    ]
}

/// The guests' table of the panel shown, and its title.
fn guest_table(
    s: &TopSample,
    state: &mut ViewState,
    width: u16,
    color: bool,
) -> (String, Table<'static>) {
    match state.panel {
        GuestPanel::Io => {
            let mut guests: Vec<&GuestIo> = s.guests.iter().collect();
            state.sort.order(&mut guests);
            let by = format!("I/O by {}", state.sort.word());
            paged(
                &guests,
                guest_columns(),
                state,
                width,
                color,
                &by,
                "s: sort, ",
            )
        }
        GuestPanel::Cpu => {
            let mut guests: Vec<&GuestUse> = s.guest_use.iter().collect();
            let key =
                |g: &GuestUse| g.cpu.ready_pct.unwrap_or(0.0) + g.cpu.limited_pct.unwrap_or(0.0);
            guests.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.id.cmp(&b.id)));
            paged(
                &guests,
                cpu_columns(),
                state,
                width,
                color,
                "CPU by ready and limited",
                "",
            )
        }
        GuestPanel::Memory => {
            let mut guests: Vec<&GuestUse> = s.guest_use.iter().collect();
            let key = |g: &GuestUse| {
                g.memory.swap_mib.unwrap_or(0.0) * 1e6 + g.memory.host_mib.unwrap_or(0.0)
            };
            guests.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.id.cmp(&b.id)));
            paged(
                &guests,
                memory_columns(),
                state,
                width,
                color,
                "memory by swap and size",
                "",
            )
        }
        GuestPanel::Network => {
            let mut rows: Vec<NetRow> = s
                .guest_use
                .iter()
                .flat_map(|g| g.net.iter().map(move |n| NetRow(g, n)))
                .collect();
            let key = |r: &NetRow| r.1.drops_s() * 1e9 + r.1.rx_mib_s + r.1.tx_mib_s;
            rows.sort_by(|a, b| key(b).total_cmp(&key(a)));
            let rows: Vec<&NetRow> = rows.iter().collect();
            paged(
                &rows,
                net_columns(),
                state,
                width,
                color,
                "network by drops and MiB/s",
                "",
            )
        }
    }
}

/// A page of `rows` in the columns that fit, and the table's title.
fn paged<T>(
    rows: &[&T],
    columns: Vec<Column<T>>,
    state: &mut ViewState,
    width: u16,
    color: bool,
    what: &str,
    keys: &str,
) -> (String, Table<'static>) {
    let cols = fitting(columns, width);
    let page = state.page.max(1);
    state.scroll = state.scroll.min(rows.len().saturating_sub(page));
    let names: Vec<Cell> = cols.iter().map(|c| Cell::from(c.name)).collect();
    let mut widths: Vec<Constraint> = cols.iter().map(|c| Constraint::Length(c.width)).collect();
    let shown: Vec<Row> = if rows.is_empty() {
        // One cell across the width: the line is never cut to a column's.
        widths = vec![Constraint::Min(0)];
        vec![Row::new(vec![Cell::from(if s_is_io(what) {
            "(no running guest)"
        } else {
            "(none)"
        })])]
    } else {
        rows.iter()
            .skip(state.scroll)
            .take(page)
            .map(|g| Row::new(cols.iter().map(|c| (c.cell)(g, color)).collect::<Vec<_>>()))
            .collect()
    };
    let panels = "i c m n: I/O, CPU, memory, network";
    let title = match rows.len() {
        n if n > page => format!(
            "GUESTS {}-{} of {n}, {what} ({keys}up/down: scroll; {panels})",
            state.scroll + 1,
            (state.scroll + page).min(n),
        ),
        n => format!("GUESTS {n}, {what} ({keys}{panels})"),
    };
    let table = Table::new(shown, widths)
        .header(Row::new(names).style(Style::default().add_modifier(Modifier::BOLD)))
        .column_spacing(1);
    (title, table)
}

fn s_is_io(what: &str) -> bool {
    what.starts_with("I/O")
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

    /// The view of `s` on a terminal `width` x 30, as its lines.
    fn screen(s: &TopSample, state: &mut ViewState, width: u16) -> Vec<String> {
        let mut term = Terminal::new(ratatui::backend::TestBackend::new(width, 30)).unwrap();
        term.draw(|f| view(f, s, state, &["keys".into()], false))
            .unwrap();
        let buf = term.backend().buffer().clone();
        (0..30)
            .map(|y| {
                (0..width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn panels_switch_by_key_and_every_line_fits() {
        use crate::nodeio::guests::{GuestCpu, GuestMemory, GuestNet, GuestUse};
        let mut state = ViewState::default();
        // An idle node: its line is whole at 120 columns, and at 80.
        for width in [80, 120] {
            let idle = screen(&TopSample::default(), &mut state, width);
            assert!(
                idle.iter().any(|l| l.trim() == "(no running guest)"),
                "{idle:#?}"
            );
        }
        let s = TopSample {
            guest_use: vec![GuestUse {
                kind: "vm".into(),
                id: 101,
                name: Some("web".into()),
                cpu: GuestCpu {
                    used_pct: Some(150.0),
                    vcpus: 2,
                    ready_pct: Some(22.5),
                    vcpu_ready_pct: vec![22.5, 12.0],
                    limited_pct: Some(0.0),
                    pressure_pct: None,
                },
                memory: GuestMemory {
                    host_mib: Some(2100.0),
                    swap_mib: Some(300.0),
                    ..GuestMemory::default()
                },
                net: vec![GuestNet {
                    net: "net0".into(),
                    interface: "tap101i0".into(),
                    rx_drops_s: 7.0,
                    ..GuestNet::default()
                }],
                oom_kills: 0,
            }],
            ..TopSample::default()
        };
        for (keys, heading, cell) in [
            (&b"c"[..], "READY", "22.5%"),
            (b"m", "SWAP MiB", "300"),
            (b"n", "DROPS/s", "7"),
            (b"i", "GUEST", "(no running guest)"),
        ] {
            for k in keys_of(keys) {
                assert!(state.apply(k, true));
            }
            let lines = screen(&s, &mut state, 80);
            let table = lines
                .iter()
                .position(|l| !l.starts_with("GUESTS") && l.contains(heading));
            let table = table.unwrap_or_else(|| panic!("{heading}: {lines:#?}"));
            assert!(lines[table + 1].contains(cell), "{heading}: {lines:#?}");
            if heading != "GUEST" {
                assert!(lines[table + 1].starts_with("VM 101"), "{lines:#?}");
            }
        }
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
