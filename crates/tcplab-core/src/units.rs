//! Physical quantities written with their units, as scenarios spell them: `"35ms"`, `"10Mbps"`,
//! `"16KB"`. Parsing is strict (a bare number is refused where a unit is required) so that a typo
//! cannot silently change an experiment by a factor of a thousand.
//!
//! Every numeric key of a scenario is read through one of the types here, which refuse a
//! non-finite or out-of-range value with words the key path is put in front of: `Duration`,
//! `Rate`, `Size` (with units), `Probability` (0 to 1), `NonNegative` (finite ≥ 0), `Multiplier`
//! (1 to 1000); the `de_*` functions read the same into a plain `f64` field. New schema keys
//! (applications, cross traffic, random variables) take these types rather than a bare `f64`.
//! `MAX_TIME`, `MAX_SIZE` and `MAX_RATE` are the documented limits (docs/scenarios.md).
//!
//! Conventions (TARGETS.md, "Units"): rates are decimal (`1 kbps` = 1000 bit/s); sizes follow the
//! papers, `KB` = 1024 bytes (Allman's footnote 4), `kB` = 1000 bytes; `KiB`/`MiB` are binary too.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use std::fmt;

/// Simulated time and durations, in integer nanoseconds.
pub type Time = u64;

pub const NS: Time = 1;
pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// The largest simulated time, 2^62 ns (about 146 years). Every duration a scenario writes and
/// every time derived from them before the run (a flow's start with its spacing, its thinks
/// added up, the warmup) must stay at or below it, so that the engine can still add a delay, a
/// timeout or a transmission time to any of them without leaving the 64-bit clock.
pub const MAX_TIME: Time = 1 << 62;

pub const fn ms(n: u64) -> Time {
    n * MS
}
pub const fn us(n: u64) -> Time {
    n * US
}
pub const fn secs(n: u64) -> Time {
    n * SEC
}
pub fn to_secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

/// The number of `s` exactly, when it is a whole number (digits and `_` only) times `scale`, so
/// that a limit such as 2^62 ns is judged without the rounding of a float (which would read
/// 2^62 + 1 as 2^62). None for a fraction or an exponent, and for more digits than an exact
/// product can hold.
fn exact_whole(s: &str, scale: u64) -> Option<u128> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '_')).unwrap_or(s.len());
    let digits: String = s[..end].chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || digits.len() > 30 || s[end..].trim_start().starts_with(['.', 'e', 'E']) {
        return None;
    }
    digits.parse::<u128>().ok().map(|n| n * scale as u128)
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || c == '_' || ((c == 'e' || c == 'E') && i > 0 && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-'))
            || ((c == '-' || c == '+') && (i == 0 || s[..i].ends_with(['e', 'E'])))))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let num: String = s[..end].chars().filter(|&c| c != '_').collect();
    let v: f64 = num.parse().ok()?;
    Some((v, s[end..].trim()))
}

/// Parse a duration such as `"35ms"`, `"1.5s"`, `"200us"`, `"10ns"`, `"2min"` into nanoseconds.
pub fn parse_duration(s: &str) -> Result<Time, String> {
    let expected = "a duration with a unit, such as \"35ms\", \"1.5s\", \"200us\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("expected {expected}, got {s:?}"))?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "" => return Err(format!("expected {expected}, got {s:?} (the unit is missing)")),
        _ => return Err(format!("expected {expected}, got {s:?} (unknown unit {unit:?})")),
    };
    if !(v >= 0.0) || !v.is_finite() {
        return Err(format!("expected a non-negative {expected}, got {s:?}"));
    }
    let ns = (v * scale).round();
    if exact_whole(s, scale as u64).map_or(ns > MAX_TIME as f64, |n| n > MAX_TIME as u128) {
        return Err(format!("duration {s:?} is beyond the largest simulated time (2^62 ns, about 146 years)"));
    }
    Ok(ns as Time)
}

/// Parse a bit rate such as `"10Mbps"`, `"28.8kbps"`, `"1Gbps"`, `"64kb/s"` into bits per second.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let expected = "a rate with a unit, such as \"10Mbps\", \"28.8kbps\", \"1Gbps\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("expected {expected}, got {s:?}"))?;
    let scale = match unit {
        "bps" | "b/s" | "bit/s" => 1.0,
        "kbps" | "Kbps" | "kb/s" | "kbit/s" => 1e3,
        "Mbps" | "Mb/s" | "Mbit/s" => 1e6,
        "Gbps" | "Gb/s" | "Gbit/s" => 1e9,
        "" => return Err(format!("expected {expected}, got {s:?} (the unit is missing)")),
        _ => return Err(format!("expected {expected}, got {s:?} (unknown unit {unit:?})")),
    };
    let bps = (v * scale).round();
    if !(bps >= 1.0) || !bps.is_finite() {
        return Err(format!("expected a positive {expected}, got {s:?}"));
    }
    if exact_whole(s, scale as u64).map_or(bps > MAX_RATE as f64, |n| n > MAX_RATE as u128) {
        return Err(format!("rate {s:?} is too large (at most 1000000Gbps, 10^15 bit/s)"));
    }
    Ok(bps as u64)
}

/// Parse a mean load such as `"800kbps"`; unlike a link's rate it may be zero (`"0kbps"`, `"0"`):
/// a load swept from nothing.
pub fn parse_load(s: &str) -> Result<u64, String> {
    match split_number(s) {
        Some((v, unit)) if v == 0.0 && !s.trim().starts_with('-') && (unit.is_empty() || parse_rate(&format!("1{unit}")).is_ok()) => Ok(0),
        _ => parse_rate(s),
    }
}

/// Parse a size such as `"16KB"` (16·1024 bytes), `"1MB"`, `"1460B"`, `"10kB"` (10·1000) into bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let expected = "a size with a unit, such as \"1460B\", \"16KB\", \"1MB\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("expected {expected}, got {s:?}"))?;
    let scale = match unit {
        "B" | "bytes" | "" => 1.0,
        "KB" | "KiB" => 1024.0,
        "MB" | "MiB" => 1024.0 * 1024.0,
        "GB" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "kB" => 1e3,
        _ => return Err(format!("expected {expected}, got {s:?} (unknown unit {unit:?})")),
    };
    let b = (v * scale).round();
    if !(b >= 0.0) || !b.is_finite() {
        return Err(format!("expected a non-negative {expected}, got {s:?}"));
    }
    // Sequence numbers are 64-bit and start at 0: keep sizes far from the wrap (2^50 B = 1 PiB).
    if exact_whole(s, scale as u64).map_or(b > MAX_SIZE as f64, |n| n > MAX_SIZE as u128) {
        return Err(format!("size {s:?} is too large (at most 1 PiB)"));
    }
    Ok(b as u64)
}

pub fn format_duration(t: Time) -> String {
    if t == 0 {
        "0s".into()
    } else if t % SEC == 0 {
        format!("{}s", t / SEC)
    } else if t % MS == 0 {
        format!("{}ms", t / MS)
    } else if t % US == 0 {
        format!("{}us", t / US)
    } else {
        format!("{t}ns")
    }
}

pub fn format_rate(bps: u64) -> String {
    if bps % 1_000_000_000 == 0 {
        format!("{}Gbps", bps / 1_000_000_000)
    } else if bps % 1_000_000 == 0 {
        format!("{}Mbps", bps / 1_000_000)
    } else if bps % 1000 == 0 {
        format!("{}kbps", bps / 1000)
    } else {
        format!("{bps}bps")
    }
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:ident, $format:ident, $doc:literal, $allow_int:expr, $int_max:expr) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $inner);

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$format(self.0))
            }
        }

        impl<'de> de::Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($doc)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        if !$allow_int {
                            Err(E::custom(format!("expected {}, got the bare number {v} (write the unit)", $doc)))
                        } else if v < 0 || v as u64 > $int_max {
                            Err(E::custom(format!("expected {} from 0 to {}, got {v}", $doc, $int_max)))
                        } else {
                            Ok($name(v as $inner))
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(v.min(i64::MAX as u64) as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if !v.is_finite() {
                            Err(E::custom(format!("expected {}, got {} (not a finite number)", $doc, show_number(v))))
                        } else if $allow_int {
                            Err(E::custom(format!("expected {}, got the number {v} (a whole number of bytes, or a string with the unit)", $doc)))
                        } else {
                            Err(E::custom(format!("expected {}, got the bare number {v} (write the unit)", $doc)))
                        }
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

fn format_size(b: u64) -> String {
    format!("{b}B")
}

unit_type!(Duration, Time, parse_duration, format_duration, "a duration with a unit, such as \"35ms\" or \"1.5s\"", false, 0);
unit_type!(Rate, u64, parse_rate, format_rate, "a rate with a unit, such as \"10Mbps\"", false, 0);
unit_type!(Size, u64, parse_size, format_size, "a size in bytes or with a unit, such as \"16KB\"", true, MAX_SIZE);
unit_type!(Load, u64, parse_load, format_rate, "a rate with a unit, such as \"800kbps\", or 0", true, 0);

/// The largest rate a scenario may write, 10^15 bit/s: far above any link of the studies, and a
/// float's rounding of it is still exact to the bit per second.
pub const MAX_RATE: u64 = 1_000_000_000_000_000;

/// The largest size a scenario may write, 2^50 bytes (1 PiB): sequence numbers are 64-bit and
/// start at 0, and sizes are multiplied by counts, so they are kept far from the wrap.
pub const MAX_SIZE: u64 = 1 << 50;

/// A number as a refusal shows it: the non-finite values spelled as TOML writes them.
pub fn show_number(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{v}")
    }
}

/// A finite number within [lo, hi], from an integer or a float; `expecting` names the quantity
/// in the refusal ("a probability from 0 to 1"). The one reader behind the number newtypes below
/// and behind the plain `f64` fields that keep their type (`deserialize_with`).
struct FiniteIn {
    expecting: &'static str,
    lo: f64,
    hi: f64,
}

impl<'de> Visitor<'de> for FiniteIn {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        if v.is_finite() && v >= self.lo && v <= self.hi {
            Ok(v)
        } else {
            Err(E::custom(format!("expected {}, got {}", self.expecting, show_number(v))))
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        self.visit_f64(v as f64)
    }
}

fn finite_in<'de, D: Deserializer<'de>>(d: D, expecting: &'static str, lo: f64, hi: f64) -> Result<f64, D::Error> {
    d.deserialize_any(FiniteIn { expecting, lo, hi })
}

const PROBABILITY: &str = "a probability, a finite number from 0 to 1";
const NON_NEGATIVE: &str = "a finite number ≥ 0";
const MULTIPLIER: &str = "a finite multiplier from 1 to 1000";

/// A probability: finite, from 0 to 1 (a loss rate, RED's `max_p`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default, Serialize)]
#[serde(transparent)]
pub struct Probability(pub f64);

impl<'de> de::Deserialize<'de> for Probability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        finite_in(d, PROBABILITY, 0.0, 1.0).map(Probability)
    }
}

/// A finite number ≥ 0 (RED's thresholds, in packets).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default, Serialize)]
#[serde(transparent)]
pub struct NonNegative(pub f64);

impl<'de> de::Deserialize<'de> for NonNegative {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        finite_in(d, NON_NEGATIVE, 0.0, f64::MAX).map(NonNegative)
    }
}

/// A finite multiplier from 1 to 1000 (the RTO backoff: RFC 6298 §5.5 doubles; anything above
/// 1000 reaches `rto_max` on the first expiry anyway).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Multiplier(pub f64);

impl<'de> de::Deserialize<'de> for Multiplier {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        finite_in(d, MULTIPLIER, 1.0, 1000.0).map(Multiplier)
    }
}

/// `deserialize_with` forms of the newtypes for fields that keep a plain `f64` (the run-time code
/// reads them as numbers): `#[serde(deserialize_with = "crate::units::de_probability")]`.
pub fn de_probability<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Probability::deserialize(d).map(|p| p.0)
}

pub fn de_non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    NonNegative::deserialize(d).map(|p| p.0)
}

pub fn de_multiplier<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Multiplier::deserialize(d).map(|p| p.0)
}

pub fn de_multiplier_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Multiplier::deserialize(d).map(|p| Some(p.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("35ms"), Ok(35 * MS));
        assert_eq!(parse_duration("1.5s"), Ok(1_500 * MS));
        assert_eq!(parse_duration("200us"), Ok(200 * US));
        assert_eq!(parse_duration("0s"), Ok(0));
        assert_eq!(parse_duration("2min"), Ok(120 * SEC));
        assert_eq!(parse_duration("1e-3s"), Ok(MS));
        assert!(parse_duration("35").unwrap_err().contains("unit is missing"));
        assert!(parse_duration("35 parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn limits_are_judged_exactly() {
        assert_eq!(parse_duration("4611686018427387904ns"), Ok(MAX_TIME));
        assert!(parse_duration("4611686018427387905ns").unwrap_err().contains("largest simulated time"));
        assert!(parse_duration("4_611_686_018_427_387_905ns").is_err());
        assert_eq!(parse_size("1125899906842624"), Ok(MAX_SIZE));
        assert!(parse_size("1125899906842625").unwrap_err().contains("too large"));
        assert!(parse_duration("1e400s").is_err());
    }

    #[test]
    fn number_newtypes() {
        let p = |t: &str| toml::from_str::<std::collections::BTreeMap<String, Probability>>(t).map(|m| m["p"]);
        assert_eq!(p("p = 0.5").unwrap(), Probability(0.5));
        assert_eq!(p("p = 1").unwrap(), Probability(1.0));
        for bad in ["nan", "inf", "-inf", "-0.1", "1.01", "\"0.1\""] {
            let e = p(&format!("p = {bad}")).unwrap_err().to_string();
            assert!(e.contains("a probability, a finite number from 0 to 1"), "{bad}: {e}");
        }
        let m = |t: &str| toml::from_str::<std::collections::BTreeMap<String, Multiplier>>(t).map(|m| m["m"].0);
        assert_eq!(m("m = 2").unwrap(), 2.0);
        assert!(m("m = 0.5").is_err() && m("m = 1001").is_err() && m("m = nan").is_err());
        assert_eq!(show_number(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("28.8kbps"), Ok(28_800));
        assert_eq!(parse_rate("1Gbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate("64kb/s"), Ok(64_000));
        assert!(parse_rate("10").is_err());
        assert!(parse_rate("0Mbps").is_err());
        assert_eq!(format_rate(28_800), "28800bps");
        assert_eq!(format_rate(10_000_000), "10Mbps");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16KB"), Ok(16 * 1024));
        assert_eq!(parse_size("10kB"), Ok(10_000));
        assert_eq!(parse_size("1460B"), Ok(1460));
        assert_eq!(parse_size("1MB"), Ok(1 << 20));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("3 furlongs").is_err());
        assert!(parse_size("1e30B").unwrap_err().contains("too large"));
    }

    #[test]
    fn serde_round_trip() {
        #[derive(serde::Deserialize, serde::Serialize)]
        struct T {
            d: Duration,
            r: Rate,
            s: Size,
        }
        let t: T = toml::from_str("d = \"35ms\"\nr = \"10Mbps\"\ns = 100").unwrap();
        assert_eq!((t.d.0, t.r.0, t.s.0), (35 * MS, 10_000_000, 100));
        let back = toml::to_string(&t).unwrap();
        assert!(back.contains("\"35ms\"") && back.contains("\"10Mbps\""), "{back}");
        let err = toml::from_str::<T>("d = 35\nr = \"10Mbps\"\ns = 1").err().unwrap().to_string();
        assert!(err.contains("write the unit"), "{err}");
    }
}
