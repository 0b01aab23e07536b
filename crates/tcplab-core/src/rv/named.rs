//! Web-size distributions from the literature the studies cite, by name (`{ named = "..." }`).
//!
//! RFC 2415 §2 drew its file sizes "from the distributions of Mah [1] and Cunha et al. [2]" and
//! states one fact about them: the median primary and inline object fits in two 1460-byte packets
//! (≤ 2920 B). The RFC's scripts are lost, so what is shipped is what the sources publish:
//!
//! * **Mah 1997** (B. A. Mah, "An Empirical Model of HTTP Network Traffic", INFOCOM '97): Mah
//!   published his model as empirical CDFs, and gave them to ns-2, which distributes them as
//!   `tcl/http/data/Http*.cdf` (ns-2 `tcl/http/README`: "empirical data files provided by Bruce
//!   Mah"; columns: value, count, cumulative fraction). We ship the reply and request lengths
//!   condensed to 58 quantile points each (F = 0, 0.02, 0.04, …, 0.88, 0.90, 0.92, 0.94, 0.95, 0.96,
//!   0.97, 0.98, 0.985, 0.99, 0.995, 0.998, 0.999, 1; x = the smallest observed value whose
//!   cumulative fraction reaches F) and interpolate linearly between them. The condensation was
//!   chosen here: it keeps the median exactly (reply 2112 B, request 231 B, both ≤ 2920 B as the RFC
//!   says) and the mean within 1.4 % (reply 7332 B against the 4100 observed replies' 7231 B; request
//!   335 B against 337 B). Files per page (Mah's "connections per document", 1444 pages) is small
//!   enough to ship whole, as a step CDF.
//! * **Cunha, Bestavros, Crovella 1995** ("Characteristics of WWW Client-based Traces",
//!   BU-CS-95-010) model document sizes as a power law, but the fitted parameters could not be
//!   retrieved for this release (only their Zipf popularity slope, −0.986, was), so no `cunha1995`
//!   distribution is shipped rather than an invented one.
//! * **SURGE** (P. Barford and M. Crovella, "Generating Representative Web Workloads for Network
//!   and Server Performance Evaluation", SIGMETRICS 1998, Table 1), the widely used successor model
//!   from the same group: file sizes with a lognormal body (μ = 9.357, σ = 1.318, ln bytes) and a
//!   Pareto tail (k = 133 KB, α = 1.1), embedded references per page Pareto (k = 1, α = 2.43). These
//!   parameters are the paper's Table 1 as widely reproduced (the file-size ones match an
//!   independent public implementation of the model); they were not re-read against the paper
//!   text for this release. The paper states a body/tail cut-off but not how the
//!   two pieces join; we chose the continuous splice (the tail carries the lognormal's own mass
//!   above k = 133 000 B, 3.2 %). SURGE's median file (11.6 KB) is larger than RFC 2415's, as it
//!   models the files on a server, not the objects of 1997 traces.

use super::Dist;

/// A shipped distribution: its name, the quantity kind it is for, where it comes from.
pub struct NamedRv {
    pub name: &'static str,
    /// `"size"`, `"count"` or `"duration"` (`Quantity::KIND`).
    pub kind: &'static str,
    pub source: &'static str,
    pub(crate) build: fn() -> Dist,
}

pub static NAMED: &[NamedRv] = &[
    NamedRv {
        name: "mah1997_reply",
        kind: "size",
        source: "Mah 1997, HTTP reply lengths (ns-2 tcl/http/data/HttpReplyLength.cdf), 58 quantiles, interpolated",
        build: || quantiles(&MAH_REPLY),
    },
    NamedRv {
        name: "mah1997_request",
        kind: "size",
        source: "Mah 1997, HTTP request lengths (ns-2 tcl/http/data/HttpRequestLength.cdf), 58 quantiles, interpolated",
        build: || quantiles(&MAH_REQUEST),
    },
    NamedRv {
        name: "mah1997_files_per_page",
        kind: "count",
        source: "Mah 1997, connections per document (ns-2 tcl/http/data/HttpConnections.cdf), whole, step CDF",
        build: mah_files_per_page,
    },
    NamedRv {
        name: "surge1998_file",
        kind: "size",
        source: "Barford & Crovella 1998 (SURGE) Table 1: lognormal body mu 9.357 sigma 1.318, Pareto tail k 133KB alpha 1.1",
        build: || Dist::LognormalParetoTail { mu: 9.357, sigma: 1.318, from: 133_000.0, shape: 1.1 },
    },
    NamedRv {
        name: "surge1998_embedded",
        kind: "count",
        source: "Barford & Crovella 1998 (SURGE) Table 1: embedded references per page, Pareto k 1 alpha 2.43",
        build: || Dist::Pareto { shape: 2.43, scale: 1.0, given_mean: None },
    },
];

pub(crate) fn lookup(name: &str, kind: &str) -> Option<&'static NamedRv> {
    NAMED.iter().find(|n| n.name == name && n.kind == kind)
}

/// The cumulative levels of the condensed Mah CDFs.
const LEVELS: [f64; 58] = [
    0.0, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.20, 0.22, 0.24, 0.26, 0.28, 0.30, 0.32, 0.34, 0.36, 0.38,
    0.40, 0.42, 0.44, 0.46, 0.48, 0.50, 0.52, 0.54, 0.56, 0.58, 0.60, 0.62, 0.64, 0.66, 0.68, 0.70, 0.72, 0.74, 0.76, 0.78,
    0.80, 0.82, 0.84, 0.86, 0.88, 0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98, 0.985, 0.99, 0.995, 0.998, 0.999, 1.0,
];

/// Mah's reply lengths in bytes at `LEVELS` (4100 replies).
const MAH_REPLY: [f64; 58] = [
    0.0, 90.0, 103.0, 104.0, 104.0, 110.0, 234.0, 286.0, 316.0, 368.0, 412.0, 463.0, 525.0, 623.0, 729.0, 830.0, 936.0,
    1025.0, 1134.0, 1272.0, 1434.0, 1550.0, 1711.0, 1872.0, 2042.0, 2112.0, 2288.0, 2460.0, 2573.0, 2674.0, 2811.0,
    2961.0, 3153.0, 3333.0, 3658.0, 3886.0, 4099.0, 4555.0, 5016.0, 5495.0, 6036.0, 6836.0, 7810.0, 8484.0, 10379.0,
    12581.0, 15503.0, 20344.0, 23332.0, 29273.0, 33537.0, 47758.0, 53998.0, 67379.0, 103200.0, 290407.0, 649354.0,
    1636039.0,
];

/// Mah's request lengths in bytes at `LEVELS` (4100 requests).
const MAH_REQUEST: [f64; 58] = [
    0.0, 120.0, 131.0, 137.0, 138.0, 148.0, 176.0, 187.0, 192.0, 195.0, 198.0, 200.0, 203.0, 205.0, 207.0, 209.0, 211.0,
    213.0, 215.0, 218.0, 220.0, 222.0, 224.0, 226.0, 229.0, 231.0, 235.0, 237.0, 240.0, 243.0, 246.0, 250.0, 254.0, 258.0,
    263.0, 269.0, 275.0, 279.0, 285.0, 288.0, 291.0, 294.0, 307.0, 355.0, 1049.0, 1057.0, 1061.0, 1072.0, 1079.0, 1094.0,
    1104.0, 1122.0, 1129.0, 1134.0, 1147.0, 1173.0, 1190.0, 1373.0,
];

/// Mah's connections per document: (number of files on the page, pages seen), 1444 pages.
const MAH_FILES_PER_PAGE: [(f64, f64); 26] = [
    (1.0, 739.0),
    (2.0, 302.0),
    (3.0, 108.0),
    (4.0, 53.0),
    (5.0, 72.0),
    (6.0, 36.0),
    (7.0, 24.0),
    (8.0, 22.0),
    (9.0, 16.0),
    (10.0, 17.0),
    (11.0, 9.0),
    (12.0, 6.0),
    (13.0, 1.0),
    (14.0, 6.0),
    (15.0, 4.0),
    (16.0, 11.0),
    (17.0, 1.0),
    (18.0, 2.0),
    (19.0, 5.0),
    (20.0, 4.0),
    (21.0, 1.0),
    (32.0, 1.0),
    (35.0, 1.0),
    (37.0, 1.0),
    (63.0, 1.0),
    (65.0, 1.0),
];

fn quantiles(xs: &[f64; 58]) -> Dist {
    Dist::Empirical { points: xs.iter().copied().zip(LEVELS).collect(), interpolate: true, csv: None }
}

fn mah_files_per_page() -> Dist {
    let total: f64 = MAH_FILES_PER_PAGE.iter().map(|(_, n)| n).sum();
    let mut acc = 0.0;
    let points = MAH_FILES_PER_PAGE
        .iter()
        .map(|(x, n)| {
            acc += n;
            (*x, acc / total)
        })
        .collect();
    Dist::Empirical { points, interpolate: false, csv: None }
}
