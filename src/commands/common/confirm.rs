//! The yes a command that writes to the cluster asks for before it
//! starts: on the terminal, or `--yes`; without a terminal, a refusal.

use std::io::{BufRead, IsTerminal, Write};

use crate::error::Stop;

/// Asks on the terminal whether to go on after `plan`; without one, or
/// without a yes, refuses (exit 2) with `no_terminal` or `not_confirmed`.
pub fn confirm(plan: &str, no_terminal: &str, not_confirmed: &str) -> Result<(), Stop> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(Stop::bad_input(no_terminal.to_string()));
    }
    eprint!("{plan}Go on? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    if matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        Err(Stop::bad_input(not_confirmed.to_string()))
    }
}
