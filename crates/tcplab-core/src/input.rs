//! The input boundary of a scenario. Every way one arrives (TOML text, JSON text such as a Python
//! dict's `json.dumps`, `--set` overrides, sweep axes) becomes one TOML value tree that keeps what
//! was written, non-finite numbers included, so that the typed deserialisers of `scenario.rs` and
//! `units.rs` judge every value in one place and a refusal names its key path.
//!
//! Why not `serde_json::Value`: it cannot hold NaN or ±inf (serde_json writes them as `null`,
//! which an optional key reads as "unset"), so `loss = nan` used to run with no loss at all.

use crate::error::{err, ScenarioError};
use crate::units::show_number;
use toml::Value;

/// A scenario before it is checked: a TOML table.
pub type Tree = toml::Value;

/// How deep a JSON scenario may nest. The schema is at most six levels deep; the bound keeps a
/// hostile input from exhausting the stack of the recursive reader.
const MAX_DEPTH: usize = 64;

/// Read TOML text into a tree.
pub fn from_toml_text(text: &str) -> Result<Tree, ScenarioError> {
    toml::from_str::<toml::Table>(text).map(Value::Table).map_err(|e| {
        let loc = e.span().map(|s| line_col(text, s.start)).map(|(l, c)| format!(" (line {l}, column {c})")).unwrap_or_default();
        ScenarioError { path: String::new(), message: format!("invalid TOML{loc}: {}", e.message()) }
    })
}

/// Read JSON text into a tree. Beside strict JSON this reads `NaN`, `Infinity` and `-Infinity`,
/// which Python's `json.dumps` writes for non-finite floats, so that they reach the typed checks
/// instead of failing as a syntax error with no key path. A member whose value is `null` is left
/// out (Python's `None`: the key is not given); `null` in an array is refused.
pub fn from_json_text(text: &str) -> Result<Tree, ScenarioError> {
    let mut r = JsonReader { text, b: text.as_bytes(), i: 0, path: Vec::new() };
    r.ws();
    let v = r.value(0)?;
    r.ws();
    if r.i < r.b.len() {
        return r.fail("trailing characters after the scenario");
    }
    match v {
        Some(v @ Value::Table(_)) => Ok(v),
        _ => err("", "a scenario is a table (a JSON object)"),
    }
}

/// A `serde_json::Value` (a scenario built in Rust, or echoed by `Scenario::to_json`) as a tree,
/// with the same reading of `null` as `from_json_text`.
pub fn from_json_value(v: serde_json::Value) -> Result<Tree, ScenarioError> {
    fn conv(v: serde_json::Value, path: &mut Vec<Seg>) -> Result<Option<Value>, ScenarioError> {
        Ok(Some(match v {
            serde_json::Value::Null => return Ok(None),
            serde_json::Value::Bool(b) => Value::Boolean(b),
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Value::Integer(i),
                (None, Some(_)) if n.is_u64() => return err(show_path(path), format!("expected at most {}, got {n}", i64::MAX)),
                (None, Some(f)) => Value::Float(f),
                (None, None) => return err(show_path(path), format!("expected a number, got {n}")),
            },
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(a) => {
                let mut out = Vec::with_capacity(a.len());
                for (i, x) in a.into_iter().enumerate() {
                    path.push(Seg::Index(i));
                    match conv(x, path)? {
                        Some(x) => out.push(x),
                        None => return err(show_path(path), "expected a value, got null"),
                    }
                    path.pop();
                }
                Value::Array(out)
            }
            serde_json::Value::Object(m) => {
                let mut t = toml::Table::new();
                for (k, x) in m {
                    path.push(Seg::Key(k.clone()));
                    if let Some(x) = conv(x, path)? {
                        t.insert(k, x);
                    }
                    path.pop();
                }
                Value::Table(t)
            }
        }))
    }
    match conv(v, &mut Vec::new())? {
        Some(v @ Value::Table(_)) => Ok(v),
        _ => err("", "a scenario is a table (a JSON object)"),
    }
}

/// One component of a key path.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A key path as the refusals write it: `flows[0].tcp.mss`.
fn show_path(path: &[Seg]) -> String {
    let mut s = String::new();
    for p in path {
        match p {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    // An offset inside a character (a reader that stopped mid-character) counts from its start.
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.chars().count() - before.rfind('\n').map_or(0, |i| before[..=i].chars().count()) + 1;
    (line, col)
}

/// A small recursive-descent JSON reader that builds the tree directly (see `from_json_text`).
struct JsonReader<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    path: Vec<Seg>,
}

impl JsonReader<'_> {
    fn fail<T>(&self, what: &str) -> Result<T, ScenarioError> {
        let (l, c) = line_col(self.text, self.i);
        err(show_path(&self.path), format!("invalid JSON (line {l}, column {c}): {what}"))
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    /// A value; `None` for `null`.
    fn value(&mut self, depth: usize) -> Result<Option<Value>, ScenarioError> {
        if depth > MAX_DEPTH {
            return self.fail(&format!("nested more than {MAX_DEPTH} levels deep"));
        }
        let Some(&c) = self.b.get(self.i) else { return self.fail("unexpected end of the text") };
        Ok(Some(match c {
            b'{' => self.object(depth)?,
            b'[' => self.array(depth)?,
            b'"' => Value::String(self.string()?),
            b't' if self.eat("true") => Value::Boolean(true),
            b'f' if self.eat("false") => Value::Boolean(false),
            b'n' if self.eat("null") => return Ok(None),
            b'N' if self.eat("NaN") => Value::Float(f64::NAN),
            b'I' if self.eat("Infinity") => Value::Float(f64::INFINITY),
            b'-' if self.eat("-Infinity") => Value::Float(f64::NEG_INFINITY),
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return self.fail("expected a value"),
        }))
    }

    fn object(&mut self, depth: usize) -> Result<Value, ScenarioError> {
        self.i += 1;
        let mut t = toml::Table::new();
        self.ws();
        if self.eat("}") {
            return Ok(Value::Table(t));
        }
        loop {
            self.ws();
            if self.b.get(self.i) != Some(&b'"') {
                return self.fail("expected a key in double quotes");
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(":") {
                return self.fail("expected `:` after the key");
            }
            self.ws();
            self.path.push(Seg::Key(k.clone()));
            if t.contains_key(&k) {
                return err(show_path(&self.path), "the key is given twice");
            }
            if let Some(v) = self.value(depth + 1)? {
                t.insert(k, v);
            }
            self.path.pop();
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                return Ok(Value::Table(t));
            }
            return self.fail("expected `,` or `}`");
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ScenarioError> {
        self.i += 1;
        let mut a = Vec::new();
        self.ws();
        if self.eat("]") {
            return Ok(Value::Array(a));
        }
        loop {
            self.ws();
            self.path.push(Seg::Index(a.len()));
            match self.value(depth + 1)? {
                Some(v) => a.push(v),
                None => return err(show_path(&self.path), "expected a value, got null"),
            }
            self.path.pop();
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(Value::Array(a));
            }
            return self.fail("expected `,` or `]`");
        }
    }

    fn hex4(&mut self) -> Result<u32, ScenarioError> {
        let h = self.text.get(self.i..self.i + 4).filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
        match h {
            Some(h) => {
                self.i += 4;
                Ok(u32::from_str_radix(h, 16).expect("four hex digits"))
            }
            None => self.fail("expected four hex digits after \\u"),
        }
    }

    fn string(&mut self) -> Result<String, ScenarioError> {
        self.i += 1;
        let mut s = String::new();
        loop {
            let start = self.i;
            while self.i < self.b.len() && !matches!(self.b[self.i], b'"' | b'\\') && self.b[self.i] >= 0x20 {
                self.i += 1;
            }
            s.push_str(&self.text[start..self.i]);
            match self.b.get(self.i) {
                None => return self.fail("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(s);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let Some(&e) = self.b.get(self.i) else { return self.fail("unterminated string") };
                    self.i += 1;
                    match e {
                        b'"' => s.push('"'),
                        b'\\' => s.push('\\'),
                        b'/' => s.push('/'),
                        b'b' => s.push('\u{8}'),
                        b'f' => s.push('\u{c}'),
                        b'n' => s.push('\n'),
                        b'r' => s.push('\r'),
                        b't' => s.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi) && self.eat("\\u") {
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return lone_surrogate(&self.path, hi);
                                }
                                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            } else {
                                char::from_u32(hi)
                            };
                            match c {
                                Some(c) => s.push(c),
                                None => return lone_surrogate(&self.path, hi),
                            }
                        }
                        _ => {
                            self.i -= 2; // at the backslash, a character boundary
                            return self.fail("unknown escape in a string");
                        }
                    }
                }
                Some(_) => return self.fail("a control character in a string (write it as an escape)"),
            }
        }
    }

    fn number(&mut self) -> Result<Value, ScenarioError> {
        let start = self.i;
        let digits = |r: &mut Self| {
            let s = r.i;
            while r.i < r.b.len() && r.b[r.i].is_ascii_digit() {
                r.i += 1;
            }
            r.i > s
        };
        self.eat("-");
        if !digits(self) {
            return self.fail("expected a number");
        }
        let mut float = false;
        if self.eat(".") {
            float = true;
            if !digits(self) {
                return self.fail("expected digits after the decimal point");
            }
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            float = true;
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return self.fail("expected digits in the exponent");
            }
        }
        let n = &self.text[start..self.i];
        if float {
            return Ok(Value::Float(n.parse().expect("a JSON number is a Rust float")));
        }
        match n.parse::<i64>() {
            Ok(i) => Ok(Value::Integer(i)),
            // A whole number beyond i64 (what TOML holds): refused where it stands, since
            // every integer key of the schema is far below that.
            Err(_) => err(show_path(&self.path), format!("expected a whole number from {} to {}, got {n}", i64::MIN, i64::MAX)),
        }
    }
}

fn lone_surrogate<T>(path: &[Seg], unit: u32) -> Result<T, ScenarioError> {
    err(show_path(path), format!("expected text, got a lone surrogate \\u{unit:04x} (not a Unicode character)"))
}

/// Apply one `key.path=value` override. The value is read as TOML (`3`, `"3s"`, `true`, `nan`,
/// `[1, 2]`, `{ packets = 5 }`); a bare word that is not TOML is taken as a string
/// (`variant=reno`). Path components that are numbers index arrays (`flows.0.bytes`).
pub fn apply_override(root: &mut Tree, assignment: &str) -> Result<(), ScenarioError> {
    let (key, raw) = assignment.split_once('=').ok_or_else(|| ScenarioError { path: assignment.into(), message: "an override is written key.path=value".into() })?;
    let key = key.trim();
    let raw = raw.trim();
    let value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        // Exactly one key: a raw value with a newline could otherwise smuggle in more keys.
        Ok(mut t) if t.len() == 1 => t.remove("v").expect("the one key"),
        Ok(_) => return err(key, format!("expected one value, got {raw:?}")),
        Err(_) => Value::String(raw.to_string()),
    };
    set_path(root, key, value)
}

/// Set the value at a dotted key path, creating tables on the way.
pub fn set_path(root: &mut Tree, key: &str, value: Value) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return err(key, "empty component in key path");
    }
    let mut cur = root;
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let here = parts[..=i].join(".");
        cur = match cur {
            Value::Array(a) => {
                let idx: usize = p.parse().map_err(|_| ScenarioError { path: here.clone(), message: "expected an array index".into() })?;
                let len = a.len();
                let slot = a.get_mut(idx).ok_or_else(|| ScenarioError { path: here.clone(), message: format!("index {idx} out of range ({len} elements)") })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            Value::Table(m) => {
                if last {
                    m.insert(p.to_string(), value);
                    return Ok(());
                }
                m.entry(p.to_string()).or_insert_with(|| Value::Table(Default::default()))
            }
            _ => return err(here, "is not a table or an array"),
        };
    }
    Ok(())
}

/// The value at a key path as serde_path_to_error writes it (`flows[0].tcp.mss`), if any.
fn lookup<'a>(root: &'a Tree, path: &str) -> Option<&'a Value> {
    let mut cur = root;
    for part in path.split('.') {
        let (key, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            cur = cur.as_table()?.get(key)?;
        }
        for idx in rest.split('[').skip(1) {
            cur = cur.as_array()?.get(idx.strip_suffix(']')?.parse::<usize>().ok()?)?;
        }
    }
    Some(cur)
}

/// What a value is, in a refusal: the number or text itself, else its kind.
fn describe(v: &Value) -> String {
    match v {
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => show_number(*f),
        Value::Boolean(b) => b.to_string(),
        Value::String(s) => format!("{s:?}"),
        Value::Datetime(d) => format!("the date {d}"),
        Value::Array(_) => "an array".into(),
        Value::Table(_) => "a table".into(),
    }
}

/// A refusal of the typed reading at `path`, in plain words: a missing key is named as the path
/// itself (`flows[0].bytes: required`), not as its table.
pub fn refusal(message: &str, root: &Tree, path: String) -> ScenarioError {
    if let Some((inner, message)) = crate::error::split_nested(message) {
        return refusal(message, root, crate::error::join_path(&path, inner));
    }
    if let Some(field) = message.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
        let path = if path.is_empty() { field.to_string() } else { format!("{path}.{field}") };
        return ScenarioError { path, message: "required, and missing".into() };
    }
    let message = match unknown_name(message) {
        Some((kind, word, candidates)) => {
            let mut extra = String::new();
            if let Some(note) = not_modelled(word) {
                extra = format!(" ({note})");
            } else if let Some(near) = did_you_mean(word, &candidates) {
                extra = format!(" (did you mean `{near}`?)");
            }
            let head = format!("unknown {kind} `{word}`");
            format!("{head}{extra}{}", &message[head.len()..])
        }
        None => plain_words(message, root, &path),
    };
    ScenarioError { path, message }
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant ..."): its kind
/// (`field`, `variant`), the word and the names it expected.
fn unknown_name(message: &str) -> Option<(&str, &str, Vec<&str>)> {
    let (kind, rest) = message.strip_prefix("unknown field `").map(|r| ("field", r)).or_else(|| message.strip_prefix("unknown variant `").map(|r| ("variant", r)))?;
    let (word, rest) = rest.split_once('`')?;
    let candidates = rest.split('`').skip(1).step_by(2).collect();
    Some((kind, word, candidates))
}

/// Levenshtein distance between two short names (by character).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j])).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The name of `candidates` nearest to `word` when it is near enough to be a slip (at most a
/// third of its length away, and at least 1), else None; a name that contains the word, or is
/// contained in it (`sack` for `sackblocks`), counts too.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let limit = (w.chars().count() / 3).max(1);
    let best = candidates.iter().map(|c| (edit_distance(&w, &c.to_ascii_lowercase()), *c)).min_by_key(|(d, _)| *d)?;
    if best.0 <= limit {
        return Some(best.1);
    }
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', '-'], "");
    candidates.iter().find(|c| norm(c) == norm(&w)).copied()
}

/// TCP mechanisms people look for that the simulator does not model, by the names they try
/// (a key or a variant), with where to look instead.
pub fn not_modelled(word: &str) -> Option<String> {
    const REAL: &str = "`tcplab testbed` runs the real Linux stack beside a simulation (docs/testbed.md)";
    let w = word.to_ascii_lowercase().replace('-', "_");
    let cc = ["bbr2", "bbrv2", "bbr3", "bbrv3", "bic", "vegas", "westwood", "htcp", "hybla", "compound", "illinois", "highspeed", "scalable", "yeah", "veno", "cdg"];
    let msg = if w == "cubic" {
        "CUBIC is the congestion controller `cc = \"cubic\"` (Linux's, with HyStart); `variant` is the loss recovery".to_string()
    } else if w == "bbr" || w == "bbr1" || w == "bbrv1" {
        "BBR v1 is the congestion controller `cc = \"bbr\"` (Linux's `tcp_bbr.c`, paced); `variant` is the loss recovery".to_string()
    } else if w == "dctcp" {
        "DCTCP is the congestion controller `cc = \"dctcp\"` (Linux's `tcp_dctcp.c`, RFC 8257; ECN on every packet); `variant` is the loss recovery".to_string()
    } else if cc.contains(&w.as_str()) {
        format!("{} is not modelled: the simulator's congestion controllers are `cc = \"reno\"` (with the Tahoe, Reno, NewReno, SACK and FACK recoveries of `variant`), `cc = \"cubic\"`, `cc = \"bbr\"` (BBR v1) and `cc = \"dctcp\"`; {REAL} with `--congctl {w}`", word.to_uppercase())
    } else {
        match w.as_str() {
            "congestion_control" | "congctl" | "congestion" | "algorithm" | "cc_algo" => format!(
                "the congestion controller is `cc` (\"reno\", \"cubic\", \"bbr\" or \"dctcp\") and the loss recovery `variant` (or a `preset`); {REAL} with `--congctl`"
            ),
            "hystart" | "hystartpp" | "hystart_pp" | "hystart++" => "slow start's exit is the TCP knob `slow_start`: \"hystart\" (Linux's classic, part of `cc = \"cubic\"` and its default), \"hystart++\" (RFC 9406), \"standard\"".to_string(),
            "ecn" | "ecn_enabled" => "ECN (RFC 3168) is the TCP knob `ecn` (true or \"on\", \"accept\", false); queues mark CE by RED with `ecn = true` or at a step `mark_threshold` (docs/ecn.md)".to_string(),
            "pace" | "paced" => "pacing is the knob `pacing = true` (Linux's internal pacing; `cc = \"bbr\"` paces anyway), or the fq qdisc on a host's link: `queue = { kind = \"fq\" }` (docs/scenarios.md)".to_string(),
            "fq" => "the fq qdisc is a queue of a link direction leaving a host: `queue = { kind = \"fq\" }` (docs/scenarios.md)".to_string(),
            "timestamps" | "timestamp" | "tsopt" => "TCP timestamps (RFC 7323) are the TCP knob `timestamps = true`".to_string(),
            "window_scaling" | "wscale" | "window_scale" => "window scaling is not modelled: set the receive window with `rwnd` (any size)".to_string(),
            "rack" => "RACK (RFC 8985) is the TCP knob `loss = \"rack\"` (the `linux` profile's)".to_string(),
            "tlp" => "the tail loss probe (RFC 8985 §7) is the TCP knob `tlp = true` (the `linux` profile's)".to_string(),
            "prr" => "PRR (RFC 9937) is the TCP knob `reduction = \"prr\"` (the `linux` profile's)".to_string(),
            "dsack" | "d_sack" => "D-SACK (RFC 2883) is the TCP knob `dsack = true` (the receiver's; the `linux` profile's, whose sender reads D-SACKs and undoes spurious reductions with `undo = true`)".to_string(),
            "frto" | "f_rto" => "F-RTO (RFC 5682) is the TCP knob `frto = true` (the `linux` profile's)".to_string(),
            _ => return None,
        }
    };
    Some(msg)
}

/// serde's generic refusals in plain words, with the value as written: "invalid type: floating
/// point `NaN`, expected u32" becomes "expected a whole number from 0 to 4294967295, got nan".
pub fn plain_words(message: &str, root: &Tree, path: &str) -> String {
    let rest = match message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: ")) {
        Some(r) => r,
        None => return message.to_string(),
    };
    let Some((_, expected)) = rest.rsplit_once(", expected ") else { return message.to_string() };
    let expected = match expected {
        "u8" => format!("a whole number from 0 to {}", u8::MAX),
        "u16" => format!("a whole number from 0 to {}", u16::MAX),
        "u32" => format!("a whole number from 0 to {}", u32::MAX),
        "u64" | "usize" => format!("a whole number from 0 to {}", i64::MAX),
        "i64" | "i32" => "a whole number".into(),
        "f64" | "f32" => "a finite number".into(),
        "a sequence" => "an array".into(),
        "a map" => "a table".into(),
        "string only" => "a name (a string)".into(),
        e if e.starts_with("struct ") => "a table".into(),
        e => e.to_string(),
    };
    let got = match lookup(root, path) {
        Some(v) => describe(v),
        None => rest.rsplit_once(", expected ").map(|(g, _)| g.to_string()).unwrap_or_default(),
    };
    format!("expected {expected}, got {got}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_non_finite_numbers_and_drops_null_members() {
        let t = from_json_text(r#"{"a": NaN, "b": [Infinity, -Infinity, 1, -2.5e3], "c": null, "d": {"e": "x\u00e9\ud83d\ude00"}}"#).unwrap();
        assert!(t["a"].as_float().unwrap().is_nan());
        assert_eq!(t["b"].as_array().unwrap()[..2], [Value::Float(f64::INFINITY), Value::Float(f64::NEG_INFINITY)]);
        assert_eq!(t["b"][2], Value::Integer(1));
        assert_eq!(t["b"][3], Value::Float(-2500.0));
        assert!(t.get("c").is_none());
        assert_eq!(t["d"]["e"].as_str(), Some("xé😀"));
    }

    #[test]
    fn json_refusals_name_the_key() {
        let e = from_json_text(r#"{"flows": [{"name": "\ud800"}]}"#).unwrap_err();
        assert_eq!((e.path.as_str(), e.message.as_str()), ("flows[0].name", "expected text, got a lone surrogate \\ud800 (not a Unicode character)"));
        let e = from_json_text(r#"{"flows": [null]}"#).unwrap_err();
        assert_eq!((e.path.as_str(), e.message.as_str()), ("flows[0]", "expected a value, got null"));
        let e = from_json_text(r#"{"seed": 18446744073709551615}"#).unwrap_err();
        assert_eq!(e.path, "seed");
        let e = from_json_text(r#"{"a": 1, "a": 2}"#).unwrap_err();
        assert_eq!((e.path.as_str(), e.message.as_str()), ("a", "the key is given twice"));
        let e = from_json_text("{\"a\": [1,\n 2,,]}").unwrap_err();
        assert_eq!(e.path, "a[2]");
        assert!(e.message.starts_with("invalid JSON (line 2, column 4)"), "{e}");
        assert!(from_json_text(&"[".repeat(100_000)).unwrap_err().message.contains("nested more than"));
        assert!(from_json_text("[1]").is_err());
        // Found by the fuzz target: an unknown escape of a two-byte character.
        let e = from_json_text("\" \\\u{782} \"un").unwrap_err();
        assert_eq!(e.message, "invalid JSON (line 1, column 3): unknown escape in a string");
        assert_eq!(line_col("aé", 2), (1, 2));
        assert!(from_json_text("{} x").is_err());
    }

    #[test]
    fn overrides_keep_nan_and_refuse_smuggled_keys() {
        let mut t = from_toml_text("[tcp]\nmss = 1000").unwrap();
        apply_override(&mut t, "tcp.mss=nan").unwrap();
        assert!(t["tcp"]["mss"].as_float().unwrap().is_nan());
        apply_override(&mut t, "tcp.variant=reno").unwrap();
        assert_eq!(t["tcp"]["variant"].as_str(), Some("reno"));
        let e = apply_override(&mut t, "tcp.mss=1\nrwnd = 5").unwrap_err();
        assert_eq!(e.path, "tcp.mss");
    }

    #[test]
    fn unknown_names_get_a_suggestion_or_a_not_modelled_note() {
        let t = Tree::Table(Default::default());
        let e = refusal("unknown field `varient`, expected one of `profile`, `variant`, `sack`", &t, "tcp".into());
        assert_eq!(e.message, "unknown field `varient` (did you mean `variant`?), expected one of `profile`, `variant`, `sack`");
        let e = refusal("unknown variant `bbr`, expected one of `reno`, `newreno`", &t, "tcp.variant".into());
        assert!(e.message.starts_with("unknown variant `bbr` (BBR v1 is the congestion controller `cc = \"bbr\"`") && e.message.ends_with("expected one of `reno`, `newreno`"), "{}", e.message);
        let e = refusal("unknown variant `bbr3`, expected one of `reno`, `newreno`", &t, "tcp.variant".into());
        assert!(e.message.starts_with("unknown variant `bbr3` (BBR3 is not modelled:") && e.message.contains("tcplab testbed"), "{}", e.message);
        let e = refusal("unknown variant `cubic`, expected one of `reno`, `newreno`", &t, "tcp.variant".into());
        assert!(e.message.starts_with("unknown variant `cubic` (CUBIC is the congestion controller `cc = \"cubic\"`"), "{}", e.message);
        let e = refusal("unknown field `ecn`, expected one of `variant`", &t, "flows[0]".into());
        assert!(e.message.contains("the TCP knob `ecn`"), "{}", e.message);
        let e = refusal("unknown variant `dctcp`, expected one of `reno`, `newreno`", &t, "tcp.variant".into());
        assert!(e.message.starts_with("unknown variant `dctcp` (DCTCP is the congestion controller `cc = \"dctcp\"`"), "{}", e.message);
        let e = refusal("unknown variant `rack`, expected one of `reno`, `newreno`", &t, "tcp.variant".into());
        assert!(e.message.contains("`loss = \"rack\"`"), "{}", e.message);
        let e = refusal("unknown variant `frto`, expected one of `reno`, `newreno`", &t, "tcp.variant".into());
        assert!(e.message.contains("the TCP knob `frto = true`"), "{}", e.message);
        let e = refusal("unknown field `hystart`, expected one of `variant`", &t, "tcp".into());
        assert!(e.message.contains("the TCP knob `slow_start`"), "{}", e.message);
        let e = refusal("unknown field `zzzzzz`, expected one of `variant`, `sack`", &t, "tcp".into());
        assert_eq!(e.message, "unknown field `zzzzzz`, expected one of `variant`, `sack`");
        assert_eq!(did_you_mean("dumbel", &["single_link", "dumbbell", "custom"]), Some("dumbbell"));
        assert_eq!(did_you_mean("initialwindow", &["initial_window", "mss"]), Some("initial_window"));
    }

    #[test]
    fn plain_words_show_the_value() {
        let t = from_toml_text("[tcp]\ndupthresh = nan\n[[flows]]\ncount = -inf").unwrap();
        assert_eq!(plain_words("invalid type: floating point `NaN`, expected u32", &t, "tcp.dupthresh"), "expected a whole number from 0 to 4294967295, got nan");
        assert_eq!(plain_words("invalid type: floating point `-inf`, expected u32", &t, "flows[0].count"), "expected a whole number from 0 to 4294967295, got -inf");
        assert_eq!(plain_words("unknown field `x`", &t, "x"), "unknown field `x`");
    }
}
