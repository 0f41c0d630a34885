//! Every figure pveprobe reports, in print order, and what each one is:
//! its key, label and unit, its CSV columns, which way is better, how it
//! adds up over nodes measured at once, and which settings change what it
//! means. The text lines, the JSON lookup, the CSV header, the cluster
//! table, `compare` and `--baseline` all iterate [`Figure::ALL`] and read
//! [`Figure::spec`]; adding a figure is its entry here and its measurement.
//!
//! The granularity, settled for the figures to come:
//! - a figure has one or more [`Value`]s: MIXED's read and write IOPS are
//!   two values of one figure, as latency percentiles would be; each value
//!   has its own CSV column, direction and aggregate, and is one row of
//!   `compare` and one column of the cluster table;
//! - a figure measured once per key (per job count, per storage, per node
//!   pair, per second of a series) says so in [`Spec::per`]: its JSON
//!   entries carry the key as `instance`, `compare` and `--baseline` rank
//!   each instance, the cluster table has a column per instance found.
//!   The single-run CSV has a fixed header, so it carries no per-key
//!   figure: a summary of one (a peak, a step) is a figure of its own.

pub mod projection;

/// Declares the figures, each once, in print order, with its [`Spec`]:
/// the enum, [`Figure::ALL`] and [`Figure::spec`] all come from that one
/// list, so their order cannot drift.
macro_rules! figures {
    ($($figure:ident => $spec:expr,)*) => {
        /// The figures, in the order they print: pveperf's eight, then `-x`'s,
        /// then the network's.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Figure {
            $($figure,)*
        }

        impl Figure {
            /// Every figure, in print order.
            pub const ALL: [Figure; [$(stringify!($figure)),*].len()] = [$(Figure::$figure,)*];

            /// What the figure is.
            pub fn spec(self) -> &'static Spec {
                match self {
                    $(Figure::$figure => {
                        static SPEC: Spec = $spec;
                        &SPEC
                    })*
                }
            }
        }
    };
}

/// Where a figure belongs: pveperf's lines (JSON `figures`, text from
mod list;
mod spec;
mod values;

pub use list::{Figure, all_values, values};
pub use spec::{Aggregate, Better, Field, Group, Kind, Method, Runs, Spec, Value};

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn the_table_is_in_print_order_and_its_names_are_unique() {
        for (i, f) in Figure::ALL.into_iter().enumerate() {
            assert_eq!(f as usize, i, "{f:?} is out of place");
            assert_eq!(Figure::from_key(f.key()), Some(f));
            for v in f.spec().values {
                assert_eq!(v.figure, f, "{} belongs to {f:?}", v.column);
            }
            assert_eq!(
                f.spec().values[0].field,
                Field::Value,
                "{f:?}'s first value"
            );
        }
        assert_eq!(&Figure::ALL[..8], &Figure::PVEPERF);
        assert!(Figure::PVEPERF.iter().all(|f| f.group() == Group::Pveperf));
        assert_eq!(Figure::extended().count(), 16);
        assert!(Figure::CPU_BENCH.windows(2).all(|w| w[0] < w[1]));
        let columns: BTreeSet<_> = all_values().map(|v| v.column).collect();
        let keys: BTreeSet<_> = all_values().map(|v| v.key).collect();
        assert_eq!(columns.len(), all_values().count());
        assert_eq!(keys.len(), all_values().count());
        assert!(
            Figure::NETWORK
                .iter()
                .all(|f| f.group() == Group::Network && f.spec().per == Some("link"))
        );
        assert!(values().all(|v| v.figure.group() != Group::Network));
        assert_eq!(
            &Figure::ALL[Figure::ALL.len() - 46..][..7],
            &Figure::NETWORK
        );
        assert_eq!(
            &Figure::ALL[Figure::ALL.len() - 39..][..10],
            &Figure::QUALIFY
        );
        assert!(values().all(|v| v.figure.group() != Group::Qualify));
        assert_eq!(&Figure::ALL[Figure::ALL.len() - 29..][..7], &Figure::GUEST);
        assert!(
            Figure::GUEST
                .iter()
                .all(|f| f.group() == Group::Guest && f.spec().per == Some("disk"))
        );
        assert!(values().all(|v| v.figure.group() != Group::Guest));
        assert_eq!(&Figure::ALL[Figure::ALL.len() - 22..][..9], &Figure::CEPH);
        assert!(
            Figure::CEPH
                .iter()
                .all(|f| f.group() == Group::Ceph && matches!(f.spec().per, Some("osd" | "pool")))
        );
        assert!(values().all(|v| v.figure.group() != Group::Ceph));
        assert_eq!(&Figure::ALL[Figure::ALL.len() - 13..][..5], &Figure::LOAD);
        assert!(
            Figure::LOAD
                .iter()
                .all(|f| f.group() == Group::Load
                    && matches!(f.spec().per, Some("phase" | "target")))
        );
        assert!(values().all(|v| v.figure.group() != Group::Load));
        assert_eq!(&Figure::ALL[Figure::ALL.len() - 8..], &Figure::DATASTORE);
        assert!(
            Figure::DATASTORE
                .iter()
                .all(|f| f.group() == Group::Datastore
                    && matches!(
                        f.spec().per,
                        Some("run" | "sync_level" | "in_flight" | "readers")
                    ))
        );
        assert!(values().all(|v| v.figure.group() != Group::Datastore));
        assert_eq!(Figure::from_key("nope"), None);
        assert_eq!(
            Figure::Mixed.spec().values[1].label(),
            "MIXED 70/30 4K QD16 (write)"
        );
    }

    #[test]
    fn runs_make_a_value_and_values_are_shown_with_their_decimals() {
        assert_eq!(Runs::Median.of(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(Runs::Median.of(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(Runs::Mean.of(&[100.0, 200.0, 600.0]), Some(300.0));
        assert_eq!(Runs::Mean.of(&[]), None);
        assert_eq!(Figure::SeqWrite.spec().runs, Runs::Mean);
        assert_eq!(Figure::RegexPerSecond.spec().format(11.5), "12");
        assert_eq!(Figure::AverageSeekTime.spec().format(0.25), "0.250");
        assert_eq!(Figure::FsyncsPerSecond.spec().format(1850.0), "1850.00");
    }

    #[test]
    fn direction_decides_better_and_hd_size_has_none() {
        let fsyncs = &Figure::FsyncsPerSecond.spec().values[0];
        assert_eq!(fsyncs.better_than(2.0, 1.0), Some(true));
        let seek = &Figure::AverageSeekTime.spec().values[0];
        assert_eq!(seek.better_than(2.0, 1.0), Some(false));
        assert_eq!(seek.better_than(1.0, 1.0), None);
        assert_eq!(Figure::HdSize.spec().values[0].better_than(2.0, 1.0), None);
        // Every measured number has a direction; derived ones (a percentage
        // of a band, a count of jobs) and HD SIZE are shown, not ranked.
        let measured = |v: &&Value| {
            matches!(
                v.field,
                Field::Value
                    | Field::WriteIops
                    | Field::P99Ms
                    | Field::ThreadsMbPerS
                    | Field::First10s
                    | Field::Last10s
                    | Field::SlowestSecond
                    | Field::MaxMs
                    | Field::Back
            )
        };
        // A path MTU is the links' setting, not a speed: shown, compared, not ranked.
        for v in all_values()
            .filter(measured)
            .filter(|v| !matches!(v.figure, Figure::HdSize | Figure::NetPathMtu))
        {
            assert!(v.better.is_some(), "{} has no direction", v.column);
        }
    }
}
