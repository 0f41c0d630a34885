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
