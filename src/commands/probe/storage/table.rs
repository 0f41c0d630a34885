//! `--storage all`'s table: a row per storage, a column per number any of
//! them has (from the list of figures), each with the figure's decimals.

use crate::figure;
use crate::output::result::JsonReport;
use crate::output::table::Align;

/// The table, with a header of two lines (figure, unit).
pub fn table(docs: &[JsonReport]) -> String {
    let values: Vec<&figure::Value> = figure::values()
        .filter(|v| v.is_number() && v.figure.spec().per.is_none())
        .filter(|v| docs.iter().any(|d| d.reading(v).is_some()))
        .collect();
    let name = |d: &JsonReport| {
        d.pve_storage
            .as_ref()
            .map_or_else(|| d.path.clone(), |s| format!("{} ({})", s.id, s.kind))
    };
    let mut rows: Vec<Vec<String>> = vec![
        std::iter::once("storage".to_string())
            .chain(values.iter().map(|v| v.short.to_string()))
            .collect(),
        std::iter::once(String::new())
            .chain(values.iter().map(|v| v.short_unit.to_string()))
            .collect(),
    ];
    for d in docs {
        let mut row = vec![name(d)];
        row.extend(values.iter().map(|v| {
            d.reading(v)
                .map_or_else(|| "-".to_string(), |r| v.format(r.value))
        }));
        rows.push(row);
    }
    let align = |c| match c {
        0 => Align::Left,
        _ => Align::Right,
    };
    // Control characters (a path may hold any) shown escaped, so a cell
    // stays on its line.
    for cell in rows.iter_mut().flatten() {
        *cell = crate::model::printable(cell);
    }
    crate::output::table::render(&rows, align)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pve::{How, PveTarget};

    #[test]
    fn a_row_per_storage_and_a_column_per_value_any_has() {
        let mut a = crate::output::result::known::result();
        a.pve_storage = Some(PveTarget {
            id: "local".into(),
            kind: "dir".into(),
            shared: false,
            how: How::Path,
            path: Some("/var/lib/vz".into()),
            volume: None,
            device: None,
            size_bytes: None,
        });
        let mut b = a.clone();
        b.pve_storage.as_mut().unwrap().id = "local-lvm".into();
        b.pve_storage.as_mut().unwrap().kind = "lvmthin".into();
        b.extended.clear();
        let text = table(&[a, b]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0].starts_with("storage") && lines[0].contains("FSYNCS"),
            "{text}"
        );
        assert!(lines[2].starts_with("local (dir)"), "{text}");
        assert!(lines[3].starts_with("local-lvm (lvmthin)"), "{text}");
        // The second has no extended figures: dashes in their columns.
        assert!(lines[3].contains(" -"), "{text}");
        assert!(lines[0].contains("SHA256"), "{text}");
    }
}
