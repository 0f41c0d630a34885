//! The yes a command that writes to the cluster asks for before it
//! starts: on the terminal (the one prompt, `Progress::ask`), or `--yes`;
//! without a terminal, a refusal.

use crate::error::Stop;
use crate::output::progress::Progress;

/// Asks on the terminal whether to go on after `plan`; without one, or
/// without a yes, refuses (exit 2) with `no_terminal` or `not_confirmed`.
pub fn confirm(
    progress: &Progress,
    plan: &str,
    no_terminal: &str,
    not_confirmed: &str,
) -> Result<(), Stop> {
    let Some(line) = progress.ask(plan, "Go on? [y/N]") else {
        return Err(Stop::bad_input(no_terminal.to_string()));
    };
    if matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        Err(Stop::bad_input(not_confirmed.to_string()))
    }
}
