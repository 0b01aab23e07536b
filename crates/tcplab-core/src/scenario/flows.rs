//! Flow resolution: `[[flows]]` entries bound to nodes, `count` expanded, drops and delays
//! checked, each flow's TCP configuration resolved (`tcp.rs`), and the limits of a run's length
//! and data checked.

use super::count::Count;
use super::plan::{name_index, NameHash, Network, ResolvedFlow};
use super::schema::{FlowSpec, Scenario, TopologyKind, MAX_TOTAL_BYTES};
use crate::error::{err, ScenarioError};
use crate::units::{format_duration, Duration, Time, MAX_TIME};
use std::sync::Arc;

/// `template` with every `{i}` replaced by `i`, into `out` (as `str::replace` would).
fn subst_into(out: &mut String, template: &str, i: &str) {
    out.clear();
    let mut parts = template.split("{i}");
    out.push_str(parts.next().unwrap_or(""));
    for p in parts {
        out.push_str(i);
        out.push_str(p);
    }
}


impl Scenario {

    /// Bind flows to nodes, expand `count`, and resolve each flow's TCP configuration.
    pub fn resolve_flows(&self) -> Result<Vec<ResolvedFlow>, ScenarioError> {
        self.resolve_flows_on(&self.network()?)
    }

    /// `resolve_flows` on a network already expanded from this scenario (for any seed: only the
    /// node names and the link rates are read).
    pub fn resolve_flows_on(&self, net: &Network) -> Result<Vec<ResolvedFlow>, ScenarioError> {
        if self.flows.is_empty() && self.apps.is_empty() {
            return err("flows", "at least one flow or application is needed ([[flows]] or [[apps]])");
        }
        if let Some(w) = self.warmup {
            if self.duration.is_none_or(|d| d.0 <= w.0) {
                return err("warmup", "a warmup needs a `duration` longer than it");
            }
        }
        self.check_total_bytes()?;
        self.check_run_length(net)?;
        // Room for the flows up front (bounded: the checks below may yet refuse them).
        let total = self.flows.iter().map(|f| f.count as usize).sum::<usize>().min(1 << 20);
        let mut out = Vec::with_capacity(total);
        // The flow names so far, without copies: each name's hash to the first flow in `out` with
        // that hash; names whose hashes collide with another name's are kept in `collided`.
        let mut names: std::collections::HashMap<u64, usize, NameHash> = std::collections::HashMap::with_capacity_and_hasher(total, NameHash::default());
        let mut collided: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut is_new = |name: &str, out: &[ResolvedFlow]| {
            use std::hash::BuildHasher;
            match names.entry(NameHash::default().hash_one(name)) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(out.len());
                    true
                }
                std::collections::hash_map::Entry::Occupied(o) => out[*o.get()].name != name && collided.insert(name.to_string()),
            }
        };
        // Node names resolved through a map (a linear search per flow end made set-up quadratic).
        let index = name_index(&net.nodes);
        // Scratch buffers for a flow's number and its ends' names (only its name is kept).
        let (mut num, mut from_buf, mut to_buf) = (String::new(), String::new(), String::new());
        // Consecutive flows of an entry mostly join nodes a fixed step apart (s{i} to r{i} in a
        // dumbbell): each end's last node and the step to it, to try before looking a name up.
        let mut step = ((usize::MAX, 0), (usize::MAX, 0));
        for (fi, f) in self.flows.iter().enumerate() {
            let path = format!("flows[{fi}]");
            if f.count == 0 {
                return err(format!("{path}.count"), "expected at least 1");
            }
            let tcp = Arc::new(self.tcp_config(&f.tcp, &path)?);
            let bytes = f.bytes.get();
            if bytes.is_none() && self.duration.is_none() {
                return err(format!("{path}.bytes"), "an unlimited flow needs a `duration` for the run");
            }
            let repeat = match f.repeat {
                Count::N(0) => return err(format!("{path}.repeat"), "expected at least 1"),
                Count::N(n) => Some(n),
                Count::Unlimited(_) => None,
            };
            if repeat.is_none() && self.duration.is_none() {
                return err(format!("{path}.repeat"), "unlimited repeats need a `duration` for the run");
            }
            let mut drops = Vec::new();
            for (di, d) in f.drops.iter().enumerate() {
                let dpath = format!("{path}.drops[{di}]");
                let kind = d.checked_filter(&dpath, repeat)?;
                if d.by.is_some() {
                    return err(format!("{dpath}.by"), "a drop removes the packet; to hold it back for a while, list it under `delays`");
                }
                drops.push((kind, d.transmissions.clone(), d.transfer, d.kind));
            }
            let mut delays = Vec::new();
            for (di, d) in f.delays.iter().enumerate() {
                let dpath = format!("{path}.delays[{di}]");
                let kind = d.checked_filter(&dpath, repeat)?;
                let by = match d.by {
                    None => return err(dpath, "a delay needs `by`, how long the packet is held (such as \"30ms\")"),
                    Some(Duration(0)) => return err(format!("{dpath}.by"), "expected a duration above 0"),
                    Some(Duration(t)) => t,
                };
                delays.push((kind, d.transmissions.clone(), d.transfer, d.kind, by));
            }
            let start_of = f.checked_starts(&path, repeat)?;
            let single = self.topology.kind == TopologyKind::SingleLink;
            for i in 1..=f.count {
                num.clear();
                {
                    use std::fmt::Write;
                    write!(num, "{i}").expect("a String takes any text");
                }
                let subst = |s: &str| {
                    let mut o = String::new();
                    subst_into(&mut o, s, &num);
                    o
                };
                let default_end = |single_default: &str, key: &str| -> Result<String, ScenarioError> {
                    if single {
                        Ok(single_default.to_string())
                    } else {
                        err(format!("{path}.{key}"), "required (the node name) for this topology")
                    }
                };
                if f.from.is_empty() {
                    from_buf = default_end("sender", "from")?;
                } else {
                    subst_into(&mut from_buf, &f.from, &num);
                }
                if f.to.is_empty() {
                    to_buf = default_end("receiver", "to")?;
                } else {
                    subst_into(&mut to_buf, &f.to, &num);
                }
                let (from, to) = (&from_buf, &to_buf);
                // The node one step on, if it has the name (node names are unique), else the map's.
                let find = |n: &str, key: &str, g: &mut (usize, usize)| {
                    let next = g.0.wrapping_add(g.1);
                    let x = match net.nodes.get(next) {
                        Some(m) if m == n => next,
                        _ => index.get(n).copied().ok_or_else(|| ScenarioError {
                            path: format!("{path}.{key}"),
                            message: format!("unknown node {n:?}; nodes are: {}", net.nodes.join(", ")),
                        })?,
                    };
                    *g = (x, x.wrapping_sub(g.0));
                    Ok::<usize, ScenarioError>(x)
                };
                let (a, b) = (find(from, "from", &mut step.0)?, find(to, "to", &mut step.1)?);
                if a == b {
                    return err(path.clone(), format!("a flow needs two different nodes, got {from:?} twice"));
                }
                let name = if f.name.is_empty() { format!("flow{}", out.len()) } else if f.count > 1 && !f.name.contains("{i}") { format!("{}{i}", f.name) } else { subst(&f.name) };
                if !is_new(&name, &out) {
                    return err(format!("{path}.name"), format!("flow name {name:?} is used twice"));
                }
                out.push(ResolvedFlow {
                    name,
                    from: a,
                    to: b,
                    start: start_of(i),
                    bytes,
                    repeat,
                    think: f.think.0,
                    tcp: tcp.clone(),
                    drops: drops.clone(),
                    delays: delays.clone(),
                });
            }
        }
        Ok(out)
    }

}

impl Scenario {
    /// The data of every finite transfer added up (bytes × repeat × count per entry) must stay
    /// within `MAX_TOTAL_BYTES`, so that no byte counter of the run can wrap.
    fn check_total_bytes(&self) -> Result<(), ScenarioError> {
        let mut total: u128 = 0;
        for (fi, f) in self.flows.iter().enumerate() {
            if let (Some(b), Count::N(n)) = (f.bytes.get(), f.repeat) {
                total += b as u128 * n as u128 * f.count as u128;
                if total > MAX_TOTAL_BYTES as u128 {
                    return err(
                        format!("flows[{fi}].bytes"),
                        format!(
                            "the transfers add up to more than {MAX_TOTAL_BYTES} bytes (2^62), the most a run may carry; keys: flows[{fi}].bytes = {b}, flows[{fi}].repeat = {n}, flows[{fi}].count = {} (and the flows before it)",
                            f.count
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

impl Scenario {
    /// Without a `duration` a run lasts until its transfers are done, so that time must fit the
    /// clock: refuse a flow whose data could not cross even the fastest link before the largest
    /// simulated time. A lower bound (headers, losses and the handshake only add time), so
    /// nothing that can finish is refused; the clock's headroom above `MAX_TIME` (a factor of 4)
    /// covers the rest.
    fn check_run_length(&self, net: &Network) -> Result<(), ScenarioError> {
        if self.duration.is_some() {
            return Ok(());
        }
        let fastest = net.links.iter().map(|l| l.rate.0).max().unwrap_or(1).max(1) as u128;
        for (fi, f) in self.flows.iter().enumerate() {
            if let (Some(b), Count::N(n)) = (f.bytes.get(), f.repeat) {
                let at_least = f.start.0 as u128 + b as u128 * n as u128 * 8 * 1_000_000_000 / fastest;
                if at_least > MAX_TIME as u128 {
                    return err(
                        format!("flows[{fi}].bytes"),
                        format!(
                            "{} transfers of {b} bytes need at least {at_least} ns at {} (the fastest link), beyond the largest simulated time (2^62 ns, about 146 years); set a `duration` or send less",
                            n,
                            crate::units::format_rate(fastest as u64)
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

impl FlowSpec {
    /// The start time of flow i (1-based) of this entry, after checking, with exact arithmetic,
    /// that the last flow's start, and its last transfer's earliest start after `repeat − 1`
    /// thinks, are within the largest simulated time.
    fn checked_starts(&self, path: &str, repeat: Option<u32>) -> Result<impl Fn(u32) -> Time + '_, ScenarioError> {
        let beyond = "is beyond the largest simulated time (2^62 ns, about 146 years)";
        let last = self.start.0 as u128 + (self.count as u128 - 1) * self.start_spacing.0 as u128;
        if last > MAX_TIME as u128 {
            return err(
                format!("{path}.start_spacing"),
                format!(
                    "flow {} of this entry would start at {last} ns, which {beyond}; keys: {path}.start = {}, {path}.count = {}, {path}.start_spacing = {}",
                    self.count,
                    format_duration(self.start.0),
                    self.count,
                    format_duration(self.start_spacing.0)
                ),
            );
        }
        if let Some(n) = repeat {
            let thinks = (n as u128 - 1) * self.think.0 as u128;
            if last + thinks > MAX_TIME as u128 {
                return err(
                    format!("{path}.think"),
                    format!(
                        "the {} thinks between its {n} transfers add up to {thinks} ns, so the last transfer would start after {} ns, which {beyond}; keys: {path}.think = {}, {path}.repeat = {n}, {path}.start = {}",
                        n - 1,
                        last + thinks,
                        format_duration(self.think.0),
                        format_duration(self.start.0)
                    ),
                );
            }
        }
        // Checked above: no product or sum here can exceed MAX_TIME.
        Ok(move |i: u32| self.start.0 + (i as u64 - 1) * self.start_spacing.0)
    }

}
