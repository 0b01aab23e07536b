//! Packet capture inside a simulation: the scenario's `capture` entries become taps that write
//! what passes a point (a link direction's ingress or egress, or a node) to a pcap or pcapng
//! file, as a tcpdump there would have recorded it.
//!
//! On the wire: node i is 10.0.0.0 + i + 1 with MAC 02:00:00:00:00:(i+1) (`wire::node_ipv4`); the
//! sender of transfer t (1-based) of flow f uses port 10000 + ((f + (t−1)·F) mod 55536) for F
//! flows, the receiver port 5001; the ISNs of each direction come from the run's random stream
//! "isn:<f>:<t>", which no other component draws from. Writing never feeds back into the run.

use super::wire::{encode_tcp, encode_udp, node_ipv4, node_mac, Addrs, TcpFields, TcpOptions, MAX_HEADERS};
use super::writer::{CaptureWriter, Format, LINKTYPE_ETHERNET};
use crate::engine::RngStream;
use crate::net::link::LinkDir;
use crate::net::{Dir, Packet, Payload};
use crate::error::{err, ScenarioError};
use crate::scenario::{Network, ResolvedFlow};
use crate::units::Time;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::BufWriter;

/// The receiver's well-known port.
pub const RECEIVER_PORT: u16 = 5001;
/// The first sender port; ports cycle through 10000..65535.
pub const SENDER_PORT_BASE: u16 = 10000;
/// First source port of applications' connections.
pub const APP_PORT_BASE: u16 = 40000;
/// snaplen of a capture with payload (the largest IPv4 datagram and its Ethernet header).
const SNAPLEN_PAYLOAD: u32 = 65535 + 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Point {
    /// Every packet offered to the link direction, those then dropped (filter, loss, queue
    /// overflow) included, when it is offered.
    Ingress,
    /// Every packet put on the wire, when its transmission starts.
    Egress,
}

/// One `[[capture]]` entry of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureSpec {
    /// File to write. In a scenario read by the front ends, a relative path inside the working
    /// directory (`check_paths`); no component may be a symbolic link when it is created.
    /// `--pcap` / `pcap=` paths may name any place (`trusted`).
    pub path: String,
    /// Capture at a node: packets its endpoints send (when sent) and packets that reach it over
    /// any link (when they arrive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Capture on a link: a direction (`"link:sender->receiver"`, as in the results) or a link
    /// name for both directions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// For a link: `"ingress"` or `"egress"` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<Point>,
    /// Keep the payload (zeros); by default only the headers are kept (snaplen = headers).
    #[serde(default)]
    pub payload: bool,
    /// `"pcap"` (default; nanosecond timestamps) or `"pcapng"`.
    #[serde(default)]
    pub format: Format,
    /// A path given by the user outside the scenario (`tcplab run --pcap`, `tcplab.run(pcap=)`):
    /// it may name any place. A scenario's own paths never are (this is not read from the text).
    #[serde(skip)]
    pub trusted: bool,
}

/// Refuse a capture path of a scenario read from a file or a string that names a place outside the
/// current directory (by key, `capture[i].path`). The front ends (the Python bindings: `tcplab
/// run`, `validate`, sweeps) call it on every scenario they read; a program that builds scenarios
/// with the Rust API is trusted with its paths. Entries marked `trusted` (`--pcap`) pass.
pub fn check_paths(caps: &[CaptureSpec]) -> Result<(), ScenarioError> {
    for (i, c) in caps.iter().enumerate() {
        if !c.trusted {
            check_scenario_path(&c.path).map_err(|m| ScenarioError { path: format!("capture[{i}].path"), message: m })?;
        }
    }
    Ok(())
}

/// Where a scenario's capture path may write: a relative path inside the current directory, made
/// of plain names (no root, no drive, no `..`).
fn check_scenario_path(path: &str) -> Result<(), String> {
    use std::path::Component;
    let p = std::path::Path::new(path);
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{path:?}: a scenario's capture is written inside the current directory, so its path must be relative and must not contain `..`; \
                     to write elsewhere, give the path on the command line (`tcplab run --pcap PATH`) or as `tcplab.run(..., pcap=PATH)`"
                ))
            }
        }
    }
    Ok(())
}

/// Open a scenario's capture file for writing without following a symbolic link: no component of
/// the path may be a link, an existing file must be a regular file with one name (not a hard link
/// to another), and it is the file checked that is truncated (same device and inode).
fn open_scenario_capture(path: &str) -> Result<File, String> {
    use std::fs::OpenOptions;
    let p = std::path::Path::new(path);
    let mut prefix = std::path::PathBuf::new();
    let comps: Vec<_> = p.components().collect();
    for c in &comps[..comps.len().saturating_sub(1)] {
        prefix.push(c);
        if let Ok(m) = std::fs::symlink_metadata(&prefix) {
            if m.file_type().is_symlink() {
                return Err(format!("{:?} is a symbolic link; a scenario's capture does not follow links", prefix.display().to_string()));
            }
        }
    }
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // create_new is O_CREAT|O_EXCL: it fails on a link put there since.
            OpenOptions::new().write(true).create_new(true).open(p).map_err(|e| format!("cannot create {path:?}: {e}"))
        }
        Err(e) => Err(format!("cannot create {path:?}: {e}")),
        Ok(m) => {
            if m.file_type().is_symlink() {
                return Err(format!("{path:?} is a symbolic link; a scenario's capture does not follow links"));
            }
            if !m.file_type().is_file() {
                return Err(format!("{path:?} exists and is not a regular file"));
            }
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                if m.nlink() > 1 {
                    return Err(format!("{path:?} has other names (hard links); a scenario's capture does not overwrite it"));
                }
            }
            let f = OpenOptions::new().write(true).open(p).map_err(|e| format!("cannot create {path:?}: {e}"))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                let now = f.metadata().map_err(|e| format!("cannot create {path:?}: {e}"))?;
                if (now.dev(), now.ino()) != (m.dev(), m.ino()) {
                    return Err(format!("{path:?} changed while it was opened; not written"));
                }
            }
            f.set_len(0).map_err(|e| format!("cannot create {path:?}: {e}"))?;
            Ok(f)
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum At {
    Node(u32),
    Links(Vec<u32>, Point),
}

#[derive(Clone, Debug, PartialEq)]
struct Resolved {
    path: String,
    trusted: bool,
    at: At,
    payload: bool,
    format: Format,
}

/// Check the capture entries against the network and flows; resolve where each one taps.
fn resolve(caps: &[CaptureSpec], net: &Network, first_sender: Option<usize>) -> Result<Vec<Resolved>, ScenarioError> {
    let mut out = Vec::new();
    for (i, c) in caps.iter().enumerate() {
        let p = format!("capture[{i}]");
        if c.path.trim().is_empty() {
            return err(format!("{p}.path"), "expected a file name");
        }
        if caps[..i].iter().any(|o| o.path == c.path) {
            return err(format!("{p}.path"), format!("{:?} is written by another capture already", c.path));
        }
        let at = match (&c.node, &c.link) {
            (Some(_), Some(_)) => return err(p, "give `node` or `link`, not both"),
            (Some(n), None) => {
                if c.point.is_some() {
                    return err(format!("{p}.point"), "applies to a link capture only");
                }
                match net.nodes.iter().position(|x| x == n) {
                    Some(k) => At::Node(k as u32),
                    None => return err(format!("{p}.node"), format!("unknown node {n:?}; nodes are: {}", net.nodes.join(", "))),
                }
            }
            (None, Some(l)) => {
                let mut names = Vec::new();
                let mut dirs = Vec::new();
                for (k, ls) in net.links.iter().enumerate() {
                    let name = if ls.name.is_empty() { format!("link{k}") } else { ls.name.clone() };
                    let fwd = format!("{name}:{}->{}", ls.a, ls.b);
                    let rev = format!("{name}:{}->{}", ls.b, ls.a);
                    if *l == name {
                        dirs.extend([2 * k as u32, 2 * k as u32 + 1]);
                    } else if *l == fwd {
                        dirs.push(2 * k as u32);
                    } else if *l == rev {
                        dirs.push(2 * k as u32 + 1);
                    }
                    names.extend([name, fwd, rev]);
                }
                if dirs.is_empty() {
                    return err(format!("{p}.link"), format!("unknown link or link direction {l:?}; expected one of: {}", names.join(", ")));
                }
                At::Links(dirs, c.point.unwrap_or(Point::Egress))
            }
            (None, None) => {
                if c.point.is_some() {
                    return err(format!("{p}.point"), "applies to a link capture only");
                }
                match first_sender {
                    Some(k) => At::Node(k as u32),
                    None => return err(p, "give `node` or `link`"),
                }
            }
        };
        out.push(Resolved { path: c.path.clone(), trusted: c.trusted, at, payload: c.payload, format: c.format });
    }
    Ok(out)
}

/// Validate a scenario's captures (no file is touched).
pub fn validate(caps: &[CaptureSpec], net: &Network, flows: &[ResolvedFlow]) -> Result<(), ScenarioError> {
    resolve(caps, net, flows.first().map(|f| f.from)).map(|_| ())
}

struct Tap {
    path: String,
    payload: bool,
    w: CaptureWriter<BufWriter<File>>,
    error: Option<String>,
}

#[derive(Clone, Copy)]
struct FlowWire {
    mss: u16,
    /// The window scale both ends announce on their SYNs (RFC 7323 §2.2): the ends model Linux's
    /// receive buffer (`rcv_buffer = "linux"`), whose window is in bytes, a multiple of 2^shift;
    /// None: no option, the window field is the window up to 65,535.
    wscale: Option<u8>,
    epoch: u32,
    isn_fwd: u32,
    isn_rev: u32,
}

/// The window scale the ends of connections with configuration `tcp` announce on their SYNs:
/// Linux's (`tcp_select_initial_window`) when they model its receive buffer, make a handshake
/// and count the option's bytes on their SYNs (`syn_options` of at least MSS, SACK-permitted
/// with its padding when SACK is on, and NOP and window scale: 8 + 4 with SACK, the `linux`
/// profile's 12), so that the SYN written is the simulated packet, byte for byte; none otherwise
/// (the window fits the field, or is unlimited and written as 65,535).
pub fn announced_wscale(tcp: &crate::tcp::TcpConfig) -> Option<u8> {
    let room = tcp.syn_options >= 8 + if tcp.sack { 4 } else { 0 };
    (tcp.rcv_buffer == crate::tcp::config::RcvBuffer::Linux && tcp.handshake && room).then(|| crate::tcp::rcvbuf::RcvBuf::syn_wscale(tcp.rwnd.get()))
}

/// The taps of a run.
pub struct Capture {
    seed: u64,
    taps: Vec<Tap>,
    /// Per link direction, the taps at its ingress and at its egress.
    ingress: Vec<Vec<u16>>,
    egress: Vec<Vec<u16>>,
    /// Per node, the taps there.
    nodes: Vec<Vec<u16>>,
    flows: Vec<FlowWire>,
    /// The scenario's flows (the first labels); applications' labels follow.
    n_flows: usize,
    buf: Vec<u8>,
}

fn isns(seed: u64, flow: usize, epoch: u32) -> (u32, u32) {
    let x = RngStream::new(seed, &format!("isn:{flow}:{epoch}")).next_u64();
    (x as u32, (x >> 32) as u32)
}

/// The captures observe the packets where their taps are: at nodes, and at link directions'
/// ingress and egress.
impl crate::net::NetObserver for Capture {
    fn on_send(&mut self, now: Time, p: &Packet, first: Option<&LinkDir>) {
        self.node(now, p.src.0, p, first);
    }
    fn on_ingress(&mut self, now: Time, l: usize, p: &Packet, links: &[LinkDir]) {
        self.ingress(now, l, p, links);
    }
    fn on_egress(&mut self, now: Time, l: usize, p: &Packet, links: &[LinkDir]) {
        self.egress(now, l, p, links);
    }
    fn on_node(&mut self, now: Time, node: u32, p: &Packet, from: Option<&LinkDir>) {
        self.node(now, node, p, from);
    }
}

impl crate::observe::Observer for Capture {
    fn describe(&mut self, flow: u32, mss: u64, wscale: Option<u8>) {
        Capture::describe(self, flow, mss, wscale);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl Capture {
    /// Open the capture files of a scenario; None when it has no captures.
    pub fn build<'a>(caps: &[CaptureSpec], seed: u64, net: &Network, links: &[LinkDir], flows: impl Iterator<Item = &'a ResolvedFlow>) -> Result<Option<Box<Capture>>, ScenarioError> {
        if caps.is_empty() {
            return Ok(None);
        }
        let flows: Vec<&ResolvedFlow> = flows.collect();
        let first_sender = flows.first().map(|f| f.from);
        let flows: Vec<FlowWire> = flows.iter().map(|f| FlowWire { mss: f.tcp.mss.0.min(u16::MAX as u64) as u16, wscale: announced_wscale(&f.tcp), epoch: 0, isn_fwd: 0, isn_rev: 0 }).collect();
        let resolved = resolve(caps, net, first_sender)?;
        let mut c = Capture {
            seed,
            taps: Vec::new(),
            ingress: vec![Vec::new(); links.len()],
            egress: vec![Vec::new(); links.len()],
            nodes: vec![Vec::new(); net.nodes.len()],
            n_flows: flows.len(),
            flows,
            buf: Vec::with_capacity(SNAPLEN_PAYLOAD as usize),
        };
        for (i, r) in resolved.into_iter().enumerate() {
            let file = if r.trusted {
                File::create(&r.path).map_err(|e| format!("cannot create {:?}: {e}", r.path))
            } else {
                open_scenario_capture(&r.path)
            }
            .map_err(|message| ScenarioError { path: format!("capture[{i}].path"), message })?;
            let snaplen = if r.payload { SNAPLEN_PAYLOAD } else { MAX_HEADERS as u32 };
            let w = CaptureWriter::new(BufWriter::with_capacity(1 << 16, file), r.format, snaplen, LINKTYPE_ETHERNET)
                .map_err(|e| ScenarioError { path: format!("capture[{i}].path"), message: format!("cannot write {:?}: {e}", r.path) })?;
            let t = c.taps.len() as u16;
            match r.at {
                At::Node(n) => c.nodes[n as usize].push(t),
                At::Links(dirs, point) => {
                    for d in dirs {
                        match point {
                            Point::Ingress => c.ingress[d as usize].push(t),
                            Point::Egress => c.egress[d as usize].push(t),
                        }
                    }
                }
            }
            c.taps.push(Tap { path: r.path, payload: r.payload, w, error: None });
        }
        Ok(Some(Box::new(c)))
    }

    /// A packet offered to link direction `l`.
    pub fn ingress(&mut self, now: Time, l: usize, p: &Packet, links: &[LinkDir]) {
        if !self.ingress[l].is_empty() {
            let taps = std::mem::take(&mut self.ingress[l]);
            self.write(now, &taps, p, links[l].from.0, links[l].to.0);
            self.ingress[l] = taps;
        }
    }

    /// A packet whose transmission on link direction `l` starts.
    pub fn egress(&mut self, now: Time, l: usize, p: &Packet, links: &[LinkDir]) {
        if !self.egress[l].is_empty() {
            let taps = std::mem::take(&mut self.egress[l]);
            self.write(now, &taps, p, links[l].from.0, links[l].to.0);
            self.egress[l] = taps;
        }
    }

    /// A packet sent by an endpoint at its node (src), or arriving at node `at` over `l`.
    pub fn node(&mut self, now: Time, at: u32, p: &Packet, hop: Option<&LinkDir>) {
        if !self.nodes[at as usize].is_empty() {
            let taps = std::mem::take(&mut self.nodes[at as usize]);
            // Ethernet addresses: those of the hop (a sent packet: towards the destination).
            let (a, b) = hop.map_or((p.src.0, p.dst.0), |h| (h.from.0, h.to.0));
            self.write(now, &taps, p, a, b);
            self.nodes[at as usize] = taps;
        }
    }

    /// Name a connection label that is not one of the scenario's flows (an application's): its
    /// MSS for the SYN's option. Ports of such labels come from a range of their own.
    pub fn describe(&mut self, flow: u32, mss: u64, wscale: Option<u8>) {
        let f = flow as usize;
        if self.flows.len() <= f {
            self.flows.resize(f + 1, FlowWire { mss: 0, wscale: None, epoch: 0, isn_fwd: 0, isn_rev: 0 });
        }
        self.flows[f].mss = mss.min(u16::MAX as u64) as u16;
        self.flows[f].wscale = wscale;
    }

    fn write(&mut self, now: Time, taps: &[u16], p: &Packet, hop_from: u32, hop_to: u32) {
        let f = p.label.flow as usize;
        let epoch = p.label.epoch;
        let n_flows = self.n_flows;
        let seed = self.seed;
        if self.flows.len() <= f {
            self.describe(f as u32, 1460, None);
        }
        let fw = &mut self.flows[f];
        if fw.epoch != epoch {
            let (a, b) = isns(seed, f, epoch);
            fw.epoch = epoch;
            fw.isn_fwd = a;
            fw.isn_rev = b;
        }
        let fw = *fw;
        let (isn_own, isn_peer) = match p.dir {
            Dir::Forward => (fw.isn_fwd, fw.isn_rev),
            Dir::Reverse => (fw.isn_rev, fw.isn_fwd),
        };
        let sport = if f < n_flows {
            SENDER_PORT_BASE + ((f as u64 + (epoch.max(1) as u64 - 1) * n_flows as u64) % (65536 - SENDER_PORT_BASE as u64)) as u16
        } else {
            // Applications' connections: a range of their own above the flows' usual ports.
            APP_PORT_BASE + (((f - n_flows) as u64 * 131 + epoch as u64) % (65536 - APP_PORT_BASE as u64)) as u16
        };
        let (src_port, dst_port) = match p.dir {
            Dir::Forward => (sport, RECEIVER_PORT),
            Dir::Reverse => (RECEIVER_PORT, sport),
        };
        // The packet's own ends (for a flow: its sender and receiver).
        let addrs = Addrs { src_mac: node_mac(hop_from), dst_mac: node_mac(hop_to), src_ip: node_ipv4(p.src.0), dst_ip: node_ipv4(p.dst.0), src_port, dst_port };
        let s = match &p.body {
            Payload::Tcp(s) => s,
            Payload::Udp(d) => {
                for &t in taps {
                    let tap = &mut self.taps[t as usize];
                    if tap.error.is_some() {
                        continue;
                    }
                    self.buf.clear();
                    let wire = encode_udp(&mut self.buf, &addrs, d.len, tap.payload);
                    if let Err(e) = tap.w.write(now, &self.buf, wire) {
                        tap.error = Some(e.to_string());
                    }
                }
                return;
            }
        };
        // RFC 7323 §2.2: the window field of a SYN is never scaled; after it, with both ends'
        // option, it carries the window shifted right by the sender's scale.
        let window = match fw.wscale {
            Some(ws) if !s.syn() => s.wnd >> ws,
            _ => s.wnd,
        };
        let fields = TcpFields {
            seq: isn_own.wrapping_add(s.seq as u32),
            ack: if s.has_ack() { isn_peer.wrapping_add(s.ack as u32) } else { 0 },
            flags: s.flags,
            window: window.min(u16::MAX as u32) as u16,
            payload: s.len,
            ecn: s.ip_ecn,
        };
        let mut opts = TcpOptions::default();
        if s.syn() {
            if s.opt_len >= 4 {
                opts.mss(fw.mss);
            }
            match (s.sack_permitted, s.ts) {
                (true, true) => opts.sack_permitted_timestamps(s.tsval, s.tsecr),
                (true, false) => opts.sack_permitted(),
                (false, true) => opts.timestamps(s.tsval, s.tsecr),
                (false, false) => &mut opts,
            };
            if let Some(ws) = fw.wscale {
                // Linux's SYN and SYN-ACK end with NOP, window scale (`tcp_options_write`).
                opts.nop_window_scale(ws);
            }
        } else if s.ts {
            opts.timestamps(s.tsval, s.tsecr);
        }
        if !s.syn() && s.n_sack > 0 {
            let mut blocks = [(0u32, 0u32); 4];
            let n = s.sack_blocks().len().min(4);
            for (b, k) in blocks.iter_mut().zip(s.sack_blocks()) {
                *b = (isn_peer.wrapping_add(k.left as u32), isn_peer.wrapping_add(k.right as u32));
            }
            opts.sack(&blocks[..n]);
        }
        opts.pad_to(s.opt_len as usize + if s.n_sack > 0 && !s.syn() { crate::net::packet::sack_option_bytes(s.n_sack as usize) as usize } else { 0 });
        for &t in taps {
            let tap = &mut self.taps[t as usize];
            if tap.error.is_some() {
                continue;
            }
            self.buf.clear();
            let wire = encode_tcp(&mut self.buf, &addrs, &fields, &opts, tap.payload);
            if let Err(e) = tap.w.write(now, &self.buf, wire) {
                tap.error = Some(e.to_string());
            }
        }
    }

    /// Flush and close every file; the first write error, if any, names its capture.
    pub fn close(self) -> Result<(), ScenarioError> {
        for (i, mut t) in self.taps.into_iter().enumerate() {
            if t.error.is_none() {
                if let Err(e) = t.w.flush() {
                    t.error = Some(e.to_string());
                }
            }
            if let Some(e) = t.error {
                return err(format!("capture[{i}].path"), format!("writing {:?} failed: {e}", t.path));
            }
        }
        Ok(())
    }
}
