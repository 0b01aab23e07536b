//! Thin PyO3 bindings of tcplab-core, exposed as `tcplab._core`. No logic lives here: scenarios go
//! in as text, results come out as JSON, errors become Python exceptions, and a panic in the core
//! is caught and raised as `CoreError` instead of crossing into the interpreter.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
mod columns;
mod delaybox;
mod script;
mod wire;

use tcplab_core::{Scenario, ScenarioError as CoreScenarioError};

create_exception!(_core, ScenarioError, PyValueError, "A scenario is invalid; the message starts with the key path.");
create_exception!(_core, CoreError, PyRuntimeError, "The simulator failed internally (a bug): please report it with the scenario and seed.");
create_exception!(_core, TraceError, PyValueError, "A capture file cannot be read; the message starts with the byte offset.");
create_exception!(_core, RunLimitError, PyRuntimeError, "A run stopped at its limit (max_wall, max_events, memory) before it was over; `.limit` names which.");

enum Failure {
    Scenario(CoreScenarioError),
    Limit(tcplab_core::LimitHit),
    Panic(String),
}

/// Read a scenario given as text: its own capture paths must stay inside the current directory
/// (`trace::capture::check_paths`); a path the user gives outside it (`pcap`) is added after.
fn parse(text: &str, fmt: &str, sets: &[String]) -> Result<Scenario, CoreScenarioError> {
    let s = match fmt {
        "toml" => Scenario::from_toml(text, sets),
        "json" => Scenario::from_json(text, sets),
        other => Err(CoreScenarioError { path: String::new(), message: format!("unknown scenario format {other:?} (expected toml or json)") }),
    }?;
    tcplab_core::trace::capture::check_paths(&s.capture)?;
    Ok(s)
}

fn guarded<T>(f: impl FnOnce() -> Result<T, CoreScenarioError>) -> Result<T, Failure> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Failure::Scenario(e)),
        Err(p) => {
            Err(Failure::Panic(panic_message(&*p)))
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "unknown panic".into())
}

/// Run the body of a Python-facing function so that a panic anywhere in it (conversions, the
/// budget, building the output) becomes `CoreError`, never pyo3's PanicException (a
/// BaseException that `except Exception` does not catch and that kills a pool's worker).
fn shielded<T>(what: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(CoreError::new_err(format!("internal error in {what}: {}", panic_message(&*p)))),
    }
}

/// The longest wall time a run may be given (`max_wall`, `--max-wall`, `run_timeout`): about 31
/// years; python/tcplab/limits.py refuses more with the option's name.
const MAX_WALL_S: f64 = 1e9;

fn to_py(e: Failure) -> PyErr {
    match e {
        Failure::Scenario(e) => {
            let err = ScenarioError::new_err(e.to_string());
            Python::with_gil(|py| {
                let v = err.value(py);
                let _ = v.setattr("path", e.path.clone());
                let _ = v.setattr("reason", e.message.clone());
            });
            err
        }
        Failure::Limit(hit) => {
            let err = RunLimitError::new_err(hit.to_string());
            Python::with_gil(|py| {
                let v = err.value(py);
                let _ = v.setattr("limit", hit.limit.name());
                let _ = v.setattr("allowed", hit.allowed);
                let _ = v.setattr("events", hit.events);
                let _ = v.setattr("sim_time_s", hit.sim_time_s);
                let _ = v.setattr("wall_time_s", hit.wall_time_s);
            });
            err
        }
        Failure::Panic(m) => CoreError::new_err(format!("internal error in the simulator core: {m}")),
    }
}

/// Run a scenario (text in `fmt`, "toml" or "json") with overrides `sets` ("key.path=value") and
/// an optional seed (default: the scenario's). Returns the result as JSON text. `max_wall_s`
/// (seconds from this call) and `max_events` bound the run: over either, it raises RunLimitError.
/// With `series`, returns (JSON text, series) where series is None or a dict: `info` (JSON text,
/// `series::Series::info`) and `tables` (name -> column -> (numpy dtype, little-endian bytes));
/// without it, the scenario's `[[series]]` are not recorded. With `columns`, the result is a dict
/// instead of JSON text (`ColumnResult`): the tables as columns, not records. `pcap`: a capture
/// file given by the user (not by the scenario), written at the first flow's sending node (without
/// flows, at the first application's client node); unlike
/// a scenario's `[[capture]]` path it may name any place.
#[pyfunction]
#[pyo3(signature = (text, fmt="toml", seed=None, sets=vec![], max_wall_s=None, max_events=None, series=false, columns=false, pcap=None))]
#[allow(clippy::too_many_arguments)]
fn run_scenario(py: Python<'_>, text: &str, fmt: &str, seed: Option<u64>, sets: Vec<String>, max_wall_s: Option<f64>, max_events: Option<u64>, series: bool, columns: bool, pcap: Option<String>) -> PyResult<PyObject> {
    shielded("the simulator core", || run_scenario_inner(py, text, fmt, seed, sets, max_wall_s, max_events, series, columns, pcap))
}

#[allow(clippy::too_many_arguments)]
fn run_scenario_inner(py: Python<'_>, text: &str, fmt: &str, seed: Option<u64>, sets: Vec<String>, max_wall_s: Option<f64>, max_events: Option<u64>, series: bool, columns: bool, pcap: Option<String>) -> PyResult<PyObject> {
    let max_wall = match max_wall_s {
        Some(w) if !(0.0..=MAX_WALL_S).contains(&w) => {
            return Err(PyValueError::new_err(format!("max_wall_s must be a number of seconds from 0 to {MAX_WALL_S:e}, got {w}")));
        }
        Some(w) => Some(std::time::Duration::from_secs_f64(w)),
        None => None,
    };
    let budget = tcplab_core::Budget::new(max_wall, max_events);
    let text = text.to_string();
    let fmt = fmt.to_string();
    let (json, recorded) = py
        .allow_threads(move || {
            // A run stopped by its budget is an outcome of the run, not of the scenario: it travels
            // inside the Ok and becomes RunLimitError here.
            guarded(|| {
                let mut s = parse(&text, &fmt, &sets)?;
                if let Some(path) = pcap {
                    // At the first flow's sending node; without flows, at the first application's
                    // client (a UDP source's sending node).
                    let node = if s.flows.is_empty() {
                        let e = s.expanded(seed.unwrap_or(s.seed))?;
                        match e.apps.first() {
                            Some(a) => Some(e.net.nodes[a.client].clone()),
                            None => {
                                return Err(CoreScenarioError {
                                    path: "pcap".into(),
                                    message: "the scenario has no flow or application to take the capture at; write a [[capture]] with `node` or `link` instead".into(),
                                })
                            }
                        }
                    } else {
                        None
                    };
                    s.capture.push(tcplab_core::trace::CaptureSpec { path, node, link: None, point: None, payload: false, format: Default::default(), trusted: true });
                }
                if !series {
                    s.series.clear();
                }
                match tcplab_core::run_limited(&s, seed.unwrap_or(s.seed), &budget) {
                    Ok(mut r) => {
                        let rec = r.series.take();
                        let out = if columns { Output::Columns(Box::new(ColumnResult::new(r))) } else { Output::Json(serde_json::to_string(&r).expect("results serialise")) };
                        Ok(Ok((out, rec)))
                    }
                    Err(tcplab_core::RunError::Invalid(e)) => Err(e),
                    Err(tcplab_core::RunError::Limit(h)) => Ok(Err(h)),
                }
            })
            .and_then(|r| r.map_err(Failure::Limit))
        })
        .map_err(to_py)?;
    let json = match json {
        Output::Json(text) => text.into_pyobject(py)?.into_any().unbind(),
        Output::Columns(c) => c.into_py(py)?,
    };
    if !series {
        return Ok(json);
    }
    let tables = match recorded {
        None => py.None(),
        Some(rec) => {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("info", rec.info().to_string())?;
            let t = pyo3::types::PyDict::new(py);
            for (name, cols) in rec.columns() {
                let c = pyo3::types::PyDict::new(py);
                for (col, dtype, bytes) in cols {
                    c.set_item(col, (dtype, pyo3::types::PyBytes::new(py, &bytes)))?;
                }
                t.set_item(name, c)?;
            }
            d.set_item("tables", t)?;
            d.into_any().unbind()
        }
    };
    Ok((json, tables).into_pyobject(py)?.into_any().unbind())
}

enum Output {
    Json(String),
    Columns(Box<ColumnResult>),
}

/// A run's result with the parts that grow with the flows as columns (built without the GIL):
/// `json`, the rest of the result as JSON text (the scenario, `meta`; the tables and `flows_tcp`
/// empty there); `tables`, name -> (columns, rows without a key, number of rows;
/// `columns::Table::into_py`) for
/// `connections`, `links`, `transfers` and, where they have rows, `objects`, `pages`, `udp` (the
/// tables the JSON holds); `tcp`, the distinct TCP configurations as a JSON list and `tcp_index`,
/// which of them each flow ran with.
struct ColumnResult {
    json: String,
    tables: Vec<(&'static str, columns::Table)>,
    tcp: String,
    tcp_index: Vec<usize>,
}

impl ColumnResult {
    fn new(mut r: tcplab_core::RunResult) -> ColumnResult {
        // Each table's rows are freed once they are columns, so that the next table's columns
        // take their memory (10^5 flows: 4x10^5 link rows) rather than more.
        fn t<T: serde::Serialize>(rows: Vec<T>) -> columns::Table {
            columns::table(&rows).expect("result rows are structs of scalars")
        }
        let mut tables = vec![("connections", t(std::mem::take(&mut r.connections))), ("links", t(std::mem::take(&mut r.links))), ("transfers", t(std::mem::take(&mut r.transfers)))];
        for (name, empty, table) in [
            ("objects", r.objects.is_empty(), t(std::mem::take(&mut r.objects))),
            ("pages", r.pages.is_empty(), t(std::mem::take(&mut r.pages))),
            ("udp", r.udp.is_empty(), t(std::mem::take(&mut r.udp))),
        ] {
            if !empty {
                tables.push((name, table));
            }
        }
        let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut distinct: Vec<String> = Vec::new();
        // Flows that share a configuration share its `Arc`: each is written out once.
        let mut last: Option<(*const serde_json::Value, usize)> = None;
        let tcp_index = r
            .flows_tcp
            .iter()
            .map(|v| match last {
                Some((p, i)) if p == std::sync::Arc::as_ptr(v) => i,
                _ => {
                    let text = serde_json::to_string(v).expect("serialisable");
                    let i = *seen.entry(text).or_insert_with_key(|k| {
                        distinct.push(k.clone());
                        distinct.len() - 1
                    });
                    last = Some((std::sync::Arc::as_ptr(v), i));
                    i
                }
            })
            .collect();
        let tcp = format!("[{}]", distinct.join(","));
        r.flows_tcp = Vec::new();
        ColumnResult { json: serde_json::to_string(&r).expect("results serialise"), tables, tcp, tcp_index }
    }

    fn into_py(self, py: Python<'_>) -> PyResult<PyObject> {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("json", self.json)?;
        let tables = pyo3::types::PyDict::new(py);
        for (name, table) in self.tables {
            tables.set_item(name, table.into_py(py)?)?;
        }
        d.set_item("tables", tables)?;
        d.set_item("tcp", self.tcp)?;
        d.set_item("tcp_index", self.tcp_index)?;
        Ok(d.into_any().unbind())
    }
}

/// Validate a scenario; returns it as JSON with every default written out.
#[pyfunction]
#[pyo3(signature = (text, fmt="toml", sets=vec![]))]
fn validate(text: &str, fmt: &str, sets: Vec<String>) -> PyResult<String> {
    guarded(|| {
        let s = parse(text, fmt, &sets)?;
        Ok(serde_json::to_string(&s.to_json()).expect("scenarios serialise"))
    })
    .map_err(to_py)
}

/// Knobs written beside a profile or preset asked for in the same scenario that override a value
/// it sets (`Scenario::tcp_notes`), as a JSON list of lines.
#[pyfunction]
#[pyo3(signature = (text, fmt="toml", sets=vec![]))]
fn tcp_notes(text: &str, fmt: &str, sets: Vec<String>) -> PyResult<String> {
    guarded(|| {
        let s = parse(text, fmt, &sets)?;
        // Without the overrides, to tell what they asked for (a file invalid on its own: no notes
        // of a profile asked for, only of presets).
        let before = if sets.is_empty() { None } else { parse(text, fmt, &[]).ok() };
        let before = if sets.is_empty() { Some(&s) } else { before.as_ref() };
        Ok(serde_json::to_string(&s.tcp_notes(before)).expect("serialisable"))
    })
    .map_err(to_py)
}

/// The TCP configuration each flow of a scenario runs with (profile, preset, `[tcp]` and the
/// flow's own knobs resolved), one per flow as the run numbers them, as JSON: the world is built,
/// not run.
#[pyfunction]
#[pyo3(signature = (text, fmt="toml", sets=vec![]))]
fn resolve_tcp(text: &str, fmt: &str, sets: Vec<String>) -> PyResult<String> {
    guarded(|| {
        let s = parse(text, fmt, &sets)?;
        let w = tcplab_core::World::build(&s, s.seed)?;
        Ok(serde_json::to_string(&w.finish().flows_tcp).expect("serialisable"))
    })
    .map_err(to_py)
}

/// The resolved plan of a scenario (nodes, links, flows and applications with each end's TCP
/// configuration, drops, captures, series) for a run with `seed` (default: the scenario's), as
/// JSON: what a front end that does not run the simulator translates.
#[pyfunction]
#[pyo3(signature = (text, fmt="toml", sets=vec![], seed=None))]
fn resolve(text: &str, fmt: &str, sets: Vec<String>, seed: Option<u64>) -> PyResult<String> {
    guarded(|| {
        let s = parse(text, fmt, &sets)?;
        Ok(s.plan(seed.unwrap_or(s.seed))?.to_string())
    })
    .map_err(to_py)
}

/// One quantity of a scenario read as the core reads it: `kind` is "duration" (nanoseconds),
/// "size" (bytes) or "rate" (bit/s); the unit rules and limits are `units.rs`'s, so Python never
/// parses units itself. A bad value raises `ValueError` with the core's message.
#[pyfunction]
fn quantity(kind: &str, text: &str) -> PyResult<u64> {
    let r = match kind {
        "duration" => tcplab_core::units::parse_duration(text),
        "size" => tcplab_core::units::parse_size(text),
        "rate" => tcplab_core::units::parse_rate(text),
        _ => return Err(PyValueError::new_err(format!("kind must be \"duration\", \"size\" or \"rate\", got {kind:?}"))),
    };
    r.map_err(PyValueError::new_err)
}

/// A shipped distribution's table (`{ named = "..." }` of `kind` "size", "count" or "duration"),
/// JSON in the scenario's own form, for a front end that draws from it itself (the ns-2 export);
/// `ValueError` for a name the core does not ship as a table.
#[pyfunction]
fn named_table(name: &str, kind: &str) -> PyResult<String> {
    tcplab_core::rv::named_table(name, kind)
        .map(|v| v.to_string())
        .ok_or_else(|| PyValueError::new_err(format!("no shipped {kind} distribution {name:?} with a table")))
}

/// The initial window in bytes the core gives `initial_window` (as a resolved configuration
/// writes it, JSON: `10`, `"rfc3390"`, `"4380B"`, `{"segments": 4, "bytes": "4096B"}`) at this MSS
/// (`InitialWindow::bytes`), so a front end never re-derives RFC 3390 or Allman's rule.
#[pyfunction]
fn initial_window_bytes(value_json: &str, mss: u32) -> PyResult<u64> {
    if mss == 0 {
        return Err(PyValueError::new_err("mss must be at least 1 byte"));
    }
    let iw: tcplab_core::tcp::config::InitialWindow =
        serde_json::from_str(value_json).map_err(|e| PyValueError::new_err(format!("initial_window: {e}")))?;
    Ok(iw.bytes(mss))
}

/// The named TCP profiles and their settings, as JSON.
#[pyfunction]
fn profiles() -> PyResult<String> {
    shielded("the TCP profiles", || Ok(profiles_json()))
}

fn profiles_json() -> String {
    let m: serde_json::Map<String, serde_json::Value> = tcplab_core::tcp::config::PROFILES
        .iter()
        .map(|p| (p.to_string(), tcplab_core::tcp::TcpConfig::profile(p).expect("listed").to_json_full()))
        .collect();
    serde_json::to_string(&m).expect("serialisable")
}

/// The named stacks (presets of the studies' variants): for each, its study, a summary, the
/// mechanism knobs it sets, and the whole configuration it gives over `profile`, as JSON.
#[pyfunction]
#[pyo3(signature = (profile = "rfc"))]
fn presets(profile: &str) -> PyResult<String> {
    shielded("the TCP presets", || presets_json(profile))
}

fn presets_json(profile: &str) -> PyResult<String> {
    use tcplab_core::tcp::config::{PRESETS, PROFILES};
    use tcplab_core::tcp::TcpConfig;
    let base = TcpConfig::profile(profile)
        .ok_or_else(|| ScenarioError::new_err(format!("unknown profile {profile:?}; expected one of: {}", PROFILES.join(", "))))?;
    const SET: [&str; 7] = ["variant", "sack", "sack_blocks", "initial_window", "limited_transmit", "abc", "early_retransmit"];
    let mut m = serde_json::Map::new();
    for p in PRESETS {
        let mut c = base.clone();
        (p.apply)(&mut c);
        let v = c.to_json_full();
        let settings: serde_json::Map<String, serde_json::Value> = SET.iter().map(|k| (k.to_string(), v[*k].clone())).collect();
        m.insert(p.name.to_string(), serde_json::json!({ "study": p.study, "summary": p.summary, "settings": settings, "config": v }));
    }
    Ok(serde_json::to_string(&m).expect("serialisable"))
}

/// Little-endian bytes of a column, for `numpy.frombuffer` on the Python side.
fn le_bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for &x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

/// Analyse a capture file (pcap or pcapng) as far as it can be read; returns the report as JSON
/// text (a record cut short or corrupted is in `reader.stopped`, with its byte offset) and, with
/// `packets`, the per-packet table as a dict of column name -> (numpy dtype, little-endian
/// bytes). A file whose header cannot be read raises TraceError with `.offset`; a panic in the
/// analyser raises CoreError.
#[pyfunction]
#[pyo3(signature = (path, packets=false))]
fn analyze_trace(py: Python<'_>, path: &str, packets: bool) -> PyResult<(String, Option<PyObject>)> {
    let path = path.to_string();
    let r = py.allow_threads(move || catch_unwind(AssertUnwindSafe(|| tcplab_core::trace::analyze_path_lenient(&path, packets))));
    match r {
        Ok(Ok((v, pk))) => {
            let cols = match pk {
                None => None,
                Some(p) => {
                    let d = pyo3::types::PyDict::new(py);
                    let put = |name: &str, dtype: &str, bytes: Vec<u8>| d.set_item(name, (dtype, pyo3::types::PyBytes::new(py, &bytes)));
                    put("conn", "<u4", le_bytes(&p.conn, u32::to_le_bytes))?;
                    put("dir", "u1", p.dir.clone())?;
                    put("time_ns", "<i8", le_bytes(&p.time_ns, i64::to_le_bytes))?;
                    put("seq", "<i8", le_bytes(&p.seq, i64::to_le_bytes))?;
                    put("len", "<u4", le_bytes(&p.len, u32::to_le_bytes))?;
                    put("ack", "<i8", le_bytes(&p.ack, i64::to_le_bytes))?;
                    put("win", "<u2", le_bytes(&p.win, u16::to_le_bytes))?;
                    put("flags", "u1", p.flags.clone())?;
                    put("retx", "?", p.retx.iter().map(|&b| b as u8).collect())?;
                    put("dup_ack", "?", p.dup_ack.iter().map(|&b| b as u8).collect())?;
                    put("tsval", "<i8", le_bytes(&p.tsval, i64::to_le_bytes))?;
                    put("tsecr", "<i8", le_bytes(&p.tsecr, i64::to_le_bytes))?;
                    for k in 0..4 {
                        let l: Vec<i64> = p.sack.iter().map(|s| s[k].0).collect();
                        let r: Vec<i64> = p.sack.iter().map(|s| s[k].1).collect();
                        put(&format!("sack{}_left", k + 1), "<i8", le_bytes(&l, i64::to_le_bytes))?;
                        put(&format!("sack{}_right", k + 1), "<i8", le_bytes(&r, i64::to_le_bytes))?;
                    }
                    Some(d.into_any().unbind())
                }
            };
            Ok((v.to_string(), cols))
        }
        Ok(Err(e)) => {
            let err = TraceError::new_err(e.to_string());
            Python::with_gil(|py| {
                let v = err.value(py);
                let _ = v.setattr("offset", e.offset);
                let _ = v.setattr("reason", e.message.clone());
            });
            Err(err)
        }
        Err(p) => Err(CoreError::new_err(format!("internal error in the trace analyser: {}", panic_message(&*p)))),
    }
}

/// Deliberately panic (to test that panics become CoreError): inside `guarded` (the core's
/// guard) by default, or with `outside` in the binding's own code, which `shielded` catches.
#[pyfunction]
#[pyo3(signature = (outside=false))]
fn _panic_for_test(outside: bool) -> PyResult<()> {
    if outside {
        return shielded("the bindings", || -> PyResult<()> { panic!("deliberate test panic") });
    }
    guarded(|| -> Result<(), CoreScenarioError> { panic!("deliberate test panic") }).map_err(to_py)
}

/// The testbed's delay box (`delaybox.rs`): runs until a port fails, with the GIL released.
/// `spec` is JSON: `ports` (AF_PACKET socket descriptors), `links`, `routes`, `stats`.
#[pyfunction]
fn delay_box(py: Python<'_>, spec: &str) -> PyResult<()> {
    let spec: delaybox::BoxSpec = serde_json::from_str(spec).map_err(|e| PyValueError::new_err(format!("delay box: {e}")))?;
    let out = py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| delaybox::run(spec))));
    match out {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(PyRuntimeError::new_err(format!("delay box: {e}"))),
        Err(_) => Err(CoreError::new_err("delay box: internal error (a panic)")),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("CoreError", m.py().get_type::<CoreError>())?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add("RunLimitError", m.py().get_type::<RunLimitError>())?;
    m.add_function(wrap_pyfunction!(analyze_trace, m)?)?;
    m.add("__version__", tcplab_core::VERSION)?;
    m.add("__commit__", env!("TCPLAB_COMMIT"))?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_tcp, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(named_table, m)?)?;
    m.add_function(wrap_pyfunction!(initial_window_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_notes, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_class::<TbitSim>()?;
    script::register(m)?;
    wire::register(m)?;
    m.add_function(wrap_pyfunction!(delay_box, m)?)?;
    Ok(())
}

fn tbit_guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    shielded("the simulated TBIT server", || Ok(f()))
}

fn secs(name: &str, s: f64) -> PyResult<u64> {
    if s.is_finite() && (0.0..=1e6).contains(&s) {
        Ok((s * 1e9).round() as u64)
    } else {
        Err(PyValueError::new_err(format!("{name} must be a number of seconds from 0 to 1e6, got {s}")))
    }
}

/// The simulated transport of TBIT: a web server of a TCP stack (`tcp_json`: a flow's `tcp`
/// table as JSON, e.g. {"profile": "rfc", "preset": "sack-iw"}) behind a path of `delay_s` each
/// way. The prober sends segments with `send` and reads the server's with `recv`, in virtual time;
/// sequence numbers are relative (SYN 0, data from 1).
#[pyclass(module = "tcplab._core", unsendable)]
struct TbitSim {
    s: tcplab_core::tbit::SimServer,
}

#[pymethods]
impl TbitSim {
    #[new]
    #[pyo3(signature = (tcp_json, delay_s=0.005, page_bytes=100_000))]
    fn new(tcp_json: &str, delay_s: f64, page_bytes: u64) -> PyResult<Self> {
        shielded("the simulated TBIT server", || {
            let delay = secs("delay_s", delay_s)?;
            if page_bytes == 0 || page_bytes > 1 << 30 {
                return Err(PyValueError::new_err(format!("page_bytes must be 1 to 2^30, got {page_bytes}")));
            }
            let cfg = tcplab_core::tbit::resolve(tcp_json).map_err(ScenarioError::new_err)?;
            Ok(TbitSim { s: tcplab_core::tbit::SimServer::new(cfg, delay, page_bytes) })
        })
    }

    /// The stack opens a connection to the prober (its SYNs then arrive through `recv`).
    fn connect(&mut self) -> PyResult<()> {
        tbit_guard(|| self.s.connect())
    }

    /// The resolved configuration of the server, every knob, as JSON.
    fn config(&self) -> PyResult<String> {
        tbit_guard(|| self.s.config().to_json_full().to_string())
    }

    /// For a prober offering MSS `mss`: the segment size, initial window in segments and timers
    /// in seconds the configuration implies, as JSON.
    fn facts(&self, mss: u64) -> PyResult<String> {
        tbit_guard(|| self.s.facts(mss).to_string())
    }

    /// Virtual time now, seconds.
    fn now(&self) -> PyResult<f64> {
        tbit_guard(|| self.s.now() as f64 / 1e9)
    }

    /// The response size (header and body) the server gives for a request payload.
    fn response_size(&self, payload: &str) -> PyResult<u64> {
        tbit_guard(|| self.s.response_size(payload))
    }

    /// Send a segment to the server: flags (TCP bits), relative seq and ack, window, payload
    /// (bytes, its text read as an HTTP request), SACK blocks, SACK-permitted and MSS options.
    #[pyo3(signature = (flags, seq, ack, wnd, payload=None, sack=vec![], sack_permitted=false, mss=None))]
    #[allow(clippy::too_many_arguments)]
    fn send(&mut self, flags: u8, seq: u64, ack: u64, wnd: u32, payload: Option<Vec<u8>>, sack: Vec<(u64, u64)>, sack_permitted: bool, mss: Option<u64>) -> PyResult<()> {
        tbit_guard(|| {
            let len = payload.as_ref().map_or(0, |p| p.len()) as u32;
            let request = payload.as_ref().filter(|p| !p.is_empty()).map(|p| self.s.response_size(&String::from_utf8_lossy(p)));
            let seg = tcplab_core::tbit::segment(flags, seq, ack, len, wnd, &sack, sack_permitted);
            self.s.send(seg, mss, request)
        })
    }

    /// The next segment from the server within `timeout_s` of virtual time, or None: (time_s,
    /// flags, seq, ack, len, wnd, sack_permitted, sack blocks, the IP ECN field).
    #[allow(clippy::type_complexity)]
    fn recv(&mut self, timeout_s: f64) -> PyResult<Option<(f64, u8, u64, u64, u32, u32, bool, Vec<(u64, u64)>, u8)>> {
        let t = secs("timeout_s", timeout_s)?;
        tbit_guard(|| {
            self.s.recv(t).map(|x| {
                let s = x.seg;
                (x.time as f64 / 1e9, s.flags, s.seq, s.ack, s.len, s.wnd, s.sack_permitted, s.sack_blocks().iter().map(|b| (b.left, b.right)).collect(), s.ip_ecn)
            })
        })
    }
}
