//! Random variables of the scenario (`rv`): statistical checks against closed forms with fixed
//! seeds, determinism, and every refusal with its key path.
//!
//! Each statistical check draws N = 10^5 values and accepts a moment within 5 standard errors of
//! its closed form (the standard error from the closed-form moments: sd/√N for a mean,
//! √((μ4 − σ⁴)/N) for a variance). With fixed seeds the checks are deterministic; 5 SE means a
//! correct sampler would fail a fresh seed about once in 1.7 million.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use tcplab_core::engine::rng::RngStream;
use tcplab_core::rv::{Quantity, RandomCount, RandomDuration, RandomSize, Rv, NAMED};

const N: usize = 100_000;
const K_SE: f64 = 5.0;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct D {
    x: RandomDuration,
}
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct S {
    x: RandomSize,
}
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct C {
    x: RandomCount,
}

/// Parse TOML through serde_json::Value (TOML → serde_json::Value → serde_path_to_error),
/// so NaN and infinity arrive as null (as a `None` in a dict would): refused all the same.
fn parse<T: DeserializeOwned>(text: &str) -> Result<T, (String, String)> {
    let v: toml::Value = toml::from_str(text).expect("valid TOML");
    let j = serde_json::to_value(v).expect("TOML converts to JSON");
    serde_path_to_error::deserialize(j).map_err(|e| (e.path().to_string(), e.into_inner().to_string()))
}

/// Parse TOML straight into the type (NaN and infinity arrive as floats).
fn parse_direct<T: DeserializeOwned>(text: &str) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| (e.path().to_string(), e.into_inner().to_string()))
}

fn size(x: &str) -> RandomSize {
    parse::<S>(&format!("x = {x}")).unwrap_or_else(|e| panic!("{x}: {e:?}")).x
}
fn duration(x: &str) -> RandomDuration {
    parse::<D>(&format!("x = {x}")).unwrap_or_else(|e| panic!("{x}: {e:?}")).x
}
fn count(x: &str) -> RandomCount {
    parse::<C>(&format!("x = {x}")).unwrap_or_else(|e| panic!("{x}: {e:?}")).x
}

fn draws<Q: Quantity>(rv: &Rv<Q>, name: &str) -> Vec<f64> {
    let mut rng = RngStream::new(2024, name);
    (0..N).map(|_| rv.sample(&mut rng) as f64).collect()
}

fn sample_mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn sample_var(xs: &[f64]) -> f64 {
    let m = sample_mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Closed-form mean, variance and the standard errors of the sample mean and variance, from the
/// first four raw moments.
struct Moments {
    mean: f64,
    var: f64,
    se_mean: f64,
    se_var: f64,
}

fn moments(raw: [f64; 4]) -> Moments {
    let [m1, m2, m3, m4] = raw;
    let var = m2 - m1 * m1;
    let mu4 = m4 - 4.0 * m3 * m1 + 6.0 * m2 * m1 * m1 - 3.0 * m1.powi(4);
    let n = N as f64;
    Moments { mean: m1, var, se_mean: (var / n).sqrt(), se_var: ((mu4 - var * var) / n).sqrt() }
}

fn check_moments(label: &str, xs: &[f64], m: &Moments) {
    let (mean, var) = (sample_mean(xs), sample_var(xs));
    let (zm, zv) = ((mean - m.mean) / m.se_mean, (var - m.var) / m.se_var);
    println!("{label}: mean {mean:.6e} (closed {:.6e}, {zm:+.2} SE), variance {var:.6e} (closed {:.6e}, {zv:+.2} SE)", m.mean, m.var);
    assert!(zm.abs() < K_SE, "{label}: mean {mean} vs {} ({zm:.2} SE)", m.mean);
    assert!(zv.abs() < K_SE, "{label}: variance {var} vs {} ({zv:.2} SE)", m.var);
}

/// Hill's estimator of the tail index from the k largest values: k / Σ ln(X_(i) / X_(k+1)).
/// For an exact Pareto tail its standard deviation is about α/√k.
fn hill(xs: &[f64], k: usize) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| b.partial_cmp(a).unwrap());
    let xk = v[k];
    k as f64 / v[..k].iter().map(|x| (x / xk).ln()).sum::<f64>()
}

#[test]
fn exponential_mean_and_variance() {
    // Raw moments of an exponential of mean m: k!·m^k.
    let m = 102_400.0;
    let rv = size("{ exponential = \"100KB\" }");
    assert_eq!(rv.mean(), Some(m));
    check_moments("exponential 100KB", &draws(&rv, "exp"), &moments([m, 2.0 * m * m, 6.0 * m.powi(3), 24.0 * m.powi(4)]));
}

#[test]
fn uniform_mean_and_variance() {
    let (a, b): (f64, f64) = (1e6, 5e6);
    let rv = duration("{ uniform = [\"1ms\", \"5ms\"] }");
    assert_eq!(rv.mean(), Some(3e6));
    // Raw moments of U(a, b): (b^(k+1) − a^(k+1)) / ((k+1)(b − a)).
    let raw = |k: i32| (b.powi(k + 1) - a.powi(k + 1)) / ((k + 1) as f64 * (b - a));
    check_moments("uniform 1ms..5ms", &draws(&rv, "uni"), &moments([raw(1), raw(2), raw(3), raw(4)]));
}

#[test]
fn pareto_tail_by_hill_estimator() {
    // Shape 1.2 (infinite variance: the tail is what can be checked). Scale 1 MB so that rounding
    // to whole bytes cannot bend the tail. k = 10^4 of 10^5: sd of the estimate ≈ 1.2/100 = 0.012;
    // tolerance 5 sd = 0.06.
    let rv = size("{ pareto = { shape = 1.2, scale = \"1MB\" } }");
    let xs = draws(&rv, "pareto");
    let a = hill(&xs, 10_000);
    println!("pareto shape 1.2: Hill estimate {a:.4}");
    assert!((a - 1.2).abs() < 0.06, "Hill {a}");
    assert!(xs.iter().all(|&x| x >= 1_048_576.0));
    assert!((rv.mean().unwrap() - 1.2 * 1_048_576.0 / 0.2).abs() < 1e-6);
    // ns-2's form: avg_ = 1 ms with shape_ 1.5 (Ladha's ON time, ns-2's default shape) has
    // scale = avg·(shape − 1)/shape = 333 333.3 ns.
    let on = duration("{ pareto = { shape = 1.5, mean = \"1ms\" } }");
    assert!((on.mean().unwrap() - 1e6).abs() < 1e-6);
    let xs = draws(&on, "on");
    assert!(xs.iter().all(|&x| x >= 333_333.0));
    let a = hill(&xs, 10_000);
    println!("pareto shape 1.5 (mean 1ms): Hill estimate {a:.4}");
    assert!((a - 1.5).abs() < 5.0 * 1.5 / 100.0, "Hill {a}");
    // A shape ≤ 1 has no mean.
    assert_eq!(size("{ pareto = { shape = 1.0, scale = \"1KB\" } }").mean(), None);
    assert_eq!(size("{ pareto = { shape = 0.8, scale = \"1KB\" } }").mean(), None);
}

#[test]
fn pareto_with_finite_moments() {
    // Shape 5: E[X^k] = α s^k / (α − k) for k < α, so mean and variance (which needs the 4th
    // moment for its standard error) are checkable.
    let (a, s): (f64, f64) = (5.0, 1e6);
    let rv = duration("{ pareto = { shape = 5, scale = \"1ms\" } }");
    let raw = |k: i32| a * s.powi(k) / (a - k as f64);
    assert!((rv.mean().unwrap() - raw(1)).abs() < 1e-6);
    check_moments("pareto shape 5", &draws(&rv, "pareto5"), &moments([raw(1), raw(2), raw(3), raw(4)]));
}

#[test]
fn bounded_pareto_mean() {
    // E[X^k] = α L^α / (1 − (L/H)^α) · (H^(k−α) − L^(k−α)) / (k − α), for k ≠ α.
    let (a, l, h): (f64, f64, f64) = (1.1, 1024.0, 10.0 * 1_048_576.0);
    let rv = size("{ bounded_pareto = { shape = 1.1, min = \"1KB\", max = \"10MB\" } }");
    let norm = 1.0 - (l / h).powf(a);
    let raw = |k: f64| a * l.powf(a) / norm * (h.powf(k - a) - l.powf(k - a)) / (k - a);
    let m = moments([raw(1.0), raw(2.0), raw(3.0), raw(4.0)]);
    assert!((rv.mean().unwrap() - m.mean).abs() < 1e-6 * m.mean, "{:?} vs {}", rv.mean(), m.mean);
    let xs = draws(&rv, "bp");
    assert!(xs.iter().all(|&x| (l..=h).contains(&x)));
    let z = (sample_mean(&xs) - m.mean) / m.se_mean;
    println!("bounded pareto: mean {:.1} (closed {:.1}, {z:+.2} SE)", sample_mean(&xs), m.mean);
    assert!(z.abs() < K_SE);
}

#[test]
fn lognormal_mean_and_variance() {
    // E[X^k] = exp(kμ + k²σ²/2).
    let (mu, s) = ((10_240.0f64).ln(), 0.5);
    let rv = size("{ lognormal = { median = \"10KB\", sigma = 0.5 } }");
    let raw = |k: f64| (k * mu + k * k * s * s / 2.0).exp();
    assert!((rv.mean().unwrap() - raw(1.0)).abs() < 1e-6 * raw(1.0));
    check_moments("lognormal median 10KB sigma 0.5", &draws(&rv, "ln"), &moments([raw(1.0), raw(2.0), raw(3.0), raw(4.0)]));
    // `mu` of a duration is in ln seconds (ns-2's unit): mu = ln 0.01 is a median of 10 ms.
    let d = duration("{ lognormal = { mu = -4.605170185988091, sigma = 0.5 } }");
    let expect = 1e7 * (0.125f64).exp();
    assert!((d.mean().unwrap() - expect).abs() < 1e-3, "{:?} vs {expect}", d.mean());
    let xs = draws(&d, "lnd");
    let z = (sample_mean(&xs) - expect) / (expect * ((0.25f64).exp() - 1.0).sqrt() / (N as f64).sqrt());
    assert!(z.abs() < K_SE, "{z}");
}

#[test]
fn truncated_normal_mean() {
    // Normal(1 ms, 2 ms) conditioned on X ≥ 0. With a = −m/s = −0.5 and λ = φ(a)/(1 − Φ(a)):
    // mean = m + sλ, variance = s²(1 + aλ − λ²). φ(0.5) and Φ(0.5) from tables, so the check does
    // not lean on the module's own erfc.
    let (m, s) = (1e6, 2e6);
    let (phi, cdf) = (0.352_065_326_8, 0.691_462_461_3);
    let (a, lambda) = (-0.5, phi / cdf);
    let mean = m + s * lambda;
    let var = s * s * (1.0 + a * lambda - lambda * lambda);
    let rv = duration("{ normal = { mean = \"1ms\", sd = \"2ms\" } }");
    assert!((rv.mean().unwrap() - mean).abs() < 1e-6 * mean, "{:?} vs {mean}", rv.mean());
    let xs = draws(&rv, "normal");
    assert!(xs.iter().all(|&x| x >= 0.0));
    // Truncation by redrawing leaves no atom at zero (clamping would put 31 % of draws there).
    assert!(xs.iter().filter(|&&x| x == 0.0).count() < 10);
    let z = (sample_mean(&xs) - mean) / (var / N as f64).sqrt();
    println!("truncated normal: mean {:.1} (closed {mean:.1}, {z:+.2} SE)", sample_mean(&xs));
    assert!(z.abs() < K_SE);
}

#[test]
fn mix_frequencies_chi_square() {
    // Ladha et al.'s cross-traffic packet sizes: 50 % 44 B, 25 % 576 B, 25 % 1500 B (mean 541 B).
    let rv = size("{ mix = [{ p = 0.5, value = \"44B\" }, { p = 0.25, value = \"576B\" }, { p = 0.25, value = 1500 }] }");
    assert_eq!(rv.mean(), Some(541.0));
    let xs = draws(&rv, "mix");
    let obs = [44.0, 576.0, 1500.0].map(|v| xs.iter().filter(|&&x| x == v).count() as f64);
    assert_eq!(obs.iter().sum::<f64>(), N as f64);
    let exp = [0.5, 0.25, 0.25].map(|p| p * N as f64);
    let chi2: f64 = obs.iter().zip(exp).map(|(o, e)| (o - e) * (o - e) / e).sum();
    // 2 degrees of freedom; 13.82 is the 0.1 % critical value.
    println!("mix: counts {obs:?}, chi-square {chi2:.3}");
    assert!(chi2 < 13.82, "chi-square {chi2}");
    // A mix of distributions: ns-2's HyperExponential is a mix of exponentials.
    let h = duration("{ mix = [{ p = 0.95, value = { exponential = \"1ms\" } }, { p = 0.05, value = { exponential = \"100ms\" } }] }");
    assert!((h.mean().unwrap() - (0.95e6 + 0.05e8)).abs() < 1e-3);
}

/// Fraction of draws ≤ x against F(x), within 5 binomial standard errors.
fn check_quantiles(label: &str, xs: &[f64], at: &[(f64, f64)]) {
    for &(x, f) in at {
        let frac = xs.iter().filter(|&&v| v <= x).count() as f64 / xs.len() as f64;
        let se = (f * (1.0 - f) / xs.len() as f64).sqrt().max(1e-12);
        println!("{label}: P(X <= {x}) = {frac:.4} (F = {f})");
        assert!((frac - f).abs() < K_SE * se + 1e-12, "{label}: P(X <= {x}) = {frac}, F = {f}");
    }
}

#[test]
fn empirical_cdf_quantiles() {
    // Step CDF (ns-2's default): masses 0.2, 0.5, 0.3 on 100 B, 1 KB, 10 KB.
    let step = size("{ empirical = { cdf = [[\"100B\", 0.2], [\"1KB\", 0.7], [\"10KB\", 1.0]] } }");
    assert!((step.mean().unwrap() - (20.0 + 512.0 + 3072.0)).abs() < 1e-9);
    let xs = draws(&step, "emp-step");
    assert!(xs.iter().all(|&x| [100.0, 1024.0, 10240.0].contains(&x)));
    check_quantiles("step", &xs, &[(100.0, 0.2), (1024.0, 0.7), (10240.0, 1.0)]);
    // Interpolated: uniform on [0, 1000) with mass 0.5, then on [1000, 3000).
    let lin = size("{ empirical = { cdf = [[0, 0.0], [1000, 0.5], [3000, 1.0]], interpolate = true } }");
    assert_eq!(lin.mean(), Some(1250.0));
    let xs = draws(&lin, "emp-lin");
    check_quantiles("interpolated", &xs, &[(250.0, 0.125), (500.0, 0.25), (1000.0, 0.5), (2000.0, 0.75)]);
    let sd = (1250.0f64 * 1250.0 / 3.0 + 500.0 * 500.0 / 3.0 + 2.0 * 1250.0 * 1250.0 / 3.0 - 1250.0 * 1250.0).sqrt();
    assert!((sample_mean(&xs) - 1250.0).abs() < K_SE * sd / (N as f64).sqrt());
}

fn temp_file(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("tcplab-rv-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn empirical_from_files() {
    // ns-2's three-column format (value, count, cumulative fraction) and plain `x,F`, both read
    // into the same distribution.
    let ns2 = temp_file("ns2.cdf", "# value count cdf\n100 2 0.2\n1024 5 0.7\n\n10240 3 1.0\n");
    let csv = temp_file("plain.csv", "100,0.2\n1024,0.7\n10240,1\n");
    let a = size(&format!("{{ empirical = {{ csv = {ns2:?} }} }}"));
    let b = size(&format!("{{ empirical = {{ csv = {csv:?} }} }}"));
    assert_eq!(draws(&a, "f"), draws(&b, "f"));
    check_quantiles("csv", &draws(&a, "csv"), &[(100.0, 0.2), (1024.0, 0.7)]);
    // A duration CDF file is in seconds, as ns-2's are.
    let secs = temp_file("secs.cdf", "0.5 0.5\n2 1\n");
    let d = duration(&format!("{{ empirical = {{ csv = {secs:?} }} }}"));
    assert_eq!(d.mean(), Some(0.5 * 0.5e9 + 0.5 * 2e9));
    // The echo names the file, and reads back to the same variable.
    let echo = serde_json::to_value(&a).unwrap();
    assert_eq!(echo["empirical"]["csv"], serde_json::Value::from(ns2.clone()));
    // Errors name the file and the line.
    let bad = temp_file("bad.cdf", "100 0.5\n50 0.7\n");
    let (path, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {bad:?} }} }}")).unwrap_err();
    assert_eq!(path, "x.empirical.csv");
    assert!(msg.contains("bad.cdf") && msg.contains("line 2") && msg.contains("x must not decrease"), "{msg}");
    let bad = temp_file("bad2.cdf", "100 0.5\n200 zero\n");
    let (_, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {bad:?} }} }}")).unwrap_err();
    // A token that is not a number is not echoed (the file may not be a CDF: S2).
    assert!(msg.contains("line 2") && !msg.contains("zero") && msg.contains("not shown"), "{msg}");
    let bad = temp_file("bad3.cdf", "100 0.5\n200 0.9\n");
    let (_, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {bad:?} }} }}")).unwrap_err();
    assert!(msg.contains("last point's F must be 1"), "{msg}");
    let (path, msg) = parse::<S>("x = { empirical = { csv = \"/nonexistent/sizes.cdf\" } }").unwrap_err();
    assert_eq!(path, "x.empirical.csv");
    assert!(msg.contains("cannot read the CDF file \"/nonexistent/sizes.cdf\""), "{msg}");
    let (path, msg) = parse::<S>(&format!("x = {{ empirical = {{ cdf = [[1, 1.0]], csv = {csv:?} }} }}")).unwrap_err();
    assert_eq!((path.as_str(), msg.as_str()), ("x.empirical", "give `cdf` or `csv`, not both"));
    for f in [ns2, csv, secs] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn count_rounding_bias_is_as_documented() {
    // Seddigh's objects per page, Exp(mean 2), rounded to the nearest whole number: the draws'
    // mean is Σ_{k≥1} P(X ≥ k − ½) = Σ e^{−(k−½)/2} = 1.9793, not 2 (the documented bias).
    let rv = count("{ exponential = 2 }");
    assert_eq!(rv.mean(), Some(2.0));
    let discrete: f64 = (1..200).map(|k| (-(k as f64 - 0.5) / 2.0).exp()).sum();
    assert!((discrete - 1.9793).abs() < 1e-4, "{discrete}");
    let xs = draws(&rv, "objects");
    let z = (sample_mean(&xs) - discrete) / (2.0 / (N as f64).sqrt());
    println!("count exp(2): mean {:.4} (rounded closed form {discrete:.4}, {z:+.2} SE)", sample_mean(&xs));
    assert!(z.abs() < K_SE);
    assert!(xs.iter().all(|x| x.fract() == 0.0));
}

#[test]
fn mah_reply_median_fits_two_packets() {
    // RFC 2415 §2: "the median size of both primary and in-line URLs fits completely into two
    // packets" of 1460 bytes. Mah's reply lengths have median 2112 B.
    let reply = size("{ named = \"mah1997_reply\" }");
    let mut xs = draws(&reply, "mah");
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = xs[N / 2];
    println!("mah1997_reply: sampled median {median}, mean {:?}", reply.mean());
    assert!(median <= 2920.0, "median {median}");
    // The shipped quantiles bracket the median: 2042 B at F = 0.48, 2288 B at 0.52.
    assert!((2042.0..=2288.0).contains(&median), "{median}");
    // The condensed CDF's mean, 7332 B, is within 1.4 % of the 4100 observed replies' 7231 B.
    let m = reply.mean().unwrap();
    assert!((m - 7332.2).abs() < 1.0, "{m}");
    let files = count("{ named = \"mah1997_files_per_page\" }");
    let m = files.mean().unwrap();
    assert!((m - 4098.0 / 1444.0).abs() < 1e-9, "{m}");
    // sd of Mah's files per page is 4.11 (the whole table).
    let xs = draws(&files, "pages");
    assert!((sample_mean(&xs) - m).abs() < K_SE * 4.112 / (N as f64).sqrt());
    let req = size("{ named = \"mah1997_request\" }");
    assert!(req.mean().unwrap() > 300.0 && req.mean().unwrap() < 340.0);
}

#[test]
fn surge_file_sizes() {
    // Lognormal body (μ 9.357, σ 1.318) spliced at k = 133 000 B onto a Pareto tail (α 1.1): the
    // draws above k are an exact Pareto(k, 1.1), whose Hill estimate with threshold k is
    // n_k / Σ ln(x/k) (sd ≈ 1.1/√n_k); the tail's share is 1 − Φ((ln k − μ)/σ) = 0.0320.
    let rv = size("{ named = \"surge1998_file\" }");
    let xs = draws(&rv, "surge");
    let tail: Vec<f64> = xs.iter().copied().filter(|&x| x > 133_000.0).collect();
    let share = tail.len() as f64 / N as f64;
    let p = 0.032_01;
    assert!((share - p).abs() < K_SE * (p * (1.0 - p) / N as f64).sqrt(), "tail share {share}");
    let a = tail.len() as f64 / tail.iter().map(|x| (x / 133_000.0).ln()).sum::<f64>();
    println!("surge1998_file: tail share {share:.4}, Hill {a:.3} over {} draws", tail.len());
    assert!((a - 1.1).abs() < K_SE * 1.1 / (tail.len() as f64).sqrt(), "Hill {a}");
    // The median is the body's, e^9.357 = 11 568 B.
    let mut s = xs.clone();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = s[N / 2];
    assert!((median / 9.357f64.exp() - 1.0).abs() < 0.03, "median {median}");
    assert!(rv.mean().is_some());
}

#[test]
fn draws_are_deterministic_per_component() {
    let rv = duration("{ exponential = \"2s\" }");
    let seq = |seed: u64, name: &str| {
        let mut r = RngStream::new(seed, name);
        (0..100).map(|_| rv.sample(&mut r)).collect::<Vec<u64>>()
    };
    assert_eq!(seq(7, "app:web1:think"), seq(7, "app:web1:think"));
    assert_ne!(seq(7, "app:web1:think"), seq(7, "app:web2:think"));
    assert_ne!(seq(7, "app:web1:think"), seq(8, "app:web1:think"));
    // One component's draws do not depend on what another component draws from its own stream,
    // nor on its distribution: the cross traffic is the same whatever the web client does.
    let cross = size("{ mix = [{ p = 0.5, value = \"44B\" }, { p = 0.5, value = \"1500B\" }] }");
    let run = |web: &RandomDuration| {
        let mut w = RngStream::new(7, "app:web1");
        let mut c = RngStream::new(7, "cross:0");
        (0..100).map(|_| (web.sample(&mut w), cross.sample(&mut c)).1).collect::<Vec<u64>>()
    };
    assert_eq!(run(&rv), run(&duration("{ pareto = { shape = 1.2, scale = \"1s\" } }")));
    // Every named distribution draws reproducibly.
    for n in NAMED {
        match n.kind {
            "size" => {
                let v = size(&format!("{{ named = {:?} }}", n.name));
                assert_eq!(draws(&v, "n")[..50], draws(&v, "n")[..50]);
            }
            "count" => {
                let v = count(&format!("{{ named = {:?} }}", n.name));
                assert_eq!(draws(&v, "n")[..50], draws(&v, "n")[..50]);
            }
            k => panic!("unexpected kind {k}"),
        }
    }
}

#[test]
fn constants_and_echo_round_trip() {
    assert_eq!(duration("\"2s\"").as_constant(), Some(2_000_000_000));
    assert_eq!(size("1460").as_constant(), Some(1460));
    assert_eq!(size("\"16KB\"").as_constant(), Some(16_384));
    assert_eq!(count("3").as_constant(), Some(3));
    assert_eq!(count("{ constant = 4 }").as_constant(), Some(4));
    let mut r = RngStream::new(1, "c");
    assert_eq!(duration("\"35ms\"").sample(&mut r), 35_000_000);
    for form in [
        "\"2s\"",
        "{ exponential = \"2s\" }",
        "{ uniform = [\"1ms\", \"5ms\"] }",
        "{ pareto = { shape = 1.5, mean = \"1ms\" } }",
        "{ pareto = { shape = 1.2, scale = \"300us\" } }",
        "{ bounded_pareto = { shape = 1.1, min = \"1ms\", max = \"1s\" } }",
        "{ lognormal = { mu = -4.6, sigma = 0.5 } }",
        "{ lognormal = { median = \"10ms\", sigma = 0.5 } }",
        "{ normal = { mean = \"10ms\", sd = \"5ms\" } }",
        "{ empirical = { cdf = [[\"1ms\", 0.5], [\"3ms\", 1.0]], interpolate = true } }",
        "{ mix = [{ p = 0.5, value = \"1ms\" }, { p = 0.5, value = { exponential = \"1s\" } }] }",
    ] {
        let rv = duration(form);
        let echo = serde_json::to_value(&rv).unwrap();
        let back: RandomDuration = serde_json::from_value(echo.clone()).unwrap_or_else(|e| panic!("{form}: {echo} {e}"));
        assert_eq!(back, rv, "{form} echoed as {echo}");
    }
    let echo = serde_json::to_value(size("{ named = \"mah1997_reply\" }")).unwrap();
    assert_eq!(echo, serde_json::json!({ "named": "mah1997_reply" }));
    assert_eq!(serde_json::to_value(size("{ pareto = { shape = 1.2, mean = \"12KB\" } }")).unwrap(), serde_json::json!({ "pareto": { "shape": 1.2, "mean": "12288B" } }));
}

/// Each (TOML, key path, words) is refused at exactly that path with a message containing the words.
fn expect_refusals<T: DeserializeOwned + std::fmt::Debug>(cases: &[(&str, &str, &str)]) {
    for (text, path, words) in cases {
        let (p, m) = parse::<T>(text).expect_err(text);
        assert_eq!(&p, path, "{text}: {m}");
        assert!(m.contains(words), "{text}: {p}: {m}");
    }
}

#[test]
fn refusals_name_the_key() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Flows {
        flows: Vec<S>,
    }
    let cases: &[(&str, &str, &str)] = &[
        // Plain values.
        ("x = 35", "x", "write the unit"),
        ("x = \"35 parsecs\"", "x", "unknown unit"),
        ("x = \"-1s\"", "x", "non-negative"),
        ("x = nan", "x", "NaN and infinity are not allowed"),
        ("x = inf", "x", "NaN and infinity are not allowed"),
        // Table shapes.
        ("x = {}", "x", "an empty table"),
        ("x = { gamma = 1 }", "x.gamma", "unknown distribution `gamma`"),
        ("x = { exponential = \"1s\", uniform = [\"1s\", \"2s\"] }", "x", "names one distribution"),
        // Exponential and uniform.
        ("x = { exponential = \"0s\" }", "x.exponential", "greater than 0"),
        ("x = { exponential = nan }", "x.exponential", "null"),
        ("x = { uniform = [\"5ms\", \"1ms\"] }", "x.uniform[1]", "must exceed min (5ms), got 1ms"),
        ("x = { uniform = [\"5ms\", \"5ms\"] }", "x.uniform[1]", "must exceed min"),
        ("x = { uniform = [\"5ms\"] }", "x.uniform", "invalid length 1"),
        ("x = { uniform = [\"1ms\", inf] }", "x.uniform[1]", "null"),
        // Pareto.
        ("x = { pareto = { shape = 0, scale = \"1s\" } }", "x.pareto.shape", "greater than 0"),
        ("x = { pareto = { shape = -1.5, scale = \"1s\" } }", "x.pareto.shape", "greater than 0"),
        ("x = { pareto = { shape = nan, scale = \"1s\" } }", "x.pareto.shape", "null"),
        ("x = { pareto = { shape = inf, mean = \"1s\" } }", "x.pareto.shape", "null"),
        ("x = { pareto = { shape = 1.0, mean = \"1s\" } }", "x.pareto", "needs `shape` > 1"),
        ("x = { pareto = { shape = 1.5 } }", "x.pareto", "needs `mean`"),
        ("x = { pareto = { shape = 1.5, mean = \"1s\", scale = \"1s\" } }", "x.pareto", "not both"),
        ("x = { pareto = { mean = \"1s\" } }", "x.pareto", "missing field `shape`"),
        ("x = { pareto = { shape = 1.5, avg = \"1s\" } }", "x.pareto.avg", "unknown field `avg`"),
        ("x = { pareto = { shape = 1.5, scale = \"0s\" } }", "x.pareto.scale", "greater than 0"),
        // Bounded Pareto.
        ("x = { bounded_pareto = { shape = 1.1, min = \"1s\", max = \"1ms\" } }", "x.bounded_pareto", "`max` (\"1ms\") must exceed `min` (\"1s\")"),
        ("x = { bounded_pareto = { shape = 1.1, min = \"0s\", max = \"1ms\" } }", "x.bounded_pareto.min", "greater than 0"),
        // Lognormal and normal.
        ("x = { lognormal = { sigma = 1 } }", "x.lognormal", "needs `median` or `mu`"),
        ("x = { lognormal = { mu = 1, median = \"1s\", sigma = 1 } }", "x.lognormal", "not both"),
        ("x = { lognormal = { mu = nan, sigma = 1 } }", "x.lognormal.mu", "null"),
        ("x = { lognormal = { mu = 1, sigma = 0 } }", "x.lognormal.sigma", "greater than 0"),
        ("x = { normal = { mean = \"1s\", sd = \"0s\" } }", "x.normal.sd", "greater than 0"),
        ("x = { normal = { mean = \"1s\" } }", "x.normal", "missing field `sd`"),
        ("x = { normal = [\"1s\", \"1s\"] }", "x.normal", "expected a table"),
        ("x = { lognormal = { mu = 40, sigma = 1 } }", "x.lognormal", "median beyond 2^50"),
        // Empirical.
        ("x = { empirical = { cdf = [[\"1s\", 0.5], [\"2s\", 0.4], [\"3s\", 1.0]] } }", "x.empirical.cdf[1][1]", "F must not decrease"),
        ("x = { empirical = { cdf = [[\"2s\", 0.5], [\"1s\", 1.0]] } }", "x.empirical.cdf[1][0]", "must not be below the previous point's x (2s)"),
        ("x = { empirical = { cdf = [[\"1s\", 0.5], [\"2s\", 0.9]] } }", "x.empirical.cdf", "last point's F must be 1"),
        ("x = { empirical = { cdf = [[\"1s\", 1.5]] } }", "x.empirical.cdf[0][1]", "probability from 0 to 1"),
        ("x = { empirical = { cdf = [[\"1s\", nan]] } }", "x.empirical.cdf[0][1]", "null"),
        ("x = { empirical = { cdf = [] } }", "x.empirical.cdf", "at least one point"),
        ("x = { empirical = { cdf = [[\"1s\"]] } }", "x.empirical.cdf[0]", "invalid length 1"),
        ("x = { empirical = { cdf = [[\"1s\", 1.0, 3]] } }", "x.empirical.cdf[0]", "two elements"),
        ("x = { empirical = { interpolate = true } }", "x.empirical", "needs `cdf`"),
        // Mix.
        ("x = { mix = [{ p = 0.5, value = \"1s\" }, { p = 0.4, value = \"2s\" }] }", "x.mix", "sum to 1, they sum to 0.9"),
        ("x = { mix = [{ p = 1.5, value = \"1s\" }] }", "x.mix[0].p", "probability from 0 to 1"),
        ("x = { mix = [{ p = nan, value = \"1s\" }] }", "x.mix[0].p", "null"),
        ("x = { mix = [{ p = 1, value = { exponential = 3 } }] }", "x.mix[0].value.exponential", "write the unit"),
        ("x = { mix = [{ p = 1 }] }", "x.mix[0]", "missing field `value`"),
        ("x = { mix = [] }", "x.mix", "at least one"),
        // Named.
        ("x = { named = \"mah1997_reply\" }", "x.named", "unknown duration distribution"),
    ];
    expect_refusals::<D>(cases);
    // Size and count specifics.
    expect_refusals::<S>(&[
        ("x = 1.5", "x", "write the unit"),
        ("x = -3", "x", "expected a size"),
        ("x = { named = \"nosuch\" }", "x.named", "mah1997_reply, mah1997_request, surge1998_file"),
        ("x = { empirical = { cdf = [[1, 0.5], [\"1ms\", 1.0]] } }", "x.empirical.cdf[1][0]", "unknown unit"),
    ]);
    expect_refusals::<C>(&[
        ("x = 2.5", "x", "whole number"),
        ("x = \"2s\"", "x", "expected a non-negative number"),
        ("x = { exponential = -2 }", "x.exponential", "expected a non-negative number"),
        ("x = { named = \"mah1997_reply\" }", "x.named", "mah1997_files_per_page, surge1998_embedded"),
    ]);
    // Nested in a scenario-like structure, the whole path is named.
    let (p, m) = parse::<Flows>("[[flows]]\nx = 1\n[[flows]]\nx = { pareto = { shape = nan, scale = \"1KB\" } }").unwrap_err();
    assert_eq!(p, "flows[1].x.pareto.shape", "{m}");
    // Read by the toml crate directly, NaN and infinity arrive as floats, and are refused too.
    for (text, path) in [
        ("x = { pareto = { shape = nan, scale = \"1KB\" } }", "x.pareto.shape"),
        ("x = { pareto = { shape = 1.5, scale = inf } }", "x.pareto.scale"),
        ("x = { mix = [{ p = -inf, value = 1 }] }", "x.mix[0].p"),
        ("x = { lognormal = { mu = nan, sigma = 1 } }", "x.lognormal.mu"),
        ("x = nan", "x"),
    ] {
        let (p, m) = parse_direct::<S>(text).expect_err(text);
        assert_eq!(p, path, "{text}: {m}");
        assert!(m.contains("NaN") || m.contains("inf"), "{text}: {m}");
    }
}

// ---------------------------------------------------------------------------------------------
// Generated inputs: any table built from the schema's own words either is refused with a path or
// gives a variable that draws within [0, 2^50], has a finite mean or none, and reads back from its
// echo. Fixed seed, so the cases are the same every run.
// ---------------------------------------------------------------------------------------------

mod generated {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, RngSeed, TestCaseError};
    use serde_json::Value;

    const KEYS: &[&str] = &[
        "constant", "uniform", "exponential", "pareto", "bounded_pareto", "lognormal", "normal", "empirical", "mix", "named",
        "shape", "mean", "scale", "min", "max", "mu", "median", "sigma", "sd", "cdf", "csv", "interpolate", "p", "value",
    ];
    const WORDS: &[&str] = &[
        "1ms", "2s", "0s", "-1s", "16KB", "1.5KB", "1460B", "3", "abc", "1e999s", "mah1997_reply", "mah1997_files_per_page", "surge1998_file",
    ];

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..2_000_000).prop_map(Value::from),
            prop_oneof![-2.0..3.0f64, 0.0..1.0f64, 0.0..1e7f64].prop_map(Value::from),
            prop::sample::select(WORDS).prop_map(Value::from),
        ]
    }

    /// A quantity as any kind might write it (each kind refuses some of them).
    fn qty() -> impl Strategy<Value = Value> {
        prop_oneof![
            prop::sample::select(&["1ms", "2s", "16KB", "1460B", "0s", "3"][..]).prop_map(Value::from),
            (0i64..5000).prop_map(Value::from),
            (0.0..10.0f64).prop_map(Value::from),
        ]
    }

    fn num() -> impl Strategy<Value = Value> {
        prop_oneof![(0.05..6.0f64).prop_map(Value::from), (-20.0..25.0f64).prop_map(Value::from), (0i64..4).prop_map(Value::from)]
    }

    fn table(kv: Vec<(&str, Value)>) -> Value {
        Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// Tables in the schema's shape with generated parameters (many valid, some refused).
    fn form() -> impl Strategy<Value = Value> {
        let leafs = prop_oneof![
            qty(),
            qty().prop_map(|q| table(vec![("exponential", q)])),
            (qty(), qty()).prop_map(|(a, b)| table(vec![("uniform", Value::Array(vec![a, b]))])),
            (num(), qty(), any::<bool>()).prop_map(|(s, q, m)| table(vec![("pareto", table(vec![("shape", s), (if m { "mean" } else { "scale" }, q)]))])),
            (num(), qty(), qty()).prop_map(|(s, a, b)| table(vec![("bounded_pareto", table(vec![("shape", s), ("min", a), ("max", b)]))])),
            (num(), num(), qty(), any::<bool>())
                .prop_map(|(mu, s, m, by_mu)| table(vec![("lognormal", table(vec![if by_mu { ("mu", mu) } else { ("median", m) }, ("sigma", s)]))])),
            (qty(), qty()).prop_map(|(m, s)| table(vec![("normal", table(vec![("mean", m), ("sd", s)]))])),
            (prop::collection::vec((0i64..5000, 0.0..1.0f64), 1..5), any::<bool>(), any::<bool>()).prop_map(|(mut pts, i, sorted)| {
                // F sorted and ending at 1; x sorted too, or left as drawn (then usually refused).
                pts.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
                if sorted {
                    let mut xs: Vec<i64> = pts.iter().map(|p| p.0).collect();
                    xs.sort();
                    pts.iter_mut().zip(xs).for_each(|(p, x)| p.0 = x);
                }
                let last = pts.len() - 1;
                pts[last].1 = 1.0;
                let cdf = pts.into_iter().map(|(x, f)| Value::Array(vec![Value::from(x), Value::from(f)])).collect();
                table(vec![("empirical", table(vec![("cdf", Value::Array(cdf)), ("interpolate", Value::from(i))]))])
            }),
            prop::sample::select(WORDS).prop_map(|n| table(vec![("named", Value::from(n))])),
        ];
        let mix = prop::collection::vec(leafs.clone(), 1..4).prop_map(|vs| {
            let p = 1.0 / vs.len() as f64;
            table(vec![("mix", Value::Array(vs.into_iter().map(|v| table(vec![("p", Value::from(p)), ("value", v)])).collect()))])
        });
        prop_oneof![8 => leafs, 1 => mix]
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![form(), noise()]
    }

    /// Anything built from the schema's words.
    fn noise() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(4, 40, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    fn check<Q: Quantity>(v: &Value) -> Result<(), TestCaseError>
    where
        Rv<Q>: DeserializeOwned,
    {
        match serde_path_to_error::deserialize::<_, Rv<Q>>(v.clone()) {
            Err(e) => prop_assert!(!e.inner().to_string().is_empty()),
            Ok(rv) => {
                let mut r = RngStream::new(1, "gen");
                for _ in 0..200 {
                    prop_assert!(rv.sample(&mut r) <= 1 << 50);
                }
                if let Some(m) = rv.mean() {
                    prop_assert!(m.is_finite() && m >= 0.0, "mean {m} of {v}");
                }
                let echo = serde_json::to_value(&rv).unwrap();
                let back: Rv<Q> = serde_json::from_value(echo.clone()).map_err(|e| TestCaseError::fail(format!("{v} echoed as {echo}: {e}")))?;
                prop_assert_eq!(back, rv, "{} echoed as {}", v, echo);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 2000,
            failure_persistence: None,
            rng_algorithm: RngAlgorithm::ChaCha,
            rng_seed: RngSeed::Fixed(0x5EED_0011),
            ..ProptestConfig::default()
        })]

        #[test]
        fn generated_tables_are_refused_or_usable(v in value()) {
            check::<tcplab_core::rv::DurationKind>(&v)?;
            check::<tcplab_core::rv::SizeKind>(&v)?;
            check::<tcplab_core::rv::CountKind>(&v)?;
        }
    }
}

#[test]
fn cdf_files_are_bounded_and_not_echoed() {
    // Not a regular file: a device that never ends, a directory; refused by key, not read.
    for p in ["/dev/zero", "/"] {
        let (path, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {p:?} }} }}")).unwrap_err();
        assert_eq!(path, "x.empirical.csv");
        assert!(msg.contains("not a regular file"), "{msg}");
    }
    // Larger than the cap (a sparse file: nothing is written).
    let big = temp_file("big.cdf", "");
    std::fs::OpenOptions::new().write(true).open(&big).unwrap().set_len(tcplab_core::rv::MAX_CDF_FILE_BYTES + 1).unwrap();
    let (path, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {big:?} }} }}")).unwrap_err();
    assert_eq!(path, "x.empirical.csv");
    assert!(msg.contains("larger than the limit of 16 MiB"), "{msg}");
    // A file that is not a CDF: its lines are never shown.
    let secret = temp_file("shadow", "root:$6$saltsalt$hashhashhash:19000:0:99999:7:::\n");
    let (_, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {secret:?} }} }}")).unwrap_err();
    assert!(msg.contains("line 1") && !msg.contains("root") && !msg.contains("hash"), "{msg}");
    let secret2 = temp_file("env", "100 0.5\nTOKEN=abc123 1\n");
    let (_, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {secret2:?} }} }}")).unwrap_err();
    assert!(msg.contains("line 2") && !msg.contains("TOKEN") && !msg.contains("abc123"), "{msg}");
    // A line of numbers and separators is shown, as it helps to find the mistake.
    let row = temp_file("row.cdf", "100 0.5 1 2\n");
    let (_, msg) = parse::<S>(&format!("x = {{ empirical = {{ csv = {row:?} }} }}")).unwrap_err();
    assert!(msg.contains("\"100 0.5 1 2\""), "{msg}");
    // The process's environment (a regular file of size 0 in /proc) is not echoed.
    if std::path::Path::new("/proc/self/environ").exists() {
        let (_, msg) = parse::<S>("x = { empirical = { csv = \"/proc/self/environ\" } }").unwrap_err();
        assert!(!msg.contains("PATH=") && !msg.contains("HOME="), "{msg}");
    }
    for f in [big, secret, secret2, row] {
        let _ = std::fs::remove_file(f);
    }
}
