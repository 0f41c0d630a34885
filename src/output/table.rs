//! Text tables: cells in columns, each as wide as its widest cell, two
//! spaces apart, no white space at the end of a line. A row shorter than
//! the widest (a node that did not answer, with its reason) runs on past
//! the columns it lacks and does not widen them.

/// How a column's cells sit in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// The rows as lines (each ending in a newline); `align` tells each
/// column's alignment by its index.
pub fn render(rows: &[Vec<String>], align: impl Fn(usize) -> Align) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows.iter().filter(|r| r.len() == columns) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| {
                // Padding by characters, not bytes (`{:w$}` counts chars).
                match align(c) {
                    Align::Left => format!("{cell:<w$}"),
                    Align::Right => format!("{cell:>w$}"),
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&[&str]]) -> Vec<Vec<String>> {
        r.iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect()
    }

    #[test]
    fn columns_as_wide_as_their_widest_cell() {
        let t = rows(&[&["name", "MB/s"], &["ümlaut-node", "9"], &["b", "1234.5"]]);
        let right = |c| if c == 0 { Align::Left } else { Align::Right };
        assert_eq!(
            render(&t, right),
            "name           MB/s\nümlaut-node       9\nb            1234.5\n"
        );
    }

    #[test]
    fn a_short_row_runs_on_and_does_not_widen_columns() {
        let t = rows(&[
            &["LINK", "PAIR", "RTT", ""],
            &["ring0", "a-b", "0.12", "!"],
            &["ring0", "a-c", "unreachable: no route to host"],
        ]);
        assert_eq!(
            render(&t, |_| Align::Left),
            "LINK   PAIR  RTT\nring0  a-b   0.12  !\nring0  a-c   unreachable: no route to host\n"
        );
    }
}
