//! Random variables of a scenario: every quantity that may vary (think times, ON/OFF times, access
//! delays, object and packet sizes, objects per page) is written as a constant or as a named
//! distribution, validated once with its key path, and drawn from the stream of the component that
//! draws it (DESIGN.md, "Randomness"), so changing a web client never changes the cross traffic.
//!
//! Three quantity kinds share one schema: [`RandomDuration`] (integer nanoseconds),
//! [`RandomSize`] (bytes) and [`RandomCount`] (a number of things). In TOML:
//!
//! ```toml
//! think   = "2s"                                          # a constant
//! think   = { exponential = "2s" }                        # the mean
//! delay   = { uniform = ["1ms", "5ms"] }                  # [min, max)
//! on_time = { pareto = { shape = 1.5, mean = "1ms" } }    # ns-2's avg_/shape_ form; or scale = x_m
//! size    = { bounded_pareto = { shape = 1.1, min = "1KB", max = "10MB" } }
//! size    = { lognormal = { median = "11KB", sigma = 1.3 } }  # or mu = ln of bytes (seconds, count)
//! delay   = { normal = { mean = "10ms", sd = "5ms" } }    # truncated at zero by redrawing
//! size    = { empirical = { cdf = [["100B", 0.2], ["2KB", 0.7], ["64KB", 1.0]], interpolate = true } }
//! size    = { empirical = { csv = "sizes.cdf" } }         # "x,F" or ns-2's "x count F" lines
//! size    = { mix = [{ p = 0.5, value = "44B" }, { p = 0.25, value = "576B" }, { p = 0.25, value = "1500B" }] }
//! size    = { named = "mah1997_reply" }                   # see `named.rs`
//! objects = { exponential = 2 }                           # counts are plain numbers
//! ```
//!
//! Sampling: each draw takes uniforms from the caller's [`RngStream`] only, so the same stream gives
//! the same draws. The continuous draw is clamped to [0, 2^50] and rounded to the nearest integer
//! (halves up), as ns-2 rounds Pareto burst lengths (`int(x + 0.5)`); [`Rv::mean`] is the mean of
//! the continuous form. The rounding changes the mean by less than half a unit (1 ns, 1 byte, one
//! object): negligible for times and sizes, visible for counts with small means (an exponential
//! count of mean 2 draws 1.979 on average; see `docs/scenarios.md`).
//!
//! Use in a component: hold the variable in its spec (`think: RandomDuration`, with
//! `#[serde(default = ...)]` for a default) and give each variable its own stream named after the
//! component, `RngStream::new(seed, "app:web3:think")`, then `spec.think.sample(&mut rng)`. One
//! stream per variable keeps the think times unchanged when only the size distribution changes
//! (distributions take different numbers of uniforms per draw). `Rv::mean` is the knob for
//! aggregate load.
//!
//! Sources: ns-2 `tools/ranvar.cc` and `tools/rng.h` (Pareto with `avg_`/`shape_`, Exponential,
//! Empirical with and without interpolation, LogNormal with `avg_`/`std_` of the logarithm); the
//! named web distributions cite their papers in `named.rs`.

mod named;
mod schema;

pub use named::{NamedRv, NAMED};
pub use schema::{named_table, MAX_CDF_FILE_BYTES};

use crate::engine::rng::RngStream;
use std::marker::PhantomData;

/// The largest value a draw returns (2^50: 13 days in ns, 1 PiB in bytes, the cap `units.rs` puts
/// on sizes). Heavy tails are clamped here so that simulated time and sequence space cannot
/// overflow; for a Pareto of shape 1.2 and scale 1 s the clamp touches one draw in 10^7.
pub const MAX_DRAW: f64 = (1u64 << 50) as f64;

/// What a random variable measures: how its values are written, read and echoed.
pub trait Quantity: Copy + Clone + std::fmt::Debug + PartialEq + 'static {
    /// `"duration"`, `"size"` or `"count"`, as error messages and named distributions say it.
    const KIND: &'static str;
    /// How one value is written, for error messages.
    const EXPECTING: &'static str;
    /// The unit a lognormal `mu` and a CSV column are written in, in base units (ns, B, 1).
    const LOG_UNIT: f64;
    const LOG_UNIT_NAME: &'static str;
    /// A value written as a string (`"2s"`, `"16KB"`, `"3"`), in base units.
    fn parse_str(s: &str) -> Result<f64, String>;
    /// A value written as a bare number, in base units (`integer`: it was written without a
    /// fraction or exponent).
    fn parse_number(v: f64, integer: bool) -> Result<f64, String>;
    /// The canonical spelling of a value in base units (for the scenario echo).
    fn to_json(x: f64) -> serde_json::Value;
}

/// Durations, in nanoseconds; written with a unit (`"2s"`); lognormal `mu` and CSV in seconds (ns-2's
/// unit of time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DurationKind;
/// Sizes, in bytes; written with a unit or as a bare integer of bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeKind;
/// Counts (objects per page, packets per burst); written as plain numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CountKind;

impl Quantity for DurationKind {
    const KIND: &'static str = "duration";
    const EXPECTING: &'static str = "a duration with a unit, such as \"35ms\" or \"2s\"";
    const LOG_UNIT: f64 = 1e9;
    const LOG_UNIT_NAME: &'static str = "seconds";
    fn parse_str(s: &str) -> Result<f64, String> {
        crate::units::parse_duration(s).map(|t| t as f64)
    }
    fn parse_number(v: f64, _: bool) -> Result<f64, String> {
        Err(format!("expected {}, got the bare number {v} (write the unit)", Self::EXPECTING))
    }
    fn to_json(x: f64) -> serde_json::Value {
        crate::units::format_duration(x.round() as u64).into()
    }
}

impl Quantity for SizeKind {
    const KIND: &'static str = "size";
    const EXPECTING: &'static str = "a size in bytes or with a unit, such as 1460 or \"16KB\"";
    const LOG_UNIT: f64 = 1.0;
    const LOG_UNIT_NAME: &'static str = "bytes";
    fn parse_str(s: &str) -> Result<f64, String> {
        crate::units::parse_size(s).map(|b| b as f64)
    }
    fn parse_number(v: f64, integer: bool) -> Result<f64, String> {
        // As `units::Size`: a bare integer is bytes; a fraction needs its unit written.
        if integer && (0.0..=MAX_DRAW).contains(&v) {
            Ok(v)
        } else if integer {
            Err(format!("expected {}, got {v} (0 to 1 PiB)", Self::EXPECTING))
        } else {
            Err(format!("expected {}, got the bare number {v} (write the unit)", Self::EXPECTING))
        }
    }
    fn to_json(x: f64) -> serde_json::Value {
        format!("{}B", x.round() as u64).into()
    }
}

impl Quantity for CountKind {
    const KIND: &'static str = "count";
    const EXPECTING: &'static str = "a non-negative number, such as 3 or 2.5";
    const LOG_UNIT: f64 = 1.0;
    const LOG_UNIT_NAME: &'static str = "the count itself";
    fn parse_str(s: &str) -> Result<f64, String> {
        match s.trim().parse::<f64>() {
            Ok(v) => Self::parse_number(v, v.fract() == 0.0),
            Err(_) => Err(format!("expected {}, got {s:?}", Self::EXPECTING)),
        }
    }
    fn parse_number(v: f64, _: bool) -> Result<f64, String> {
        if v.is_finite() && (0.0..=MAX_DRAW).contains(&v) {
            Ok(v)
        } else {
            Err(format!("expected {}, got {v}", Self::EXPECTING))
        }
    }
    fn to_json(x: f64) -> serde_json::Value {
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            serde_json::Value::from(x as u64)
        } else {
            serde_json::Value::from(x)
        }
    }
}

/// A random variable of kind `Q`: a validated distribution over non-negative values in base units.
#[derive(Clone, Debug, PartialEq)]
pub struct Rv<Q: Quantity> {
    dist: Dist,
    kind: PhantomData<Q>,
}

/// A random duration (think times, ON/OFF times, access delays); draws are nanoseconds.
pub type RandomDuration = Rv<DurationKind>;
/// A random size (object sizes, packet sizes); draws are bytes.
pub type RandomSize = Rv<SizeKind>;
/// A random count (objects per page); draws are whole numbers.
pub type RandomCount = Rv<CountKind>;

/// Where a lognormal is located: `mu` (mean of the logarithm, in the kind's log unit) or `median`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LogLocation {
    /// ln of the value in `Quantity::LOG_UNIT`s; `unit` converts to base units.
    Mu { mu: f64, unit: f64 },
    Median(f64),
}

impl LogLocation {
    /// The mean of ln(X) with X in base units.
    fn mu_base(&self) -> f64 {
        match *self {
            LogLocation::Mu { mu, unit } => mu + unit.ln(),
            LogLocation::Median(m) => m.ln(),
        }
    }
}

/// The distributions, with every parameter in base units (ns, bytes, count).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Dist {
    Constant(f64),
    /// Uniform on [min, max).
    Uniform { min: f64, max: f64 },
    Exponential { mean: f64 },
    /// P(X > x) = (scale/x)^shape for x ≥ scale. `given_mean`: the mean the scenario gave (ns-2's
    /// `avg_`), from which scale = mean·(shape−1)/shape as in ns-2's `ParetoRandomVariable::value`;
    /// kept so that the echo says what was written.
    Pareto { shape: f64, scale: f64, given_mean: Option<f64> },
    /// Pareto of `shape` conditioned on [min, max] (truncated, density renormalised).
    BoundedPareto { shape: f64, min: f64, max: f64 },
    Lognormal { loc: LogLocation, sigma: f64 },
    /// Normal(mean, sd) conditioned on X ≥ 0: a negative draw is drawn again (never clamped, which
    /// would put an atom at zero).
    Normal { mean: f64, sd: f64 },
    /// A CDF through (x, F) points with x and F non-decreasing and the last F = 1. ns-2's lookup:
    /// u ~ U[0,1), take the first point with F ≥ u; without interpolation return its x (a step
    /// CDF: point i has mass F_i − F_{i−1}, point 0 has F_0), with interpolation go linearly from
    /// the previous point (ns-2 `EmpiricalRandomVariable::value`, `interpolation_` 1).
    Empirical { points: Vec<(f64, f64)>, interpolate: bool, csv: Option<String> },
    /// A discrete mixture: component i with probability p_i (the p_i sum to 1).
    Mix(Vec<(f64, Dist)>),
    /// A lognormal body spliced at `from` onto a Pareto tail of `shape` (scale `from`) carrying the
    /// body's own tail mass, so the CDF is continuous at `from` (SURGE's file sizes, `named.rs`).
    LognormalParetoTail { mu: f64, sigma: f64, from: f64, shape: f64 },
    /// A shipped distribution, echoed by its name.
    Named(&'static str, Box<Dist>),
}

/// A uniform in (0, 1]: `1 − U[0,1)`, so logarithms and powers of it are finite.
fn open_uniform(rng: &mut RngStream) -> f64 {
    1.0 - rng.uniform()
}

/// A standard normal by the Box–Muller transform (two uniforms per draw, no state between draws:
/// a draw depends only on the stream).
fn std_normal(rng: &mut RngStream) -> f64 {
    let r = (-2.0 * open_uniform(rng).ln()).sqrt();
    r * (std::f64::consts::TAU * rng.uniform()).cos()
}

impl Dist {
    fn lower_bound(&self) -> f64 {
        match self {
            Dist::Constant(x) => *x,
            Dist::Uniform { min, .. } => *min,
            Dist::Pareto { scale, .. } => *scale,
            Dist::BoundedPareto { min, .. } => *min,
            Dist::Empirical { points, .. } => points.first().map_or(0.0, |p| p.0),
            Dist::Mix(parts) => parts.iter().filter(|(p, _)| *p > 0.0).map(|(_, d)| d.lower_bound()).fold(f64::INFINITY, f64::min),
            Dist::Named(_, d) => d.lower_bound(),
            Dist::Exponential { .. } | Dist::Lognormal { .. } | Dist::Normal { .. } | Dist::LognormalParetoTail { .. } => 0.0,
        }
    }

    /// One continuous draw, in base units (not yet clamped or rounded).
    fn draw(&self, rng: &mut RngStream) -> f64 {
        match self {
            Dist::Constant(x) => *x,
            Dist::Uniform { min, max } => min + (max - min) * rng.uniform(),
            // ns-2 `RNG::exponential`: −avg·ln(U).
            Dist::Exponential { mean } => -mean * open_uniform(rng).ln(),
            // ns-2 `RNG::pareto`: scale / U^(1/shape).
            Dist::Pareto { shape, scale, .. } => scale / open_uniform(rng).powf(1.0 / shape),
            Dist::BoundedPareto { shape, min, max } => {
                // Inverse of F(x) = (1 − (min/x)^a) / (1 − (min/max)^a).
                let u = rng.uniform();
                let tail = 1.0 - (min / max).powf(*shape);
                (min / (1.0 - u * tail).powf(1.0 / shape)).min(*max)
            }
            Dist::Lognormal { loc, sigma } => (loc.mu_base() + sigma * std_normal(rng)).exp(),
            Dist::Normal { mean, sd } => loop {
                let x = mean + sd * std_normal(rng);
                if x >= 0.0 {
                    break x;
                }
            },
            Dist::Empirical { points, interpolate, .. } => {
                let u = rng.uniform();
                let i = points.partition_point(|&(_, f)| f < u).min(points.len() - 1);
                let (x1, f1) = points[i];
                if *interpolate && i > 0 && u < f1 {
                    let (x0, f0) = points[i - 1];
                    x0 + (u - f0) * (x1 - x0) / (f1 - f0)
                } else {
                    x1
                }
            }
            Dist::Mix(parts) => {
                let u = rng.uniform();
                let mut acc = 0.0;
                for (p, d) in parts {
                    acc += p;
                    if u < acc {
                        return d.draw(rng);
                    }
                }
                // u within rounding of 1 (the p sum to 1 within 1e-9): the last component with mass.
                let last = parts.iter().rev().find(|(p, _)| *p > 0.0).unwrap_or(&parts[parts.len() - 1]);
                last.1.draw(rng)
            }
            Dist::LognormalParetoTail { mu, sigma, from, shape } => {
                let p_body = normal_cdf((from.ln() - mu) / sigma);
                if rng.uniform() < p_body {
                    // The body conditioned below `from`, by redrawing (p_body is near 1 for SURGE).
                    loop {
                        let x = (mu + sigma * std_normal(rng)).exp();
                        if x <= *from {
                            break x;
                        }
                    }
                } else {
                    from / open_uniform(rng).powf(1.0 / shape)
                }
            }
            Dist::Named(_, d) => d.draw(rng),
        }
    }

    /// The mean of the continuous form, where it is finite.
    fn mean(&self) -> Option<f64> {
        Some(match self {
            Dist::Constant(x) => *x,
            Dist::Uniform { min, max } => (min + max) / 2.0,
            Dist::Exponential { mean } => *mean,
            Dist::Pareto { shape, scale, given_mean } => {
                if *shape <= 1.0 {
                    return None;
                }
                given_mean.unwrap_or(shape * scale / (shape - 1.0))
            }
            Dist::BoundedPareto { shape: a, min: l, max: h } => {
                let norm = 1.0 - (l / h).powf(*a);
                if (a - 1.0).abs() < 1e-12 {
                    l * (h / l).ln() / norm
                } else {
                    a * l.powf(*a) / norm * (l.powf(1.0 - a) - h.powf(1.0 - a)) / (a - 1.0)
                }
            }
            Dist::Lognormal { loc, sigma } => (loc.mu_base() + sigma * sigma / 2.0).exp(),
            Dist::Normal { mean, sd } => {
                // E[X | X ≥ 0] = m + s·φ(a)/(1 − Φ(a)), a = −m/s.
                let a = -mean / sd;
                mean + sd * normal_pdf(a) / normal_cdf(-a)
            }
            Dist::Empirical { points, interpolate, .. } => {
                let mut m = points[0].0 * points[0].1;
                for w in points.windows(2) {
                    let ((x0, f0), (x1, f1)) = (w[0], w[1]);
                    m += (f1 - f0) * if *interpolate { (x0 + x1) / 2.0 } else { x1 };
                }
                m
            }
            Dist::Mix(parts) => {
                let mut m = 0.0;
                for (p, d) in parts {
                    if *p > 0.0 {
                        m += p * d.mean()?;
                    }
                }
                m
            }
            Dist::LognormalParetoTail { mu, sigma, from, shape } => {
                if *shape <= 1.0 {
                    return None;
                }
                // E[X·1{X ≤ k}] for the lognormal, plus the tail's mass times the Pareto mean.
                let lk = from.ln();
                let body = (mu + sigma * sigma / 2.0).exp() * normal_cdf((lk - mu - sigma * sigma) / sigma);
                let tail = (1.0 - normal_cdf((lk - mu) / sigma)) * shape * from / (shape - 1.0);
                body + tail
            }
            Dist::Named(_, d) => return d.mean(),
        })
    }
}

impl<Q: Quantity> Rv<Q> {
    pub(crate) fn from_dist(dist: Dist) -> Self {
        Rv { dist, kind: PhantomData }
    }

    /// A constant, in base units (ns, bytes, count).
    pub fn constant(v: u64) -> Self {
        Self::from_dist(Dist::Constant(v as f64))
    }

    /// One draw in base units (ns, bytes or count): the continuous draw clamped to [0, 2^50] and
    /// rounded to the nearest integer, halves up.
    pub fn sample(&self, rng: &mut RngStream) -> u64 {
        let x = self.sample_f64(rng);
        (x + 0.5).floor() as u64
    }

    /// One draw before rounding, clamped to [0, 2^50] (for a caller that needs the fraction, such
    /// as ns-2's Pareto ON/OFF source, which rounds its burst length itself).
    pub fn sample_f64(&self, rng: &mut RngStream) -> f64 {
        self.dist.draw(rng).clamp(0.0, MAX_DRAW)
    }

    /// The mean of the continuous form in base units; `None` where it is infinite (a Pareto of
    /// shape ≤ 1) or beyond the range of f64 (a lognormal of huge sigma). Rounding moves the mean
    /// of the draws by less than half a unit.
    pub fn mean(&self) -> Option<f64> {
        self.dist.mean().filter(|m| m.is_finite())
    }

    /// A Pareto of `shape` (> 1) given its mean in base units, as ns-2's `avg_` and `shape_`.
    pub fn pareto_with_mean(shape: f64, mean: f64) -> Self {
        Self::from_dist(Dist::Pareto { shape, scale: mean * (shape - 1.0) / shape, given_mean: Some(mean) })
    }

    /// The smallest value a draw can take, in base units (the bottom of the support, before
    /// rounding).
    pub fn lower_bound(&self) -> f64 {
        self.dist.lower_bound()
    }

    /// The value if the variable is a constant (a plain value in the scenario).
    pub fn as_constant(&self) -> Option<u64> {
        match self.dist {
            Dist::Constant(x) => Some(x as u64),
            _ => None,
        }
    }
}

impl<Q: Quantity> Default for Rv<Q> {
    fn default() -> Self {
        Self::constant(0)
    }
}

/// Standard normal density.
fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (std::f64::consts::TAU).sqrt()
}

/// Standard normal CDF, Φ(x) = erfc(−x/√2)/2.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The complementary error function, by the Chebyshev fit of Press et al., *Numerical Recipes*
/// (2nd ed., §6.2, `erfcc`): fractional error below 1.2e-7 everywhere, ample for closed-form means
/// (std has no erf).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_matches_tables() {
        // Φ at a few points from standard tables.
        for (x, p) in [(0.0, 0.5), (1.0, 0.841_344_746), (-1.96, 0.024_997_895), (2.326_347_874, 0.99), (-3.0, 0.001_349_898)] {
            assert!((normal_cdf(x) - p).abs() < 2e-7, "Φ({x}) = {} vs {p}", normal_cdf(x));
        }
    }

    #[test]
    fn rounding_is_half_up_and_clamped() {
        let mut r = RngStream::new(1, "t");
        assert_eq!(Rv::<SizeKind>::from_dist(Dist::Constant(2.5)).sample(&mut r), 3);
        assert_eq!(Rv::<SizeKind>::from_dist(Dist::Constant(2.49)).sample(&mut r), 2);
        assert_eq!(Rv::<SizeKind>::from_dist(Dist::Constant(1e300)).sample(&mut r), 1 << 50);
    }

    #[test]
    fn named_tables_read_back_as_the_same_variable() {
        // The table a front end draws from itself (the ns-2 export) is the named variable's own:
        // read as a scenario would write it, it draws the same values from the same stream.
        let v = named_table("mah1997_reply", "size").expect("Mah's replies have a table");
        let cdf = &v["empirical"]["cdf"];
        assert_eq!(cdf.as_array().map(Vec::len), Some(58));
        assert_eq!(cdf[25], serde_json::json!(["2112B", 0.5]));
        let table: Rv<SizeKind> = serde_json::from_value(v).expect("a scenario's empirical size");
        let named: Rv<SizeKind> = serde_json::from_value(serde_json::json!({ "named": "mah1997_reply" })).expect("named");
        let (mut a, mut b) = (RngStream::new(7, "t"), RngStream::new(7, "t"));
        for _ in 0..1000 {
            assert_eq!(table.sample(&mut a), named.sample(&mut b));
        }
        assert!(named_table("mah1997_files_per_page", "count").is_some());
        // SURGE's spliced lognormal has no table; a name of another kind is not found.
        assert!(named_table("surge1998_file", "size").is_none());
        assert!(named_table("mah1997_reply", "duration").is_none());
    }
}
