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

use crate::nodeio::guests::{GuestNet, GuestUse};
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
    Panel(Panel),
}

/// What the guests' table shows, switched by key as esxtop switches its
/// panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Panel {
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
    pub panel: Panel,
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
            Key::Panel(p) => {
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
            [b'i' | b'I', ..] => (Some(Key::Panel(Panel::Io)), 1),
            [b'c' | b'C', ..] => (Some(Key::Panel(Panel::Cpu)), 1),
            [b'm' | b'M', ..] => (Some(Key::Panel(Panel::Memory)), 1),
            [b'n' | b'N', ..] => (Some(Key::Panel(Panel::Network)), 1),
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
        Line::raw(super::render::node_use_line(s)),
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

/// The guests' table of the panel shown, and its title.
fn guest_table(
    s: &TopSample,
    state: &mut ViewState,
    width: u16,
    color: bool,
) -> (String, Table<'static>) {
    match state.panel {
        Panel::Io => {
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
        Panel::Cpu => {
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
        Panel::Memory => {
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
        Panel::Network => {
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

/// A share, %: yellow from 5, red from `red`.
fn share(v: Option<f64>, red: f64, color: bool) -> Cell<'static> {
    let Some(v) = v else {
        return Cell::from(Line::from("-").right_aligned());
    };
    let st = if v >= red {
        style(color, Color::Red)
    } else if v >= 5.0 {
        style(color, Color::Yellow)
    } else {
        Style::default()
    };
    Cell::from(Line::from(format!("{v:.1}%")).right_aligned()).style(st)
}

fn opt_num(v: Option<f64>, decimals: usize) -> Cell<'static> {
    match v {
        Some(v) => num(v, decimals),
        None => Cell::from(Line::from("-").right_aligned()),
    }
}

fn name_col<T: AsGuest>() -> Column<T> {
    col("NAME", 16, 1, |g: &T, _| {
        Cell::from(g.guest().name.clone().unwrap_or_default())
    })
}

/// A row that belongs to a guest.
trait AsGuest {
    fn guest(&self) -> &GuestUse;
}

impl AsGuest for GuestUse {
    fn guest(&self) -> &GuestUse {
        self
    }
}

/// One guest interface's row.
struct NetRow<'a>(&'a GuestUse, &'a GuestNet);

impl AsGuest for NetRow<'_> {
    fn guest(&self) -> &GuestUse {
        self.0
    }
}

fn cpu_columns() -> Vec<Column<GuestUse>> {
    vec![
        col("GUEST", 10, 0, |g: &GuestUse, _| Cell::from(g.label())),
        col("USED", 7, 0, |g, _| {
            opt_num(g.cpu.used_pct, 0).style(Style::default())
        }),
        col("READY", 7, 0, |g, c| share(g.cpu.ready_pct, 10.0, c)),
        col("LIMITED", 8, 0, |g, c| share(g.cpu.limited_pct, 10.0, c)),
        col("vCPUs", 5, 2, |g, _| num(f64::from(g.cpu.vcpus), 0)),
        col("CPU PSI", 8, 3, |g, _| {
            share(g.cpu.pressure_pct, 101.0, false)
        }),
        name_col(),
        col("READY PER vCPU", 30, 4, |g, _| {
            Cell::from(
                g.cpu
                    .vcpu_ready_pct
                    .iter()
                    .map(|r| format!("{r:.0}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }),
    ]
}

fn memory_columns() -> Vec<Column<GuestUse>> {
    vec![
        col("GUEST", 10, 0, |g: &GuestUse, _| Cell::from(g.label())),
        col("HOST MiB", 9, 0, |g, _| opt_num(g.memory.host_mib, 0)),
        col("SWAP MiB", 9, 0, |g, _| opt_num(g.memory.swap_mib, 0)),
        col("BALLOON", 8, 2, |g, _| opt_num(g.memory.balloon_mib, 0)),
        col("MAX MiB", 8, 2, |g, _| opt_num(g.memory.max_mib, 0)),
        col("AVAIL", 8, 3, |g, _| {
            opt_num(g.memory.guest_available_mib, 0)
        }),
        col("SWPIN/s", 8, 3, |g, _| {
            opt_num(g.memory.guest_swap_in_mib_s, 1)
        }),
        col("MAJF/s", 7, 3, |g, _| {
            opt_num(g.memory.guest_major_faults_s, 0)
        }),
        col("MEM PSI", 8, 2, |g, c| {
            share(g.memory.pressure_some_pct, 10.0, c)
        }),
        name_col(),
    ]
}

fn net_columns<'a>() -> Vec<Column<NetRow<'a>>> {
    vec![
        col("GUEST", 10, 0, |r: &NetRow, _| Cell::from(r.0.label())),
        col("NET", 5, 0, |r, _| Cell::from(r.1.net.clone())),
        col("RX MiB/s", 9, 0, |r, _| num(r.1.rx_mib_s, 2)),
        col("TX MiB/s", 9, 0, |r, _| num(r.1.tx_mib_s, 2)),
        col("RX pkt/s", 9, 2, |r, _| num(r.1.rx_packets_s, 0)),
        col("TX pkt/s", 9, 2, |r, _| num(r.1.tx_packets_s, 0)),
        col("DROPS/s", 8, 0, |r, c| {
            let d = r.1.drops_s();
            let st = if d >= 1.0 {
                style(c, Color::Red)
            } else {
                Style::default()
            };
            num(d, 0).style(st)
        }),
        col("IFACE", 12, 3, |r, _| Cell::from(r.1.interface.clone())),
        name_col(),
    ]
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
        use crate::nodeio::guests::{GuestCpu, GuestMemory};
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
