//! Writes pveprobe's man page and shell completions, generated from the
//! clap definition (`pveprobe::commands::Opts`), below a directory:
//!
//! ```text
//! cargo run --example gen-docs -- OUTDIR
//! OUTDIR/man/pveprobe.1
//! OUTDIR/completions/bash/pveprobe
//! OUTDIR/completions/zsh/_pveprobe
//! OUTDIR/completions/fish/pveprobe.fish
//! ```
//!
//! The man page is the long help: DESCRIPTION and OPTIONS as clap_mangen
//! renders them, the long help's own sections (THE FIGURES, EXIT STATUS,
//! EXAMPLES) turned into man lists, then what only the manual says: the
//! relation to pveperf and the `pveperf` symlink, FILES and SEE ALSO.
//! `debian/rules` runs it; `cargo test` runs the tests at the bottom.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{ArgAction, CommandFactory};
use clap_complete::Shell;
use clap_mangen::roff::{Roff, bold, roman};

use pveprobe::commands::Opts;

const BIN: &str = "pveprobe";

/// One part of a man page section.
#[derive(Debug, Clone, PartialEq)]
enum Block {
    /// A filled paragraph.
    Para(String),
    /// A tagged paragraph: the tag in bold, the text indented below it.
    Item { tag: String, text: String },
    /// Commands as typed, one a line, unfilled and in bold.
    Code(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Section {
    title: String,
    blocks: Vec<Block>,
}

fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Splits "TAG  text" at its first run of two or more spaces.
fn split_at_gap(line: &str) -> Option<(&str, &str)> {
    let at = line.find("  ")?;
    Some((&line[..at], line[at..].trim_start()))
}

fn append(text: &mut String, more: &str) {
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(more.trim());
}

/// Reads the long help's sections, laid out for a terminal: a heading at
/// column 0; lists of "TAG  text" with the text continued further in; a
/// tag alone on a line when its text follows on deeper lines; paragraphs
/// of lines at the list's indent; blank lines between blocks. Under
/// EXAMPLES every line at the list's indent is a command.
fn help_sections(help: &str) -> Vec<Section> {
    let lines: Vec<&str> = help.lines().collect();
    let mut sections: Vec<Section> = Vec::new();
    let mut open = false; // the last block takes continuation lines
    let mut base = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            open = false;
            continue;
        }
        let indent = leading_spaces(line);
        if indent == 0 {
            sections.push(Section {
                title: line.trim().to_string(),
                blocks: Vec::new(),
            });
            open = false;
            base = lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .map_or(2, |l| leading_spaces(l));
            continue;
        }
        let Some(section) = sections.last_mut() else {
            continue;
        };
        let content = line.trim();
        let examples = section.title == "EXAMPLES";
        let deeper_next = lines
            .get(i + 1)
            .is_some_and(|next| !next.trim().is_empty() && leading_spaces(next) > base);
        if indent > base && open {
            match section.blocks.last_mut() {
                Some(Block::Item { text, .. } | Block::Para(text)) => append(text, content),
                Some(Block::Code(code)) => {
                    code.push('\n');
                    code.push_str(content);
                }
                None => unreachable!("open implies a block"),
            }
            continue;
        }
        let block = if let Some((tag, text)) = split_at_gap(content) {
            Block::Item {
                tag: tag.to_string(),
                text: text.to_string(),
            }
        } else if deeper_next || examples {
            Block::Item {
                tag: content.to_string(),
                text: String::new(),
            }
        } else if let (true, Some(Block::Para(text))) = (open, section.blocks.last_mut()) {
            append(text, content);
            continue;
        } else {
            Block::Para(content.to_string())
        };
        section.blocks.push(block);
        open = true;
    }
    sections
}

/// What only the manual says: pveperf, the symlink, files, other pages.
fn manual_sections() -> Vec<Section> {
    use Block::{Code, Item, Para};
    let s = |t: &str| t.to_string();
    vec![
        Section {
            title: s("RELATION TO PVEPERF"),
            blocks: vec![
                Para(s(
                    "pveperf(1) is the host probe of Proxmox VE (package pve-manager). pveprobe \
                    prints the same eight lines in the same order, with the same labels, padding \
                    (values start in column 20), units and printf formats, so scripts that parse \
                    pveperf's text can run pveprobe instead. The figures mean the same; \
                    DIFFERENCES FROM PVEPERF lists, line by line, where they are measured \
                    otherwise. It never runs a shell, leaves no files behind (also on SIGINT, \
                    SIGTERM and SIGHUP), and says on standard error why a line is missing.",
                )),
                Para(s(
                    "Run under the name pveperf, through a symbolic link or a copy, pveprobe \
                    behaves as pveperf does:",
                )),
                Item {
                    tag: s("pveperf [PATH]"),
                    text: s(
                        "No options: every argument, also one that starts with -, is the \
                        PATH; PATH defaults to /. A PATH that is missing or not a directory gives \
                        the lines that do not need it, as pveperf.",
                    ),
                },
                Item {
                    tag: s("two or more arguments"),
                    text: s(
                        "print usage: pveperf [PATH] to standard error and exit with status \
                        255, as pveperf.",
                    ),
                },
                Item {
                    tag: s("output"),
                    text: s(
                        "pveperf's eight lines only, each timed test over 3 seconds. \
                        REGEX/SECOND comes from pveperf's own loop in the host's Perl, on \
                        pveperf's scale, when perl with Time::HiRes runs, and from Rust's regex \
                        engine otherwise. The DNS lines wait as pveperf's Net::DNS resolver does \
                        (--dns-schedule pveperf), and a ZFS dataset gets no BUFFERED READS or \
                        AVERAGE SEEK TIME line. Diagnostics go to standard error.",
                    ),
                },
                Item {
                    tag: s("exit status"),
                    text: s(
                        "0, also when a line could not be measured, as pveperf; 255 for bad \
                        usage; 128 plus the signal number when interrupted by SIGINT, SIGTERM or \
                        SIGHUP, after removing the files it made.",
                    ),
                },
                Para(s(
                    "The pveprobe package does not install /usr/bin/pveperf: that file belongs \
                    to pve-manager, and two packages shipping it would break apt on every Proxmox \
                    VE node. To make the command pveperf run pveprobe, link it into a directory \
                    that comes before /usr/bin in PATH:",
                )),
                Code(s(
                    "ln -s /usr/bin/pveprobe /usr/local/sbin/pveperf\nhash -r",
                )),
                Para(s(
                    "Debian's PATH for root (login shells, sudo, systemd units) lists \
                    /usr/local/sbin before /usr/bin, so pveperf then runs pveprobe, while \
                    pve-manager's /usr/bin/pveperf stays untouched, is upgraded by apt as before \
                    and still runs by its full path. cron's default PATH (/usr/bin:/bin) does not \
                    include /usr/local/sbin, so jobs that do not set PATH keep running pve-manager's \
                    pveperf. For users whose PATH lacks /usr/local/sbin, use /usr/local/bin. To \
                    undo:",
                )),
                Code(s("rm /usr/local/sbin/pveperf")),
            ],
        },
        Section {
            title: s("FILES"),
            blocks: vec![
                Item {
                    tag: s("/proc/cpuinfo"),
                    text: s("the bogomips values summed for CPU BOGOMIPS"),
                },
                Item {
                    tag: s("/proc/self/mountinfo"),
                    text: s(
                        "the filesystem that holds PATH and its source, for HD SIZE and the \
                        disk tests",
                    ),
                },
                Item {
                    tag: s("/proc/sys/vm/drop_caches"),
                    text: s(
                        "written (3) before each disk test to drop the page cache, as pveperf \
                        does; needs root",
                    ),
                },
                Item {
                    tag: s("/etc/resolv.conf"),
                    text: s(
                        "name servers and search domain for DNS EXT and DNS INT (another file \
                        with --resolv-conf)",
                    ),
                },
                Item {
                    tag: s("/run/pveprobe.lock"),
                    text: s(
                        "the host-wide lock: one probe measures at a time (flock); the probe \
                        holding it writes its pid, start time and PATH into it. PVEPROBE_LOCK \
                        names another file, or off for none",
                    ),
                },
                Item {
                    tag: s("PATH/pveprobe.XXXXXX"),
                    text: s("the private directory of the fsync test, removed afterwards"),
                },
            ],
        },
        Section {
            title: s("SEE ALSO"),
            blocks: vec![Para(s(
                "pveperf(1), hdparm(8), ioping(1), df(1), resolv.conf(5), perl(1)",
            ))],
        },
    ]
}

fn render_sections(sections: &[Section]) -> String {
    let mut roff = Roff::new();
    for section in sections {
        roff.control("SH", [section.title.as_str()]);
        for block in &section.blocks {
            match block {
                Block::Para(text) => {
                    roff.control("PP", []).text([roman(text.as_str())]);
                }
                Block::Item { tag, text } => {
                    roff.control("TP", []).text([bold(tag.as_str())]);
                    if !text.is_empty() {
                        roff.text([roman(text.as_str())]);
                    }
                }
                Block::Code(code) => {
                    roff.control("IP", []).control("nf", []);
                    for line in code.lines() {
                        roff.text([bold(line)]);
                    }
                    roff.control("fi", []);
                }
            }
        }
    }
    // With apostrophes as roff's \*(Aq, without the preamble that
    // defines it (clap_mangen's part of the page has it already).
    roff.render()
        .lines()
        .skip_while(|l| l.starts_with(".ie ") || l.starts_with(".el "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A day since 1970-01-01 as a proleptic Gregorian YYYY-MM-DD
/// (Howard Hinnant's civil_from_days).
fn iso_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The page's date: SOURCE_DATE_EPOCH's (set by dpkg-buildpackage from
/// debian/changelog, so the package is reproducible), else today's.
fn page_date() -> Result<String> {
    let secs = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text
            .trim()
            .parse::<i64>()
            .with_context(|| format!("SOURCE_DATE_EPOCH={text:?} is not a number"))?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs()
            .try_into()?,
    };
    Ok(iso_date(secs.div_euclid(86_400)))
}

/// The whole man page, roff source.
fn man_page() -> Result<String> {
    render_page(Opts::command(), manual_sections())
}

/// The page of a subcommand: `pveprobe-cluster(1)` (the main page's
/// SUBCOMMANDS section names it), with its own long help's sections.
fn subcommand_page(name: &str) -> Result<String> {
    let mut cmd = Opts::command();
    cmd.build();
    let Some(sub) = cmd.find_subcommand(name) else {
        bail!("no subcommand {name}");
    };
    let version = env!("CARGO_PKG_VERSION");
    let see_also = Section {
        title: "SEE ALSO".into(),
        blocks: vec![Block::Para(
            "pveprobe(1), pveperf(1), ssh(1), ssh_config(5), pvecm(1)".into(),
        )],
    };
    render_page(sub.clone().version(version), vec![see_also])
}

/// Text for roff: a backslash and a hyphen-minus escaped.
fn roff_text(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

/// The SYNOPSIS of `cmd`, called `name`: every option with its value's
/// name (clap_mangen prints `[--duration]` for `--duration SECS`), the
/// positional arguments, and on the main page a second form for the
/// subcommands, each of which has its own page.
fn synopsis(cmd: &clap::Command, name: &str) -> String {
    let mut line = format!("\\fB{}\\fR", roff_text(name));
    // Options first, positional arguments last; -h and -V are in OPTIONS.
    let args = cmd
        .get_arguments()
        .filter(|a| {
            !a.is_hide_set()
                && !matches!(
                    a.get_action(),
                    ArgAction::Help
                        | ArgAction::HelpShort
                        | ArgAction::HelpLong
                        | ArgAction::Version
                )
        })
        .filter(|a| !a.is_positional())
        .chain(cmd.get_positionals().filter(|a| !a.is_hide_set()));
    for arg in args {
        let value = arg
            .get_value_names()
            .map(|names| names.join(" "))
            .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
        let many = if arg.get_num_args().is_some_and(|n| n.max_values() > 1) {
            "..."
        } else {
            ""
        };
        let item = if arg.is_positional() {
            format!("\\fI{}\\fR{many}", roff_text(&value))
        } else {
            let flag = match (arg.get_short(), arg.get_long()) {
                (Some(short), Some(long)) => {
                    format!("\\fB\\-{short}\\fR|\\fB\\-\\-{}\\fR", roff_text(long))
                }
                (Some(short), None) => format!("\\fB\\-{short}\\fR"),
                (None, Some(long)) => format!("\\fB\\-\\-{}\\fR", roff_text(long)),
                (None, None) => continue,
            };
            if arg.get_action().takes_values() {
                format!("{flag} \\fI{}\\fR{many}", roff_text(&value))
            } else {
                flag
            }
        };
        if arg.is_required_set() {
            line.push_str(&format!(" {item}"));
        } else {
            line.push_str(&format!(" [{item}]"));
        }
    }
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
        .map(|sub| format!("\\fB{}\\fR", roff_text(sub.get_name())))
        .collect();
    if !subcommands.is_empty() {
        line.push_str(&format!(
            "\n.br\n\\fB{}\\fR {} ...",
            roff_text(name),
            // `\:` lets troff break the line after a bar: the list is
            // wider than a terminal.
            subcommands.join("|\\:")
        ));
    }
    line
}

/// A page from a command: clap_mangen's NAME, DESCRIPTION and OPTIONS with
/// our SYNOPSIS, then the long help's sections and `extra`.
fn render_page(cmd: clap::Command, extra: Vec<Section>) -> Result<String> {
    let source = format!("{BIN} {}", env!("CARGO_PKG_VERSION"));
    let after = cmd
        .get_after_long_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    let name = cmd.get_bin_name().unwrap_or(cmd.get_name()).to_string();
    let synopsis = synopsis(&cmd, &name);
    let mut page = Vec::new();
    // `pveprobe help` works, but has no page of its own to point to.
    clap_mangen::Man::new(
        cmd.after_long_help(None::<&str>)
            .disable_help_subcommand(true),
    )
    .source(source)
    .date(page_date()?)
    .manual("User Commands")
    .render(&mut page)?;
    let page = String::from_utf8(page)?;
    // clap_mangen ends with VERSION (the footer has the version already);
    // the manual's own sections go there instead.
    let Some((head, _version)) = page.split_once("\n.SH VERSION\n") else {
        bail!("clap_mangen's page has no VERSION section to replace");
    };
    let Some((before, rest)) = head.split_once("\n.SH SYNOPSIS\n") else {
        bail!("clap_mangen's page has no SYNOPSIS section");
    };
    let Some((_, after_synopsis)) = rest.split_once("\n.SH ") else {
        bail!("clap_mangen's SYNOPSIS is the last section");
    };
    let head = format!("{before}\n.SH SYNOPSIS\n{synopsis}\n.SH {after_synopsis}");
    let mut sections = help_sections(&after);
    sections.extend(extra);
    // Ragged right and no hyphenation: paths and options stay whole.
    let Some((title, rest)) = head.split_once("\n.SH NAME\n") else {
        bail!("clap_mangen's page has no NAME section");
    };
    Ok(format!(
        "{title}\n.ad l\n.nh\n.SH NAME\n{rest}\n{}",
        render_sections(&sections)
    ))
}

/// Subcommands with a page of their own, `pveprobe-NAME(1)`.
const SUBCOMMAND_PAGES: [&str; 11] = [
    "compare",
    "cluster",
    "storages",
    "net",
    "qualify",
    "guest",
    "ceph",
    "load",
    "top",
    "record",
    "datastore",
];

/// (shell, file below completions/).
const SHELLS: [(Shell, &str); 3] = [
    (Shell::Bash, "bash/pveprobe"),
    (Shell::Zsh, "zsh/_pveprobe"),
    (Shell::Fish, "fish/pveprobe.fish"),
];

fn completion(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Opts::command(), BIN, &mut out);
    out
}

fn write(path: &Path, contents: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    // An option is not a directory: `gen-docs --help` prints the usage.
    let (Some(out), None) = (args.next().map(PathBuf::from), args.next()) else {
        bail!("usage: gen-docs OUTDIR");
    };
    if out.to_string_lossy().starts_with('-') {
        bail!("usage: gen-docs OUTDIR (writes OUTDIR/man and OUTDIR/completions)");
    }
    write(&out.join("man/pveprobe.1"), man_page()?.as_bytes())?;
    for sub in SUBCOMMAND_PAGES {
        let page = subcommand_page(sub)?;
        write(&out.join(format!("man/pveprobe-{sub}.1")), page.as_bytes())?;
    }
    for (shell, file) in SHELLS {
        write(&out.join("completions").join(file), &completion(shell))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    fn block_words(sections: &[Section]) -> Vec<String> {
        let mut all = Vec::new();
        for s in sections {
            all.extend(words(&s.title).into_iter().map(str::to_string));
            for b in &s.blocks {
                let texts: Vec<&str> = match b {
                    Block::Para(t) | Block::Code(t) => vec![t],
                    Block::Item { tag, text } => vec![tag, text],
                };
                for t in texts {
                    all.extend(words(t).into_iter().map(str::to_string));
                }
            }
        }
        all
    }

    #[test]
    fn dates_are_gregorian() {
        assert_eq!(iso_date(0), "1970-01-01");
        assert_eq!(iso_date(-1), "1969-12-31");
        assert_eq!(iso_date(11_016), "2000-02-29");
        assert_eq!(iso_date(20_454), "2026-01-01");
        assert_eq!(iso_date(19_782), "2024-02-29");
    }

    #[test]
    fn reads_lists_paragraphs_and_examples() {
        let help = "\
LIST
  ONE        first line
             goes on
  TWO WORDS  second
  A paragraph that
  spans two lines.

  130, 143
       a tag alone, text below
EXAMPLES
  cmd one
  cmd two   what it does
";
        let got = help_sections(help);
        let item = |tag: &str, text: &str| Block::Item {
            tag: tag.into(),
            text: text.into(),
        };
        assert_eq!(
            got,
            vec![
                Section {
                    title: "LIST".into(),
                    blocks: vec![
                        item("ONE", "first line goes on"),
                        item("TWO WORDS", "second"),
                        Block::Para("A paragraph that spans two lines.".into()),
                        item("130, 143", "a tag alone, text below"),
                    ],
                },
                Section {
                    title: "EXAMPLES".into(),
                    blocks: vec![item("cmd one", ""), item("cmd two", "what it does")],
                },
            ]
        );
    }

    #[test]
    fn the_long_help_loses_no_word_and_keeps_its_sections() {
        let help = Opts::command()
            .get_after_long_help()
            .expect("the long help has sections")
            .to_string();
        let sections = help_sections(&help);
        assert_eq!(block_words(&sections), words(&help));
        let titles: Vec<&str> = sections.iter().map(|s| s.title.as_str()).collect();
        for wanted in ["THE FIGURES", "EXIT STATUS", "EXAMPLES"] {
            assert!(titles.contains(&wanted), "{titles:?}");
        }
        let figures = &sections[titles.iter().position(|t| *t == "THE FIGURES").unwrap()];
        let tags: Vec<&str> = figures
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Item { tag, .. } => Some(tag.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            tags,
            [
                "CPU BOGOMIPS",
                "REGEX/SECOND",
                "HD SIZE",
                "BUFFERED READS",
                "AVERAGE SEEK TIME",
                "FSYNCS/SECOND",
                "DNS EXT",
                "DNS INT"
            ]
        );
    }

    /// The page with roff's escapes for `-` and `'` undone, for searching.
    fn plain_page() -> String {
        man_page()
            .unwrap()
            .replace("\\-", "-")
            .replace("\\*(Aq", "'")
            .replace("\\ ", " ")
    }

    #[test]
    fn man_page_has_every_option_section_and_the_pveperf_link() {
        let page = plain_page();
        assert!(page.starts_with(".ie"), "roff preamble first");
        let th = page.lines().find(|l| l.starts_with(".TH ")).unwrap();
        let version = env!("CARGO_PKG_VERSION");
        let th_re =
            format!(r#"^\.TH pveprobe 1 \d{{4}}-\d\d-\d\d "pveprobe {version}" "User Commands"$"#);
        assert!(regex::Regex::new(&th_re).unwrap().is_match(th), "{th}");
        for arg in Opts::command().get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                assert!(page.contains(&format!("--{long}")), "--{long} missing");
            }
        }
        for section in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "THE FIGURES",
            "DIFFERENCES FROM PVEPERF",
            "EXIT STATUS",
            "EXAMPLES",
            "RELATION TO PVEPERF",
            "FILES",
            "SEE ALSO",
        ] {
            let heading = if section.contains(' ') {
                format!("\n.SH \"{section}\"\n")
            } else {
                format!("\n.SH {section}\n")
            };
            assert_eq!(page.matches(&heading).count(), 1, "{section}");
        }
        assert!(!page.contains(".SH VERSION") && !page.contains(".SH EXTRA"));
        for words in [
            "ln -s /usr/bin/pveprobe /usr/local/sbin/pveperf",
            "usage: pveperf [PATH]",
            "status 255",
            "pve-manager's /usr/bin/pveperf stays untouched",
            "pveperf's scale",
            "rust: Rust's",
            "perl: The host's Perl",
            "open (create, truncate), fsync, write 4001 bytes",
            "one dead server of one costs 1000 ms",
        ] {
            assert!(page.contains(words), "{words:?} missing");
        }
    }

    /// The SYNOPSIS section of a page, roff escapes and fonts removed.
    fn synopsis_of(page: &str) -> String {
        let (_, rest) = page.split_once("\n.SH SYNOPSIS\n").unwrap();
        let (synopsis, _) = rest.split_once("\n.SH ").unwrap();
        synopsis
            .replace("\\fB", "")
            .replace("\\fI", "")
            .replace("\\fR", "")
            .replace("\\-", "-")
            .replace("\\:", "")
    }

    #[test]
    fn synopses_name_each_option_with_its_value_and_only_real_pages() {
        let main = synopsis_of(&man_page().unwrap());
        assert!(
            main.starts_with("pveprobe [--duration SECS] [--tests LIST] "),
            "{main}"
        );
        assert!(main.contains(" [-x|--extended] [--write-size SIZE] [--zero-data] "));
        assert!(
            main.contains(
                " [--io-engine ENGINE] [--sync-mode MODE] [--sync-jobs LIST] [--plp yes|no] [--cpu-threads N|all] [--sustained SECS] [--storage ID|all] [-q|--quiet] [--output-format FORMAT] [--output FILE] [--append] [--plot FILE] [-v|--verbose] "
            ),
            "{main}"
        );
        assert!(main.contains(
            " [--no-wait] [PATH]\n.br\npveprobe compare|cluster|storages|net|qualify|guest|ceph|load|top|record|datastore ..."
        ));
        assert!(
            !main.contains("--help") && !main.contains("help|"),
            "{main}"
        );
        let compare = synopsis_of(&subcommand_page("compare").unwrap());
        assert_eq!(
            compare,
            "pveprobe compare [-q|--quiet] [--output-format FORMAT] [--output FILE] [--append] [--plot FILE] FILE..."
        );
        let cluster = synopsis_of(&subcommand_page("cluster").unwrap());
        assert!(
            cluster.contains(" [--parallel] [--timeout SECS] "),
            "{cluster}"
        );
        assert!(
            cluster.contains(" [--append] [--plot FILE] [--save-dir DIR] "),
            "{cluster}"
        );
        assert!(cluster.ends_with(" [PATH]"), "{cluster}");
        let storages = synopsis_of(&subcommand_page("storages").unwrap());
        assert_eq!(
            storages,
            "pveprobe storages [-q|--quiet] [--output-format FORMAT] [--output FILE] [--append] [--plot FILE]"
        );
        let net = synopsis_of(&subcommand_page("net").unwrap());
        assert!(net.starts_with("pveprobe net "), "{net}");
        assert!(net.contains(" [--net-throughput] [--link LINK] "), "{net}");
        assert!(net.ends_with(" NODE..."), "{net}");
        assert!(!net.contains("--pve-config"), "hidden: {net}");
        // Every page the main page points to exists.
        let page = man_page().unwrap();
        let pointed: Vec<&str> = page
            .lines()
            .filter_map(|l| l.strip_prefix("pveprobe\\-")?.strip_suffix("(1)"))
            .collect();
        assert_eq!(pointed, SUBCOMMAND_PAGES);
    }

    #[test]
    fn subcommand_pages_have_every_option_and_their_sections() {
        let mut cmd = Opts::command();
        cmd.build();
        for name in SUBCOMMAND_PAGES {
            let page = subcommand_page(name)
                .unwrap()
                .replace("\\-", "-")
                .replace("\\*(Aq", "'");
            let th = page.lines().find(|l| l.starts_with(".TH ")).unwrap();
            let version = env!("CARGO_PKG_VERSION");
            assert!(
                th.starts_with(&format!(".TH pveprobe-{name} 1 "))
                    && th.ends_with(&format!(" \"pveprobe {version}\" \"User Commands\"")),
                "{th}"
            );
            let sub = cmd.find_subcommand(name).unwrap();
            for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    assert!(
                        page.contains(&format!("--{long}")),
                        "{name}: --{long} missing"
                    );
                }
            }
            for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SEE ALSO"] {
                assert!(
                    page.contains(&format!("\n.SH {section}\n"))
                        || page.contains(&format!("\n.SH \"{section}\"\n")),
                    "{name}: {section}"
                );
            }
            assert!(!page.contains(".SH VERSION") && !page.contains(".SH EXTRA"));
        }
        let qualify = subcommand_page("qualify").unwrap();
        for section in ["SAFETY", "\"THE TESTS\"", "EXAMPLES"] {
            assert_eq!(
                qualify.matches(&format!("\n.SH {section}\n")).count(),
                1,
                "qualify: {section}"
            );
        }
        let cluster = subcommand_page("cluster").unwrap();
        for section in [
            "MEMBERS",
            "\"HOW NODES ARE RUN\"",
            "\"THE TABLE\"",
            "\"EXIT STATUS\"",
            "EXAMPLES",
        ] {
            assert_eq!(
                cluster.matches(&format!("\n.SH {section}\n")).count(),
                1,
                "{section}"
            );
        }
        let help = cmd
            .find_subcommand("cluster")
            .unwrap()
            .get_after_long_help()
            .unwrap()
            .to_string();
        assert_eq!(block_words(&help_sections(&help)), words(&help));
    }

    #[test]
    fn completions_know_every_option() {
        for (shell, file) in SHELLS {
            let script = String::from_utf8(completion(shell)).unwrap();
            assert!(script.contains(BIN), "{file}");
            for arg in Opts::command().get_arguments() {
                if let Some(long) = arg.get_long() {
                    assert!(script.contains(long), "{file} lacks --{long}");
                }
            }
            assert!(
                script.contains("fsync") && script.contains("perl"),
                "{file}: values"
            );
        }
    }
}
