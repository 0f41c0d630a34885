//! Choices the command line offers by name (`--tests`, `--regex-engine`,
//! ...): the domain types say their names and what each means; the commands' `args.rs`
//! makes clap's parsers from them, so the domain types need no clap.

/// A closed set of values, each with a name for the command line.
pub trait Choice: Copy + 'static {
    /// Every value, in the order help lists them.
    const ALL: &'static [Self];

    /// The name the command line takes (and JSON records, where it does).
    fn name(self) -> &'static str;

    /// One line on what the value means, for `--help`; empty for none.
    fn help(self) -> &'static str {
        ""
    }
}
