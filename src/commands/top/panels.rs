//! The columns of `top`'s view: each kept or left out by the width and
//! how much it matters; the guests' I/O, CPU, memory and network panels'
//! and the disks', as esxtop switches its panels.

use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Cell;

use crate::nodeio::guests::{GuestNet, GuestUse};
use crate::nodeio::sample::{DiskIo, GuestIo};

pub(super) fn style(color: bool, c: Color) -> Style {
    if color {
        Style::default().fg(c)
    } else {
        Style::default()
    }
}

/// A column: its heading, its width, how much it matters (0 most: the
/// columns that fit are kept in that order) and its cell.
pub(super) struct Column<T> {
    pub(super) name: &'static str,
    pub(super) width: u16,
    pub(super) rank: u8,
    pub(super) cell: fn(&T, bool) -> Cell<'static>,
}

/// A column: its heading, width, rank (the lower kept first when the
/// width is short) and how a row's cell is drawn.
pub(super) const fn col<T>(
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
pub(super) fn fitting<T>(columns: Vec<Column<T>>, width: u16) -> Vec<Column<T>> {
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

pub(super) fn num(v: f64, decimals: usize) -> Cell<'static> {
    Cell::from(Line::from(format!("{v:.decimals$}")).right_aligned())
}

/// A latency in ms: yellow from 5 ms, red from 20 (the hints' threshold).
pub(super) fn ms(v: Option<f64>, color: bool) -> Cell<'static> {
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

pub(super) fn guest_columns() -> Vec<Column<GuestIo>> {
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

pub(super) fn disk_columns() -> Vec<Column<DiskIo>> {
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

/// A share, %: yellow from 5, red from `red`.
pub(super) fn share(v: Option<f64>, red: f64, color: bool) -> Cell<'static> {
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

pub(super) fn opt_num(v: Option<f64>, decimals: usize) -> Cell<'static> {
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
pub(super) struct NetRow<'a>(pub(super) &'a GuestUse, pub(super) &'a GuestNet);

impl AsGuest for NetRow<'_> {
    fn guest(&self) -> &GuestUse {
        self.0
    }
}

pub(super) fn cpu_columns() -> Vec<Column<GuestUse>> {
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

pub(super) fn memory_columns() -> Vec<Column<GuestUse>> {
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

pub(super) fn net_columns<'a>() -> Vec<Column<NetRow<'a>>> {
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
