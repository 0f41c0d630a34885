//! A figure's line as pveperf prints it: the label and a colon, padded so
//! the value starts in its group's column (pveperf's eight lines at 20,
//! the extended lines at 27, qualify's, guest's and ceph's at 29).
//! Existing parsers split at the first `:` and read the float that
//! follows, so these columns are a contract.

use crate::figure::{Figure, Group};

/// Column where every pveperf value starts (pveperf pads `AVERAGE SEEK TIME: `).
pub const VALUE_COLUMN: usize = 19;

/// Column where the extended lines' values start (their labels are longer).
pub const X_VALUE_COLUMN: usize = 26;

/// Column where `qualify`'s values start.
pub const Q_VALUE_COLUMN: usize = 28;

/// The label padded so the value starts in its group's column.
pub fn label(figure: Figure) -> String {
    let width = match figure.group() {
        Group::Pveperf => VALUE_COLUMN,
        Group::Extended | Group::Network => X_VALUE_COLUMN,
        Group::Qualify | Group::Guest | Group::Ceph | Group::Load | Group::Datastore => {
            Q_VALUE_COLUMN
        }
    };
    format!("{:<width$}", format!("{}:", figure.label()))
}
