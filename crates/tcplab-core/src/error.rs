//! The error every layer reports a bad scenario with: where in the scenario (a dotted key path,
//! `flows[0].tcp.mss`) and what was wrong. It sits at the bottom of the core so that no module
//! has to import the scenario's schema to refuse a value.

use std::fmt;

/// A scenario error: where in the scenario (a dotted key path) and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

pub fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError { path: path.into(), message: message.into() })
}

/// The mark of a refusal made inside a table that a deserialiser reads as a whole (an
/// application entry, read by its `kind`): serde's path ends at the table, so the message carries
/// the key path within it, `MARK path MARK message`, and `input::refusal` joins the two.
const NESTED_MARK: char = '\u{1}';

/// A message for a refusal at `path` within the table being read.
pub fn nested(path: &str, message: &str) -> String {
    format!("{NESTED_MARK}{path}{NESTED_MARK}{message}")
}

/// The key path within the table and the message of a `nested` refusal; None for any other.
pub fn split_nested(message: &str) -> Option<(&str, &str)> {
    message.strip_prefix(NESTED_MARK)?.split_once(NESTED_MARK)
}

/// `outer.inner`, where either may be empty (serde writes the root as `.`).
pub fn join_path(outer: &str, inner: &str) -> String {
    let inner = if inner == "." { "" } else { inner };
    match (outer.is_empty(), inner.is_empty()) {
        (_, true) => outer.to_string(),
        (true, false) => inner.to_string(),
        (false, false) if inner.starts_with('[') => format!("{outer}{inner}"),
        (false, false) => format!("{outer}.{inner}"),
    }
}
