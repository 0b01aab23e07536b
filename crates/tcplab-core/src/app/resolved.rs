//! An application entry resolved against the network (`scenario/apps.rs` makes them): what the
//! application objects of `app/` are built from, with nodes bound, sizes and times as random
//! variables, TCP configured per end and drops checked.

use super::spec::{AppKind, Http11Transfer, Mode, PageSpacing, Rounding};
use crate::net::FilterKind;
use crate::rv::{RandomCount, RandomDuration, RandomSize};
use crate::tcp::TcpConfig;
use crate::units::Time;

/// A drop filter of an application, ready for the world: what it matches, the transmissions,
/// the exchange (label epoch), and whether it sits where the client's packets leave (else the
/// server's).
#[derive(Clone, Debug, PartialEq)]
pub struct AppDrop {
    pub kind: FilterKind,
    pub transmissions: Vec<u32>,
    pub object: Option<u32>,
    pub at_client: bool,
}

/// An application entry bound to the network.
#[derive(Clone, Debug)]
pub struct ResolvedApp {
    pub kind: AppKind,
    pub name: String,
    pub client: usize,
    /// The server (the first of `servers`).
    pub server: usize,
    /// Every server the application picks from (one: always `server`).
    pub servers: Vec<usize>,
    pub mode: Mode,
    pub start: Time,
    pub request: RandomSize,
    pub response: RandomSize,
    /// Exchanges (`reqresp`) or pages (web clients); None = unlimited.
    pub count: Option<u32>,
    pub embedded: RandomCount,
    /// Objects per page of an ns-2 style page (no primary), and the time between their starts.
    pub objects: Option<RandomCount>,
    pub objects_rounding: Rounding,
    pub interobject: RandomDuration,
    pub keep_alive: bool,
    pub transfer: Http11Transfer,
    pub think: RandomDuration,
    /// Web clients: where `think` runs from (a page's end, or its start).
    pub page_spacing: PageSpacing,
    pub tcp: TcpConfig,
    /// The server's end: `tcp` with `server_tcp` over it (the same as `tcp` without it).
    pub server_tcp: TcpConfig,
    pub drops: Vec<AppDrop>,
    /// A UDP source's pattern and rates (`kind = "onoff"` or `"cbr"`); `client` is the sending
    /// node and `server` the sink.
    pub traffic: Option<TrafficSpec>,
}


/// How a source spaces its packets.
#[derive(Clone, Debug)]
pub enum Pattern {
    OnOff { on: RandomDuration, off: RandomDuration },
    Cbr { interval: Option<Time>, jitter: bool },
}

/// A UDP source entry, resolved: its pattern, its ON rate and what its mean rate should be.
#[derive(Clone, Debug)]
pub struct TrafficSpec {
    pub pattern: Pattern,
    /// Sending rate while ON (CBR: always), bit/s; 0 is a silent source.
    pub rate: u64,
    /// IP packet size, headers included.
    pub packet: RandomSize,
    pub stop: Option<Time>,
    /// The mean rate asked for (`mean_rate`, or `aggregate_rate` / instances), bit/s.
    pub target_bps: Option<f64>,
    /// The long-run mean rate the pattern gives at `rate`, bit/s.
    pub expected_bps: f64,
}

