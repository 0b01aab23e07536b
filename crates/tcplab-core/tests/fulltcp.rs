//! Packet-level tests of the `ns2-full` profile: each rule states what ns-2.35's two-way
//! `Agent/TCP/FullTcp` does, cites where tcp/tcp-full.cc (or tcl/lib/ns-default.tcl) shows it,
//! and checks the same exchange without the rule where that makes the difference visible.

mod common;

use tcplab_core::net::{Segment, FLAG_ACK, FLAG_FIN, FLAG_SYN};
use tcplab_core::tcp::config::InitialWindow;
use tcplab_core::tcp::{OutSeg, TcpConfig, TcpReceiver, TcpSender};
use tcplab_core::units::{ms, Size, Time, SEC};
use tcplab_core::{run, Scenario};

fn full() -> TcpConfig {
    TcpConfig::profile("ns2-full").expect("the ns2-full profile")
}

/// ns-default.tcl's `Agent/TCP/FullTcp` defaults, over the `ns2` profile's `Agent/TCP` ones.
#[test]
fn profile_carries_fulltcp_defaults() {
    let c = full();
    c.validate().unwrap();
    let ns2 = TcpConfig::profile("ns2").unwrap();
    // set_initial_window(): "full-tcp always models SYN exchange"; FINs on close.
    assert!(c.handshake && c.fin && c.handshake_rtt_sample);
    // segsize_ 536, window_ 20 packets.
    assert_eq!(c.mss.0, 536);
    assert_eq!(c.rwnd.get(), Some(20 * 536));
    // segsperack_ 1 counted in bytes (need_send()), interval_ 0.1 on a periodic timer.
    assert!(c.delayed_ack && c.delack_bytes);
    assert_eq!((c.delack_segments, c.delack_timeout.0, c.delack_tick.0), (1, 0, ms(100)));
    // headersize() = tcpip_base_hdr_size_ (ts_option_ off): no option bytes on the SYN.
    assert_eq!(c.syn_options, 0);
    // nodelay_ false; slow_start_restart_ true; tcprexmtthresh_ 3.
    assert!(c.nagle && c.restart_after_idle);
    assert_eq!(c.dupthresh, 3);
    // close_on_empty_: the FIN on the last data segment.
    assert!(c.fin_with_data);
    // The Agent/TCP timers and the Reno response are the ns2 profile's.
    assert_eq!((c.variant, c.rto_model, c.rto_initial, c.rto_min, c.timer_tick), (ns2.variant, ns2.rto_model, ns2.rto_initial, ns2.rto_min, ns2.timer_tick));
    assert_eq!(c.initial_window, InitialWindow::Segments(2)); // windowInit_ 2
    // The new knobs leave every other profile as it was.
    for p in tcplab_core::tcp::config::PROFILES.iter().filter(|p| **p != "ns2-full") {
        let o = TcpConfig::profile(p).unwrap();
        // (linux and linux6 write the kernel's 20 SYN option bytes: 12 here and the timestamps' 8.)
        let syn_options = if matches!(*p, "linux" | "linux6") { 12 } else { 8 };
        assert!(!o.delack_bytes && !o.nagle && o.syn_options == syn_options, "{p}");
    }
}

struct Snd {
    s: TcpSender,
    out: Vec<OutSeg>,
}

impl Snd {
    fn new(c: TcpConfig, bytes: u64) -> Snd {
        let mut h = Snd { s: TcpSender::new(c, Some(bytes)), out: Vec::new() };
        h.s.start(0, &mut h.out);
        h.s.take_timer_events().for_each(drop);
        h
    }
    fn sent(&mut self) -> Vec<OutSeg> {
        self.s.take_timer_events().for_each(drop);
        self.out.drain(..).collect()
    }
    fn on(&mut self, t: Time, seg: Segment) {
        self.s.on_segment(t, &seg, &mut self.out);
    }
}

fn synack() -> Segment {
    Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: u32::MAX, ..Default::default() }
}

/// newack() samples the SYN timed by foutput() (`rtt_active_`, `rtt_seq_` = iss): the first data
/// leaves with an RTO from the handshake's RTT — the ns2 floor of 1 s (minrto_ of the profile's
/// era) instead of the 3 s initial RTO (rtxcur_init_) a one-way agent starts with.
#[test]
fn handshake_rtt_sample_gives_the_first_rto() {
    let mut h = Snd::new(full(), 10 * 536);
    let syn = h.sent();
    assert_eq!(syn.len(), 1);
    assert_eq!(syn[0].seg.flags, FLAG_SYN);
    assert_eq!(syn[0].seg.wire_bytes(), 40, "headersize(): 40 bytes, no options");
    h.on(ms(100), synack());
    let data = h.sent();
    // The pure ACK of the SYN-ACK (ns's "generate pure ACK here"), then IW 2 segments.
    assert_eq!(data.iter().filter(|o| o.seg.len > 0).count(), 2);
    assert_eq!(h.s.core.rtt.srtt(), Some(ms(100)));
    assert_eq!(h.s.core.rtt.rto(), SEC);
    // Without the handshake (the ns2 profile's one-way agent) there is no sample: 3 s.
    let mut one = TcpConfig::profile("ns2").unwrap();
    one.mss = Size(536);
    let mut o = Snd::new(one, 10 * 536);
    assert!(o.sent().iter().all(|x| x.seg.len > 0));
    assert_eq!(o.s.core.rtt.srtt(), None);
    assert_eq!(o.s.core.rtt.rto(), 3 * SEC);
}

/// foutput(): a segment shorter than maxseg_ goes only when nothing is outstanding ("quiet")
/// with nodelay_ false; full segments go whenever the window allows.
#[test]
fn nagle_holds_the_short_tail_until_everything_is_acknowledged() {
    let mss = 536u64;
    for nagle in [true, false] {
        let mut c = full();
        c.handshake = false;
        c.initial_window = InitialWindow::Segments(4);
        c.nagle = nagle;
        c.fin = false;
        let mut h = Snd::new(c, 2 * mss + 100);
        let lens: Vec<u32> = h.sent().iter().map(|o| o.seg.len).collect();
        if !nagle {
            assert_eq!(lens, [536, 536, 100]);
            continue;
        }
        assert_eq!(lens, [536, 536], "the 100-byte tail waits");
        h.on(ms(100), Segment { seq: 1, ack: 1 + mss, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() });
        assert!(h.sent().iter().all(|o| o.seg.len == 0), "still one segment outstanding");
        h.on(ms(101), Segment { seq: 1, ack: 1 + 2 * mss, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() });
        let lens: Vec<u32> = h.sent().iter().filter(|o| o.seg.flags & FLAG_FIN == 0).map(|o| o.seg.len).collect();
        assert_eq!(lens, [100], "quiet: the tail goes");
    }
}

struct Rcv {
    r: TcpReceiver,
    out: Vec<OutSeg>,
}

impl Rcv {
    fn new(c: TcpConfig) -> Rcv {
        Rcv { r: TcpReceiver::new(c), out: Vec::new() }
    }
    /// `len` bytes at `seq`; the ACK numbers sent in reply.
    fn data(&mut self, t: Time, seq: u64, len: u32) -> Vec<u64> {
        let seg = Segment { seq, ack: 0, len, flags: FLAG_ACK, ..Default::default() };
        self.r.on_segment(t, &seg, &mut self.out);
        let _ = self.r.take_timer_events().count();
        self.out.drain(..).map(|o| o.seg.ack).collect()
    }
}

fn one_way(mut c: TcpConfig) -> TcpConfig {
    c.handshake = false;
    c.fin = false;
    c
}

/// need_send(): ACK at once once segsperack_ (1) × maxseg bytes are unacknowledged; a shorter
/// segment sets TF_DELACK and waits for the delayed-ACK timer, which fires on multiples of
/// interval_ (100 ms) from time 0 (recv() arms it at (int(now/interval_) + 1) · interval_).
#[test]
fn delayed_ack_counts_bytes_and_fires_on_the_100ms_tick() {
    let mut r = Rcv::new(one_way(full()));
    assert_eq!(r.data(ms(130), 1, 536), [537], "a full segment: ACK at once");
    assert_eq!(r.data(ms(140), 537, 200), Vec::<u64>::new(), "a short one waits");
    assert_eq!(r.r.delack_timer.deadline(), Some(ms(200)), "the next 100 ms boundary");
    assert_eq!(r.data(ms(150), 737, 336), [1073], "536 bytes unacknowledged: ACK now");
    assert_eq!(r.r.delack_timer.deadline(), None);
    r.data(ms(230), 1073, 10);
    assert_eq!(r.r.delack_timer.deadline(), Some(ms(300)));
    r.r.delack_timer.cancel();
    r.r.on_delack_timer(ms(300), &mut r.out);
    assert_eq!(r.out.drain(..).map(|o| o.seg.ack).collect::<Vec<_>>(), [1083]);
    // Counting segments (the RFC reading, delack_segments 1): every segment is acknowledged.
    let mut c = one_way(full());
    c.delack_bytes = false;
    let mut s = Rcv::new(c);
    assert_eq!(s.data(ms(140), 1, 200), [201]);
}

const NET: &str = r#"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "50ms"
[tcp]
profile = "ns2-full"
mss = 1460
"#;

/// Through the world, captured at the client: SYN, SYN-ACK, the pure ACK, the request; the
/// server's response and FIN; the client's FIN; both FINs acknowledged. Every control segment
/// is 40 bytes (headersize()).
#[test]
fn handshake_request_response_and_fin_exchange_on_the_wire() {
    let pcap = common::tmp("fulltcp", "exchange.pcap");
    let text = format!(
        "[[capture]]\npath = {:?}\nnode = \"receiver\"\n{NET}[[apps]]\nkind = \"reqresp\"\nrequest = \"200B\"\nresponse = \"3000B\"\ncount = 1\n",
        pcap.to_string_lossy()
    );
    let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&s, 1).unwrap();
    assert!(r.meta.completed);
    let segs = common::capture_segments(&pcap);
    let to_server = |t: &tcplab_core::trace::reader::TcpSeg| t.dport == 5001;
    let f = |t: &tcplab_core::trace::reader::TcpSeg| t.flags & (FLAG_SYN | FLAG_ACK | FLAG_FIN);
    // The handshake, then the request on its own segment.
    assert!(to_server(&segs[0]) && f(&segs[0]) == FLAG_SYN && segs[0].ip_len == 40, "{:?}", segs[0]);
    assert!(!to_server(&segs[1]) && f(&segs[1]) == FLAG_SYN | FLAG_ACK && segs[1].ip_len == 40);
    assert!(to_server(&segs[2]) && f(&segs[2]) == FLAG_ACK && segs[2].payload == 0 && segs[2].ip_len == 40);
    assert!(to_server(&segs[3]) && segs[3].payload == 200);
    let syns = segs.iter().filter(|t| t.flags & FLAG_SYN != 0).count();
    assert_eq!(syns, 2);
    // One FIN each way, each acknowledged (its sequence number + its data + 1). The server's
    // rides on the response's last segment (`close_on_empty_`, `foutput()` sets TH_FIN on it);
    // the client's, sent with nothing left to say, is a segment of its own.
    let fins: Vec<_> = segs.iter().filter(|t| t.flags & FLAG_FIN != 0).collect();
    assert_eq!(fins.len(), 2, "{fins:?}");
    for fin in &fins {
        let acked = segs.iter().any(|t| to_server(t) != to_server(fin) && t.ack == fin.seq.wrapping_add(fin.payload as u32 + 1));
        assert!(acked, "FIN {fin:?} unacknowledged");
        assert_eq!(fin.ip_len, 40 + fin.payload);
    }
    let server_fin = fins.iter().find(|t| !to_server(t)).expect("the server's FIN");
    assert_eq!(server_fin.payload, 80, "the FIN rides on the 80-byte tail: {server_fin:?}");
    assert_eq!(fins.iter().find(|t| to_server(t)).expect("the client's FIN").payload, 0);
    // The response's full segments are acknowledged one by one (segsperack_ 1): 3000 B = 1460 +
    // 1460 + 80, the 80-byte tail held by Nagle until both are acknowledged.
    let data: Vec<_> = segs.iter().filter(|t| !to_server(t) && t.payload > 0).collect();
    assert_eq!(data.iter().map(|t| t.payload).collect::<Vec<_>>(), [1460, 1460, 80]);
    let ack2 = segs.iter().position(|t| to_server(t) && t.ack == data[1].seq.wrapping_add(1460)).expect("second segment acknowledged");
    let tail = segs.iter().position(|t| !to_server(t) && t.payload == 80).unwrap();
    assert!(ack2 < tail, "the tail follows the ACK of everything before it");
    let _ = std::fs::remove_file(&pcap);
}

/// `close_on_empty_` (tcp/tcp-full.cc, `foutput()`): ns-2's server closes with its last bytes and
/// sends the FIN on the segment that carries them. Without the rule (`fin_with_data = false`) the
/// FIN is a 40-byte segment of its own: one packet more toward the client per exchange, which in
/// a packet-counted drop-tail queue takes a place of its own (RFC 2415's bottleneck).
#[test]
fn server_fin_rides_on_the_last_data_segment_unless_the_knob_is_off() {
    let text = format!("{NET}[[apps]]\nkind = \"reqresp\"\nrequest = \"200B\"\nresponse = \"3000B\"\ncount = 1\n");
    let to_client = |sets: &[String]| {
        let pcap = common::tmp("fulltcp", &format!("fin{}.pcap", sets.len()));
        let with_cap = format!("[[capture]]\npath = {:?}\nnode = \"receiver\"\n{text}", pcap.to_string_lossy());
        let s = Scenario::from_toml(&with_cap, sets).unwrap_or_else(|e| panic!("{e}"));
        assert!(run(&s, 1).unwrap().meta.completed);
        let segs: Vec<_> = common::capture_segments(&pcap).into_iter().filter(|t| t.dport != 5001).collect();
        let _ = std::fs::remove_file(&pcap);
        segs
    };
    let on = to_client(&[]);
    let off = to_client(&["tcp.fin_with_data=false".to_string()]);
    let fin = |segs: &[tcplab_core::trace::reader::TcpSeg]| segs.iter().find(|t| t.flags & FLAG_FIN != 0).map(|t| (t.payload, t.ip_len));
    assert_eq!(fin(&on), Some((80, 120)));
    assert_eq!(fin(&off), Some((0, 40)));
    assert_eq!(off.len(), on.len() + 1, "one closing packet more toward the client without the rule");
}
