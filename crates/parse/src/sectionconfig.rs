//! PVE's section config files (`PVE::SectionConfig` in pve-common) read
//! line by line, as PVE reads them: `storage.cfg` ([`crate::storagecfg`])
//! and `status.cfg` ([`crate::statuscfg`]) share these rules; each file's
//! own header rule and schema stay with it.

/// How much of an ignored line a warning quotes.
const QUOTED_CHARS: usize = 80;

/// Perl's `\s` on PVE's byte strings: ASCII white space with vertical tab.
pub(crate) fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Perl's truth of a line: "" and "0" are false, and end a section.
pub(crate) fn is_false(line: &str) -> bool {
    line.is_empty() || line == "0"
}

/// The file's lines, numbered from 1, comments (`^\s*#`) passed over.
pub(crate) struct Lines<'a> {
    inner: std::iter::Enumerate<std::str::Split<'a, char>>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            inner: text.split('\n').enumerate(),
        }
    }

    /// The next line that is no comment, with its number.
    pub(crate) fn next_content(&mut self) -> Option<(usize, &'a str)> {
        self.inner
            .by_ref()
            .find(|(_, l)| !l.trim_start_matches(is_space).starts_with('#'))
            .map(|(i, l)| (i + 1, l))
    }

    /// The next line of the current section; `None` at its end.
    pub(crate) fn next_in_section(&mut self) -> Option<(usize, &'a str)> {
        self.next_content().filter(|(_, l)| !is_false(l))
    }

    pub(crate) fn skip_section(&mut self) {
        while self.next_in_section().is_some() {}
    }
}

/// `^(\S+):\s*(\S+)\s*$` as Perl matches it: the type is everything up to
/// the last colon that still leaves an ID behind.
pub(crate) fn parse_header(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_end_matches(is_space);
    if line.is_empty() || line.starts_with(is_space) {
        return None;
    }
    match line.find(is_space) {
        Some(end) => {
            let (head, rest) = line.split_at(end);
            let id = rest.trim_start_matches(is_space);
            let kind = head.strip_suffix(':')?;
            (!kind.is_empty() && !id.contains(is_space)).then_some((kind, id))
        }
        None => line
            .char_indices()
            .rev()
            .filter(|&(i, c)| c == ':' && i > 0 && i + 1 < line.len())
            .map(|(i, _)| (&line[..i], &line[i + 1..]))
            .next(),
    }
}

/// `^\s+(\S+)(\s+(.*\S))?\s*$`: an indented key and an optional value.
pub(crate) fn parse_property(line: &str) -> Option<(&str, Option<&str>)> {
    let rest = line.strip_prefix(is_space)?.trim_start_matches(is_space);
    if rest.is_empty() {
        return None;
    }
    let end = rest.find(is_space).unwrap_or(rest.len());
    let (key, value) = rest.split_at(end);
    let value = value.trim_matches(is_space);
    Some((key, (!value.is_empty()).then_some(value)))
}

/// A line for a warning: at most [`QUOTED_CHARS`] characters, control
/// characters escaped.
pub(crate) fn quote(line: &str) -> String {
    let mut out: String = line
        .chars()
        .take(QUOTED_CHARS)
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect();
    if line.chars().nth(QUOTED_CHARS).is_some() {
        out.push_str("...");
    }
    out
}
