//! What the unit tests of several modules share.

use serde_json::Value;

/// One of the JSON schemas in `docs/` (`report`, `net`), parsed.
pub fn schema(name: &str) -> Value {
    let path = format!("{}/docs/{name}.schema.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A schema property's `enum`, as strings.
pub fn enum_names(property: &Value) -> Vec<String> {
    property["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

/// Compares `text` with its pinned snapshot, `fixtures/snapshots/<name>.snap`
/// (insta). A changed output fails and leaves `<name>.snap.new` beside it
/// for `cargo insta review` (or `INSTA_UPDATE=always` accepts it); under
/// `CI` insta writes nothing, so a changed output can only fail there.
pub fn assert_snapshot(name: &str, text: &str) {
    snapshot_in(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/snapshots"),
        name,
        text,
    );
}

/// [`assert_snapshot`] with the snapshot in `dir`.
pub fn snapshot_in(dir: &str, name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// An io_uring job's stats over 2 s with 10 ms of CPU: the tests' I/O job
/// of known figures, its latencies as given.
pub(crate) fn io_stats(
    (reads, writes): (u64, u64),
    (block, depth): (usize, usize),
    read_latency: crate::model::latency::Latency,
    write_latency: crate::model::latency::Latency,
) -> crate::model::io::IoStats {
    crate::model::io::IoStats {
        engine: crate::model::io::Engine::IoUring,
        block,
        depth,
        reads,
        writes,
        elapsed: std::time::Duration::from_secs(2),
        read_latency,
        write_latency,
        cpu: std::time::Duration::from_millis(10),
        fallback: None,
    }
}
