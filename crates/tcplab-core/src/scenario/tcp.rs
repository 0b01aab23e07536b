//! TCP resolution, the one way from a stack description (`profile`, `preset`, knobs) to the
//! configuration a connection runs with: used by every flow and application of a scenario and by
//! TBIT's simulated server; the resolved plan (`Scenario::plan`) carries its result per end.

use super::schema::Scenario;
use crate::error::ScenarioError;
use crate::tcp::{TcpConfig, TcpSpec};

impl Scenario {
    /// Knobs that override a value of a preset, or of a profile asked for by an override
    /// (`--set`, `sets=`) of this run: `before` is the scenario without those overrides. Each is
    /// legal, since knobs apply over the profile and the preset, but it must not pass unseen:
    /// `--set tcp.preset="sack"` over a file that writes `variant = "newreno"` runs NewReno with
    /// SACK merely negotiated. A knob over a profile written in the file itself is the ordinary
    /// way to tune a profile and is not noted. One line per override, naming the flows and
    /// applications it applies to; `tcplab validate`, the `run` header and `--json` show them.
    pub fn tcp_notes(&self, before: Option<&Scenario>) -> Vec<String> {
        use crate::tcp::config::preset;
        let mut found: Vec<(String, Vec<String>)> = Vec::new();
        let mut look = |spec: &TcpSpec, place: String, profile_before: Option<Option<String>>| {
            if spec.profile.is_none() && spec.preset.is_none() {
                return;
            }
            // The profile was asked for by this run's overrides when it differs without them.
            let profile_asked = spec.profile.is_some() && profile_before.is_some_and(|p| p != spec.profile);
            let profile = spec.profile.as_deref().unwrap_or("rfc");
            // An unknown profile or preset is the validation's error, not a note.
            let Some(mut cfg) = TcpConfig::profile(profile) else { return };
            let of_profile = cfg.to_json_full();
            let named = spec.preset.as_deref().and_then(preset);
            if let Some(p) = named {
                (p.apply)(&mut cfg);
            }
            let asked = cfg.to_json_full();
            let bare = TcpSpec { profile: None, preset: None, ..spec.clone() };
            let Ok(serde_json::Value::Object(written)) = serde_json::to_value(&bare) else { return };
            for (knob, value) in written {
                let Some(base) = asked.get(&knob) else { continue };
                if *base == value {
                    continue;
                }
                let by_preset = named.filter(|_| of_profile.get(&knob) != Some(base));
                let source = match (by_preset, &spec.profile) {
                    (Some(p), _) => format!("preset {:?}", p.name),
                    (None, Some(name)) if profile_asked => format!("profile {name:?}"),
                    // A profile tuned in the file, or the default profile: nothing to say.
                    _ => continue,
                };
                let line = format!("tcp.{knob} = {value} overrides {source}, which sets {knob} = {base}");
                match found.iter_mut().find(|(l, _)| *l == line) {
                    Some((_, places)) => places.push(place.clone()),
                    None => found.push((line, vec![place.clone()])),
                }
            }
        };
        // The profile a place had without the overrides (None inside: none written; a place the
        // overrides added counts as asked for).
        let flow_profile = |sc: &Scenario, i: usize| sc.flows.get(i).map(|f| sc.tcp.merged_with(&f.tcp).profile);
        let app_profile = |sc: &Scenario, i: usize, server: bool| {
            sc.apps.get(i).map(|a| {
                let t = sc.tcp.merged_with(a.tcp().unwrap_or(&TcpSpec::default()));
                match (a.server_tcp(), server) {
                    (Some(st), true) => t.merged_with(st).profile,
                    _ => t.profile,
                }
            })
        };
        let was = |p: Option<Option<String>>| if before.is_some() { Some(p.unwrap_or(Some(String::new()))) } else { None };
        if self.flows.is_empty() && self.apps.is_empty() {
            look(&self.tcp, "tcp".into(), was(before.map(|b| b.tcp.profile.clone())));
        }
        for (i, f) in self.flows.iter().enumerate() {
            look(&self.tcp.merged_with(&f.tcp), format!("flows[{i}]"), was(before.and_then(|b| flow_profile(b, i))));
        }
        for (i, a) in self.apps.iter().enumerate() {
            let t = self.tcp.merged_with(a.tcp().unwrap_or(&TcpSpec::default()));
            look(&t, format!("apps[{i}]"), was(before.and_then(|b| app_profile(b, i, false))));
            if let Some(st) = a.server_tcp() {
                look(&t.merged_with(st), format!("apps[{i}].server_tcp"), was(before.and_then(|b| app_profile(b, i, true))));
            }
        }
        found
            .into_iter()
            .map(|(line, places)| {
                const SHOWN: usize = 4;
                let more = if places.len() > SHOWN { format!(" and {} more", places.len() - SHOWN) } else { String::new() };
                format!("{line} ({}{more})", places[..places.len().min(SHOWN)].join(", "))
            })
            .collect()
    }

    /// The TCP configuration of a flow or application at `path` whose own knobs are `own`: the
    /// profile, then the preset, then the scenario's `[tcp]` and `own` overrides, validated
    /// (`resolve_tcp`); an error names `{path}.tcp.{knob}` when `own` sets the knob, else
    /// `tcp.{knob}`.
    pub(crate) fn tcp_config(&self, own: &TcpSpec, path: &str) -> Result<TcpConfig, ScenarioError> {
        let sets = |knob: &str| serde_json::to_value(own).ok().and_then(|v| v.get(knob).cloned()).is_some();
        resolve_tcp(&self.tcp.merged_with(own)).map_err(|e| ScenarioError {
            path: if sets(&e.knob) { format!("{path}.tcp.{}", e.knob) } else { format!("tcp.{}", e.knob) },
            message: e.message,
        })
    }
}

/// A base that no single knob conflicts with (SACK on for the SACK variants, delayed ACKs off for
/// their timers, an RTO ceiling above every floor, the smallest MSS under every window, the ns-2
/// RTO model and its tick (for `ns2_rfc2988 = false`), variant "sack" for `reduction = "prr"`,
/// RACK for `tlp = true`, Linux's receiver for `comp_sack_nr`, the slowest jiffies (10 Hz: the
/// widest range for `jiffy_offset`)): a knob of `[tcp]` applied alone over it fails only when its
/// own value is out of range.
const PERMISSIVE: &str =
    r#"{"sack": true, "variant": "sack", "loss": "rack", "delack_model": "linux", "delayed_ack": false, "rto_max": "1h", "mss": 1, "rto_model": "ns2", "timer_tick": "10ms", "hz": 10}"#;

/// Range-check each knob a `[tcp]` table writes, as written (issue: `[tcp] initial_window =
/// 100001` passed when every flow overrode it): its profile and preset names, and each knob
/// alone over `PERMISSIVE`. Rules between two knobs are judged where the knobs are combined, per
/// flow and application (`Scenario::tcp_config`).
pub(crate) fn check_written(spec: &TcpSpec, path: &str) -> Result<(), ScenarioError> {
    let Ok(serde_json::Value::Object(written)) = serde_json::to_value(spec) else {
        return Ok(());
    };
    let base: serde_json::Value = serde_json::from_str(PERMISSIVE).expect("a valid base");
    for (knob, value) in written {
        let mut one = base.clone();
        one[knob.as_str()] = value;
        let Ok(alone) = serde_json::from_value::<TcpSpec>(one) else { continue };
        match resolve_tcp(&alone) {
            Err(e) if e.knob == knob => return Err(ScenarioError { path: format!("{path}.{knob}"), message: e.message }),
            _ => {}
        }
    }
    Ok(())
}

/// Why a stack description does not resolve: the knob at fault (`profile`, `preset` or a knob's
/// name) and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpResolveError {
    pub knob: String,
    pub message: String,
}

/// Resolve a stack description: the profile (default `rfc`), then the preset, then the knobs,
/// validated as a whole (`TcpConfig::validate`).
pub fn resolve_tcp(spec: &TcpSpec) -> Result<TcpConfig, TcpResolveError> {
    use crate::tcp::config::{preset, PRESETS, PROFILES};
    let fail = |knob: &str, message: String| TcpResolveError { knob: knob.into(), message };
    let profile = spec.profile.clone().unwrap_or_else(|| "rfc".into());
    let mut tcp = TcpConfig::profile(&profile).ok_or_else(|| {
        let hint = crate::input::did_you_mean(&profile, PROFILES).map(|n| format!(" (did you mean {n:?}?)")).unwrap_or_default();
        fail("profile", format!("unknown profile {profile:?}{hint}; expected one of: {}", PROFILES.join(", ")))
    })?;
    if let Some(name) = &spec.preset {
        let p = preset(name).ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            let hint = crate::input::not_modelled(name)
                .map(|n| format!(" ({n})"))
                .or_else(|| crate::input::did_you_mean(name, &names).map(|n| format!(" (did you mean {n:?}?)")))
                .unwrap_or_default();
            fail("preset", format!("unknown preset {name:?}{hint}; expected one of: {}", names.join(", ")))
        })?;
        (p.apply)(&mut tcp);
    }
    spec.apply_to(&mut tcp);
    tcp.validate().map_err(|(k, m)| fail(&k, m))?;
    Ok(tcp)
}
