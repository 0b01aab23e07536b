//! How a random variable is read from a scenario and written back. Every parameter is checked as it
//! is read, inside the value it belongs to, so `serde_path_to_error` (and so `ScenarioError`) names
//! the exact key: `flows[0].think.pareto.shape`, `size.empirical.cdf[2][1]`, `size.mix[1].p`.
//! A check that involves two keys of one table (Pareto `mean` with `shape`, `min` < `max`) names
//! the table and says which keys.
//!
//! A `nan` or `inf` reaches serde as a float (the scenario reader, `input.rs`, keeps non-finite
//! numbers) and is refused with its key path; `null` (a Python `None`) where a number is required
//! is refused too: no key of a random variable treats it as absent.

use super::{Dist, LogLocation, Quantity, Rv};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// How far the probabilities of a `mix`, and the last F of a CDF, may stray from 1.
const PROB_SUM_TOLERANCE: f64 = 1e-9;

const NULL_NUMBER: &str = "got nothing (null): NaN and infinity are not allowed (JSON, which cannot hold them, makes them null)";

const FORMS: &str = "constant, uniform, exponential, pareto, bounded_pareto, lognormal, normal, empirical, mix, named";

// ---------------------------------------------------------------------------------------------
// Dimensionless numbers: small checks, each refusing NaN, infinity and null with the key path of
// the number. They read inside a random variable's own tables (seeded deserialisation, which the
// shared `units::Probability` / `NonNegative` readers do not serve) with the same ranges.
// ---------------------------------------------------------------------------------------------

/// What a dimensionless number must be.
#[derive(Clone, Copy)]
enum NumRule {
    /// Any finite number (a lognormal `mu`).
    Finite,
    /// A finite number > 0 (shapes, sigma).
    Positive,
    /// A probability: a finite number from 0 to 1.
    Probability,
}

impl NumRule {
    fn expecting(self) -> &'static str {
        match self {
            NumRule::Finite => "a finite number",
            NumRule::Positive => "a finite number greater than 0",
            NumRule::Probability => "a probability from 0 to 1",
        }
    }
    fn check<E: de::Error>(self, v: f64) -> Result<f64, E> {
        let ok = v.is_finite()
            && match self {
                NumRule::Finite => true,
                NumRule::Positive => v > 0.0,
                NumRule::Probability => (0.0..=1.0).contains(&v),
            };
        if ok {
            Ok(v)
        } else {
            Err(E::custom(format!("expected {}, got {v}", self.expecting())))
        }
    }
}

struct NumSeed(NumRule);

impl<'de> DeserializeSeed<'de> for NumSeed {
    type Value = f64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NumSeed {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0.expecting())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        self.0.check(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        self.0.check(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        self.0.check(v as f64)
    }
    fn visit_unit<E: de::Error>(self) -> Result<f64, E> {
        Err(E::custom(format!("expected {}, {NULL_NUMBER}", self.0.expecting())))
    }
    fn visit_none<E: de::Error>(self) -> Result<f64, E> {
        self.visit_unit()
    }
}

macro_rules! num_type {
    ($name:ident, $rule:expr) => {
        #[derive(Clone, Copy, Debug)]
        struct $name(f64);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                NumSeed($rule).deserialize(d).map($name)
            }
        }
    };
}

num_type!(Finite, NumRule::Finite);
num_type!(Positive, NumRule::Positive);
num_type!(Probability, NumRule::Probability);

// ---------------------------------------------------------------------------------------------
// Quantities (durations, sizes, counts) in base units.
// ---------------------------------------------------------------------------------------------

/// What a quantity parameter must be beyond non-negative and finite.
#[derive(Clone, Copy, Default)]
struct QtyRule {
    /// Strictly greater than 0 (a mean, a scale, a minimum of a Pareto).
    positive: bool,
    /// A whole number (a constant count).
    whole: bool,
    /// At least this value, with the name of the key it is compared with.
    at_least: Option<(f64, &'static str)>,
    /// Strictly more than this value, with the name of the key it is compared with.
    more_than: Option<(f64, &'static str)>,
}

struct QtySeed<Q>(QtyRule, PhantomData<Q>);

impl<Q: Quantity> QtySeed<Q> {
    fn new(rule: QtyRule) -> Self {
        QtySeed(rule, PhantomData)
    }
    fn check<E: de::Error>(&self, v: Result<f64, String>) -> Result<f64, E> {
        let v = v.map_err(E::custom)?;
        let r = self.0;
        let fmt = |x: f64| match Q::to_json(x) {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        if !v.is_finite() || v < 0.0 {
            return Err(E::custom(format!("expected {}, got {v}", Q::EXPECTING)));
        }
        if r.positive && v <= 0.0 {
            return Err(E::custom(format!("expected a {} greater than 0", Q::KIND)));
        }
        if r.whole && v.fract() != 0.0 {
            return Err(E::custom(format!("a constant {} is a whole number, got {v}", Q::KIND)));
        }
        // A constant is not a draw: one beyond the largest draw would be clamped to it silently
        // (`think = "480h"` ran as 312.7 h), so it is refused where it is written.
        if r.whole && v > super::MAX_DRAW {
            return Err(E::custom(format!(
                "a constant {} is at most 2^50 base units ({}), the largest value a draw takes; got {}",
                Q::KIND,
                fmt(super::MAX_DRAW),
                fmt(v)
            )));
        }
        if let Some((lo, key)) = r.at_least {
            if v < lo {
                return Err(E::custom(format!("must not be below the previous {key} ({})", fmt(lo))));
            }
        }
        if let Some((lo, key)) = r.more_than {
            if v <= lo {
                return Err(E::custom(format!("must exceed {key} ({}), got {}", fmt(lo), fmt(v))));
            }
        }
        Ok(v)
    }
}

impl<'de, Q: Quantity> DeserializeSeed<'de> for QtySeed<Q> {
    type Value = f64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, Q: Quantity> Visitor<'de> for QtySeed<Q> {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(Q::EXPECTING)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        // A count is a plain number, as `pages` and `count` are: `"3"` is refused alike.
        if Q::KIND == "count" {
            return Err(E::custom(format!("expected {}, got the string {v:?} (write a count as a number, without quotes)", Q::EXPECTING)));
        }
        self.check(Q::parse_str(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        if v < 0 {
            return Err(E::custom(format!("expected {}, got {v}", Q::EXPECTING)));
        }
        self.check(Q::parse_number(v as f64, true))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        self.check(Q::parse_number(v as f64, true))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        if !v.is_finite() {
            return Err(E::custom(format!("expected {}, got {v} (NaN and infinity are not allowed)", Q::EXPECTING)));
        }
        self.check(Q::parse_number(v, false))
    }
    fn visit_unit<E: de::Error>(self) -> Result<f64, E> {
        Err(E::custom(format!("expected {}, {NULL_NUMBER}", Q::EXPECTING)))
    }
    fn visit_none<E: de::Error>(self) -> Result<f64, E> {
        self.visit_unit()
    }
}

/// A non-negative quantity parameter (`min` of a uniform).
#[derive(Clone, Copy, Debug)]
struct Qty<Q>(f64, PhantomData<Q>);
/// A quantity parameter greater than 0 (means, scales, sd).
#[derive(Clone, Copy, Debug)]
struct PosQty<Q>(f64, PhantomData<Q>);

impl<'de, Q: Quantity> Deserialize<'de> for Qty<Q> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        QtySeed::<Q>::new(QtyRule::default()).deserialize(d).map(|v| Qty(v, PhantomData))
    }
}

impl<'de, Q: Quantity> Deserialize<'de> for PosQty<Q> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        QtySeed::<Q>::new(QtyRule { positive: true, ..Default::default() }).deserialize(d).map(|v| PosQty(v, PhantomData))
    }
}

/// For optional keys: present means a value, so `null` is an error, not "absent".
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

// ---------------------------------------------------------------------------------------------
// The distribution tables.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Constant,
    Uniform,
    Exponential,
    Pareto,
    BoundedPareto,
    Lognormal,
    Normal,
    Empirical,
    Mix,
    Named,
}

impl Form {
    fn from_name(s: &str) -> Option<Form> {
        Some(match s {
            "constant" => Form::Constant,
            "uniform" => Form::Uniform,
            "exponential" => Form::Exponential,
            "pareto" => Form::Pareto,
            "bounded_pareto" => Form::BoundedPareto,
            "lognormal" => Form::Lognormal,
            "normal" => Form::Normal,
            "empirical" => Form::Empirical,
            "mix" => Form::Mix,
            "named" => Form::Named,
            _ => return None,
        })
    }
}

/// The key of a distribution table; an unknown name is refused at the key itself.
struct FormSeed;

impl<'de> DeserializeSeed<'de> for FormSeed {
    type Value = (Form, String);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let s = String::deserialize(d)?;
        match Form::from_name(&s) {
            Some(f) => Ok((f, s)),
            None => Err(de::Error::custom(format!("unknown distribution `{s}`; expected one of: {FORMS}"))),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
struct ParetoTable<Q: Quantity> {
    shape: Positive,
    #[serde(default, deserialize_with = "present")]
    mean: Option<PosQty<Q>>,
    #[serde(default, deserialize_with = "present")]
    scale: Option<PosQty<Q>>,
}

impl<Q: Quantity> ParetoTable<Q> {
    fn into_dist(self) -> Result<Dist, String> {
        let shape = self.shape.0;
        match (self.mean, self.scale) {
            (Some(_), Some(_)) => Err("give `mean` or `scale`, not both".into()),
            (None, None) => Err("needs `mean` (ns-2's avg_) or `scale` (the minimum x_m)".into()),
            (None, Some(s)) => Ok(Dist::Pareto { shape, scale: s.0, given_mean: None }),
            (Some(_), None) if shape <= 1.0 => Err(format!(
                "a Pareto given its `mean` needs `shape` > 1 (got {shape}: the mean is infinite); give `scale` instead"
            )),
            // ns-2 ParetoRandomVariable::value: scale = avg·(shape − 1)/shape.
            (Some(m), None) => Ok(Dist::Pareto { shape, scale: m.0 * (shape - 1.0) / shape, given_mean: Some(m.0) }),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
struct BoundedParetoTable<Q: Quantity> {
    shape: Positive,
    min: PosQty<Q>,
    max: PosQty<Q>,
}

impl<Q: Quantity> BoundedParetoTable<Q> {
    fn into_dist(self) -> Result<Dist, String> {
        if self.max.0 <= self.min.0 {
            return Err(format!("`max` ({}) must exceed `min` ({})", Q::to_json(self.max.0), Q::to_json(self.min.0)));
        }
        Ok(Dist::BoundedPareto { shape: self.shape.0, min: self.min.0, max: self.max.0 })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
struct LognormalTable<Q: Quantity> {
    #[serde(default, deserialize_with = "present")]
    mu: Option<Finite>,
    #[serde(default, deserialize_with = "present")]
    median: Option<PosQty<Q>>,
    sigma: Positive,
}

impl<Q: Quantity> LognormalTable<Q> {
    fn into_dist(self) -> Result<Dist, String> {
        let loc = match (self.mu, self.median) {
            (Some(_), Some(_)) => return Err("give `mu` or `median`, not both".into()),
            (None, None) => return Err(format!("needs `median` or `mu` (the mean of ln x, x in {})", Q::LOG_UNIT_NAME)),
            (Some(mu), None) if mu.0.exp() * Q::LOG_UNIT > super::MAX_DRAW => {
                return Err(format!("`mu` = {} puts the median beyond 2^50 base units (the largest draw)", mu.0));
            }
            (Some(mu), None) => LogLocation::Mu { mu: mu.0, unit: Q::LOG_UNIT },
            (None, Some(m)) => LogLocation::Median(m.0),
        };
        Ok(Dist::Lognormal { loc, sigma: self.sigma.0 })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
struct NormalTable<Q: Quantity> {
    mean: Qty<Q>,
    sd: PosQty<Q>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
struct EmpiricalTable<Q: Quantity> {
    #[serde(default, deserialize_with = "present")]
    cdf: Option<Cdf<Q>>,
    #[serde(default, deserialize_with = "present")]
    csv: Option<CsvCdf<Q>>,
    /// Linear interpolation between points (ns-2 `interpolation_` 1); default: a step CDF, ns-2's
    /// default (`interpolation_` 0).
    #[serde(default)]
    interpolate: bool,
}

impl<Q: Quantity> EmpiricalTable<Q> {
    fn into_dist(self) -> Result<Dist, String> {
        let (points, csv) = match (self.cdf, self.csv) {
            (Some(_), Some(_)) => return Err("give `cdf` or `csv`, not both".into()),
            (None, None) => return Err("needs `cdf` (a list of [x, F] points) or `csv` (a file of them)".into()),
            (Some(c), None) => (c.0, None),
            (None, Some(c)) => (c.points, Some(c.path)),
        };
        Ok(Dist::Empirical { points, interpolate: self.interpolate, csv })
    }
}

/// Check one CDF point against the previous one: x and F non-decreasing, F a probability. The error
/// says which coordinate (0 = x, 1 = F). Shared by inline CDFs and CSV files.
fn check_point(prev: Option<(f64, f64)>, x: f64, f: f64) -> Result<(), (usize, String)> {
    if !(0.0..=1.0).contains(&f) || !f.is_finite() {
        return Err((1, format!("expected a cumulative probability from 0 to 1, got {f}")));
    }
    if let Some((px, pf)) = prev {
        if x < px {
            return Err((0, format!("x must not decrease (previous point has {px} base units, this one {x})")));
        }
        if f < pf {
            return Err((1, format!("F must not decrease (previous point has F = {pf}, this one {f})")));
        }
    }
    Ok(())
}

/// The last F of a CDF must be 1.
fn check_last(last: Option<(f64, f64)>) -> Result<(), String> {
    match last {
        None => Err("a CDF needs at least one point".into()),
        Some((_, f)) if (f - 1.0).abs() > PROB_SUM_TOLERANCE => Err(format!("the last point's F must be 1, got {f}")),
        Some(_) => Ok(()),
    }
}

/// An inline CDF, `[[x, F], ...]`, checked point by point.
struct Cdf<Q>(Vec<(f64, f64)>, PhantomData<Q>);

impl<'de, Q: Quantity> Deserialize<'de> for Cdf<Q> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<Q>(PhantomData<Q>);
        impl<'de, Q: Quantity> Visitor<'de> for V<Q> {
            type Value = Cdf<Q>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of [x, F] points, such as [[\"1KB\", 0.5], [\"8KB\", 1.0]]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cdf<Q>, A::Error> {
                let mut points: Vec<(f64, f64)> = Vec::new();
                while let Some(p) = seq.next_element_seed(PointSeed::<Q>(points.last().copied(), PhantomData))? {
                    points.push(p);
                }
                check_last(points.last().copied()).map_err(de::Error::custom)?;
                Ok(Cdf(points, PhantomData))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

/// One `[x, F]` point; the previous point is known so that a decrease is named at its coordinate.
struct PointSeed<Q>(Option<(f64, f64)>, PhantomData<Q>);

impl<'de, Q: Quantity> DeserializeSeed<'de> for PointSeed<Q> {
    type Value = (f64, f64);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(f64, f64), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, Q: Quantity> Visitor<'de> for PointSeed<Q> {
    type Value = (f64, f64);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a point [x, F]: x {}, F a cumulative probability", Q::EXPECTING)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(f64, f64), A::Error> {
        let prev = self.0;
        let at_least = prev.map(|(px, _)| (px, "point's x"));
        let x = seq
            .next_element_seed(QtySeed::<Q>::new(QtyRule { at_least, ..Default::default() }))?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let f = seq.next_element_seed(CdfProbSeed(prev.map(|(_, pf)| pf)))?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("a point has two elements, [x, F]"));
        }
        Ok((x, f))
    }
}

/// F of a CDF point: a probability not below the previous point's F.
struct CdfProbSeed(Option<f64>);

impl<'de> DeserializeSeed<'de> for CdfProbSeed {
    type Value = f64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        let f = NumSeed(NumRule::Probability).deserialize(d)?;
        match self.0 {
            Some(pf) if f < pf => Err(de::Error::custom(format!("F must not decrease (previous point has F = {pf}, this one {f})"))),
            _ => Ok(f),
        }
    }
}

/// A CDF read from a file when the scenario is read: one point a line, `x,F` or `x F`, or ns-2's
/// three columns `x count F` (`tools/ranvar.cc` `loadCDF`); blank lines and `#` comments skipped.
/// x is a plain number in the kind's CSV unit (bytes, seconds, count). A relative path is relative
/// to the working directory of the process that reads the scenario.
struct CsvCdf<Q> {
    path: String,
    points: Vec<(f64, f64)>,
    kind: PhantomData<Q>,
}

impl<'de, Q: Quantity> Deserialize<'de> for CsvCdf<Q> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let path = String::deserialize(d)?;
        let points = read_cdf_file(&path, Q::LOG_UNIT, Q::LOG_UNIT_NAME).map_err(de::Error::custom)?;
        Ok(CsvCdf { path, points, kind: PhantomData })
    }
}

/// The largest CDF file read (bytes): a CDF of a million points fits in it several times over.
pub const MAX_CDF_FILE_BYTES: u64 = 16 << 20;

/// A line of a CDF file as an error may show it: only a short line of numbers and separators (what
/// a CDF row is made of). Anything else (the file is not a CDF: it may hold secrets) is not shown.
fn excerpt(line: &str) -> String {
    let cdf_like = line.len() <= 60 && line.chars().all(|c| c.is_ascii_digit() || " \t,.+-eE".contains(c));
    if cdf_like {
        format!("{line:?}")
    } else {
        "a line that is not numbers and separators (not shown)".into()
    }
}

/// The text of a CDF file: a regular file (not a device, a FIFO or a directory) of at most
/// `MAX_CDF_FILE_BYTES`, read with that bound (a file in /proc reports size 0).
fn read_cdf_text(path: &str) -> Result<String, String> {
    use std::io::Read;
    let m = std::fs::metadata(path).map_err(|e| format!("cannot read the CDF file {path:?}: {e}"))?;
    if !m.is_file() {
        return Err(format!("cannot read the CDF file {path:?}: not a regular file (a CDF file is a plain file of `x,F` lines)"));
    }
    let too_big = || format!("the CDF file {path:?} is larger than the limit of {} MiB", MAX_CDF_FILE_BYTES >> 20);
    if m.len() > MAX_CDF_FILE_BYTES {
        return Err(too_big());
    }
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read the CDF file {path:?}: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_CDF_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read the CDF file {path:?}: {e}"))?;
    if bytes.len() as u64 > MAX_CDF_FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| format!("cannot read the CDF file {path:?}: not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// Read and check a CDF file; errors name the file and the line, and show a line only when it
/// looks like a CDF row (`excerpt`).
pub(crate) fn read_cdf_file(path: &str, unit: f64, unit_name: &str) -> Result<Vec<(f64, f64)>, String> {
    let text = read_cdf_text(path)?;
    let mut points: Vec<(f64, f64)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).collect();
        let (xs, fs) = match cols.as_slice() {
            [x, f] | [x, _, f] => (*x, *f),
            _ => return Err(format!("{path:?}, line {n}: expected `x,F` or `x count F`, got {}", excerpt(line))),
        };
        let num = |s: &str, what: &str| -> Result<f64, String> {
            match s.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(format!("{path:?}, line {n}: expected {what} as a finite number, got {}", excerpt(s))),
            }
        };
        let x = num(xs, &format!("x (in {unit_name})"))?;
        let f = num(fs, "F")?;
        if x < 0.0 || x * unit > super::MAX_DRAW {
            return Err(format!("{path:?}, line {n}: x must be from 0 to 2^50 base units, got {x}"));
        }
        check_point(points.last().copied(), x * unit, f).map_err(|(_, m)| format!("{path:?}, line {n}: {m}"))?;
        points.push((x * unit, f));
    }
    check_last(points.last().copied()).map_err(|m| format!("{path:?}: {m}"))?;
    Ok(points)
}

/// One `{ p, value }` entry of a mix; `value` is any random variable of the same kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
struct MixEntry<Q: Quantity> {
    p: Probability,
    value: Rv<Q>,
}

struct MixSeed<Q>(PhantomData<Q>);

impl<'de, Q: Quantity> DeserializeSeed<'de> for MixSeed<Q> {
    type Value = Dist;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Dist, D::Error> {
        let entries: Vec<MixEntry<Q>> = Vec::deserialize(d)?;
        if entries.is_empty() {
            return Err(de::Error::custom("a mix needs at least one { p, value } entry"));
        }
        let sum: f64 = entries.iter().map(|e| e.p.0).sum();
        if (sum - 1.0).abs() > PROB_SUM_TOLERANCE {
            return Err(de::Error::custom(format!("the probabilities `p` must sum to 1, they sum to {sum}")));
        }
        Ok(Dist::Mix(entries.into_iter().map(|e| (e.p.0, e.value.dist)).collect()))
    }
}

/// `[min, max]` of a uniform; `max` is checked against `min` where it is written.
struct UniformSeed<Q>(PhantomData<Q>);

impl<'de, Q: Quantity> DeserializeSeed<'de> for UniformSeed<Q> {
    type Value = Dist;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Dist, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, Q: Quantity> Visitor<'de> for UniformSeed<Q> {
    type Value = Dist;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "[min, max], each {}", Q::EXPECTING)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dist, A::Error> {
        let min = seq.next_element_seed(QtySeed::<Q>::new(QtyRule::default()))?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let max = seq
            .next_element_seed(QtySeed::<Q>::new(QtyRule { more_than: Some((min, "min")), ..Default::default() }))?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("a uniform has two elements, [min, max]"));
        }
        Ok(Dist::Uniform { min, max })
    }
}

/// A table deserialised with serde's derive, then checked as a whole (the error names the table).
/// Only a table is accepted: serde's derive would also take a list of the fields in order, a form
/// the scenario never documents.
struct TableSeed<T>(fn(T) -> Result<Dist, String>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for TableSeed<T> {
    type Value = Dist;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Dist, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for TableSeed<T> {
    type Value = Dist;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a table of the distribution's parameters")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Dist, A::Error> {
        let t = T::deserialize(de::value::MapAccessDeserializer::new(map))?;
        (self.0)(t).map_err(de::Error::custom)
    }
}

struct NamedSeed<Q>(PhantomData<Q>);

impl<'de, Q: Quantity> DeserializeSeed<'de> for NamedSeed<Q> {
    type Value = Dist;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Dist, D::Error> {
        let name = String::deserialize(d)?;
        match super::named::lookup(&name, Q::KIND) {
            Some(n) => Ok(Dist::Named(n.name, Box::new((n.build)()))),
            None => {
                let names: Vec<&str> = super::NAMED.iter().filter(|n| n.kind == Q::KIND).map(|n| n.name).collect();
                let list = if names.is_empty() { "none for this kind".to_string() } else { names.join(", ") };
                Err(de::Error::custom(format!("unknown {} distribution {name:?}; the named {} distributions are: {list}", Q::KIND, Q::KIND)))
            }
        }
    }
}

struct RvVisitor<Q>(PhantomData<Q>);

impl<Q: Quantity> RvVisitor<Q> {
    fn constant<E: de::Error>(v: Result<f64, E>) -> Result<Rv<Q>, E> {
        v.map(|x| Rv::from_dist(Dist::Constant(x)))
    }
    fn whole() -> QtySeed<Q> {
        QtySeed::new(QtyRule { whole: true, ..Default::default() })
    }
}

impl<'de, Q: Quantity> Visitor<'de> for RvVisitor<Q> {
    type Value = Rv<Q>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} (a constant) or a table naming one distribution ({FORMS})", Q::EXPECTING)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Rv<Q>, E> {
        Self::constant(Self::whole().visit_str(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rv<Q>, E> {
        Self::constant(Self::whole().visit_i64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rv<Q>, E> {
        Self::constant(Self::whole().visit_u64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rv<Q>, E> {
        Self::constant(Self::whole().visit_f64(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Rv<Q>, E> {
        Self::constant(Self::whole().visit_unit())
    }
    fn visit_none<E: de::Error>(self) -> Result<Rv<Q>, E> {
        self.visit_unit()
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Rv<Q>, A::Error> {
        let Some((form, name)) = map.next_key_seed(FormSeed)? else {
            return Err(de::Error::custom(format!("an empty table: name one distribution ({FORMS})")));
        };
        let dist = match form {
            Form::Constant => Dist::Constant(map.next_value_seed(Self::whole())?),
            Form::Uniform => map.next_value_seed(UniformSeed::<Q>(PhantomData))?,
            Form::Exponential => {
                Dist::Exponential { mean: map.next_value_seed(QtySeed::<Q>::new(QtyRule { positive: true, ..Default::default() }))? }
            }
            Form::Pareto => map.next_value_seed(TableSeed(ParetoTable::<Q>::into_dist))?,
            Form::BoundedPareto => map.next_value_seed(TableSeed(BoundedParetoTable::<Q>::into_dist))?,
            Form::Lognormal => map.next_value_seed(TableSeed(LognormalTable::<Q>::into_dist))?,
            Form::Normal => map.next_value_seed(TableSeed(|t: NormalTable<Q>| Ok(Dist::Normal { mean: t.mean.0, sd: t.sd.0 })))?,
            Form::Empirical => map.next_value_seed(TableSeed(EmpiricalTable::<Q>::into_dist))?,
            Form::Mix => map.next_value_seed(MixSeed::<Q>(PhantomData))?,
            Form::Named => map.next_value_seed(NamedSeed::<Q>(PhantomData))?,
        };
        if let Some(other) = map.next_key::<String>()? {
            return Err(de::Error::custom(format!("a random variable names one distribution; `{other}` follows `{name}`")));
        }
        Ok(Rv::from_dist(dist))
    }
}

impl<'de, Q: Quantity> Deserialize<'de> for Rv<Q> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RvVisitor(PhantomData))
    }
}

// ---------------------------------------------------------------------------------------------
// Writing back: the form the scenario used, in canonical units, so that reading the echo gives the
// same random variable.
// ---------------------------------------------------------------------------------------------

/// A shipped distribution (`{ named = "..." }`) written out as the table it is built from, in the
/// form a scenario would write it (`{"empirical": {"cdf": [...], "interpolate": true}}`), for a
/// front end that must draw from it itself (the ns-2 export draws Mah's sizes in Tcl). None for
/// an unknown name, or one whose form has no table (SURGE's spliced lognormal).
pub fn named_table(name: &str, kind: &str) -> Option<serde_json::Value> {
    let n = super::named::lookup(name, kind)?;
    let d = (n.build)();
    let v = match kind {
        "size" => to_json::<super::SizeKind>(&d),
        "count" => to_json::<super::CountKind>(&d),
        "duration" => to_json::<super::DurationKind>(&d),
        _ => return None,
    };
    (!v.is_null()).then_some(v)
}

fn to_json<Q: Quantity>(d: &Dist) -> serde_json::Value {
    use serde_json::{json, Value};
    let q = Q::to_json;
    let table = |name: &str, v: Value| -> Value {
        let mut m = serde_json::Map::new();
        m.insert(name.into(), v);
        Value::Object(m)
    };
    match d {
        Dist::Constant(x) => q(*x),
        Dist::Uniform { min, max } => table("uniform", json!([q(*min), q(*max)])),
        Dist::Exponential { mean } => table("exponential", q(*mean)),
        Dist::Pareto { shape, given_mean: Some(mean), .. } => table("pareto", json!({ "shape": shape, "mean": q(*mean) })),
        Dist::Pareto { shape, scale, given_mean: None } => table("pareto", json!({ "shape": shape, "scale": q(*scale) })),
        Dist::BoundedPareto { shape, min, max } => table("bounded_pareto", json!({ "shape": shape, "min": q(*min), "max": q(*max) })),
        Dist::Lognormal { loc: LogLocation::Mu { mu, .. }, sigma } => table("lognormal", json!({ "mu": mu, "sigma": sigma })),
        Dist::Lognormal { loc: LogLocation::Median(m), sigma } => table("lognormal", json!({ "median": q(*m), "sigma": sigma })),
        Dist::Normal { mean, sd } => table("normal", json!({ "mean": q(*mean), "sd": q(*sd) })),
        Dist::Empirical { csv: Some(path), interpolate, .. } => table("empirical", json!({ "csv": path, "interpolate": interpolate })),
        Dist::Empirical { points, interpolate, csv: None } => {
            let cdf: Vec<Value> = points.iter().map(|(x, f)| json!([q(*x), f])).collect();
            table("empirical", json!({ "cdf": cdf, "interpolate": interpolate }))
        }
        Dist::Mix(parts) => table("mix", Value::Array(parts.iter().map(|(p, d)| json!({ "p": p, "value": to_json::<Q>(d) })).collect())),
        Dist::Named(name, _) => table("named", Value::from(*name)),
        // Only reachable through a named distribution, which is echoed by its name.
        Dist::LognormalParetoTail { .. } => Value::Null,
    }
}

impl<Q: Quantity> Serialize for Rv<Q> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        to_json::<Q>(&self.dist).serialize(s)
    }
}
