//! Reader, writer and analyser tests on hand-built captures: round trips through pcap and pcapng,
//! every link type, IPv6, 32-bit wrap-around, the analyser's definitions on a known exchange, and
//! each kind of bad input (an error naming the byte offset, or a counted skip; never a panic).

use super::analyze::analyze;
use super::reader::{decode, CaptureReader, Skip, TH_ACK, TH_FIN, TH_SYN};
use super::wire::{encode_tcp, encode_udp, node_ipv4, node_mac, Addrs, TcpFields, TcpOptions};
use super::writer::{CaptureWriter, Format, LINKTYPE_ETHERNET};
use serde_json::Value;

const A: u16 = 10000;
const B: u16 = 5001;

fn addrs(from_a: bool) -> Addrs {
    let (x, y, px, py) = if from_a { (0, 1, A, B) } else { (1, 0, B, A) };
    Addrs { src_mac: node_mac(x), dst_mac: node_mac(y), src_ip: node_ipv4(x), dst_ip: node_ipv4(y), src_port: px, dst_port: py }
}

/// One packet of a hand-written exchange: time (µs), from a?, seq, ack, flags, payload.
#[derive(Clone, Copy)]
struct P(i64, bool, u32, u32, u8, u32);

fn frame(p: &P, opts: &TcpOptions) -> (Vec<u8>, u32) {
    let mut f = Vec::new();
    let wire = encode_tcp(&mut f, &addrs(p.1), &TcpFields { seq: p.2, ack: p.3, flags: p.4, window: 65535, payload: p.5, ecn: 0 }, opts, false);
    (f, wire)
}

fn capture(pkts: &[P], format: Format) -> Vec<u8> {
    let mut w = CaptureWriter::new(Vec::new(), format, 94, LINKTYPE_ETHERNET).unwrap();
    for p in pkts {
        let mut o = TcpOptions::default();
        if p.4 & TH_SYN != 0 {
            o.mss(1000).sack_permitted();
        }
        let (f, wire) = frame(p, &o);
        w.write(p.0 as u64 * 1000, &f, wire).unwrap();
    }
    w.into_inner()
}

fn one(v: &Value) -> &Value {
    let c = v["connections"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{v}");
    &c[0]
}

const SYN: u8 = TH_SYN;
const SA: u8 = TH_SYN | TH_ACK;
const ACK: u8 = TH_ACK;

/// SYN, SYN-ACK, ACK; five 1000-byte segments (ISN x, data from x+1); the third lost after the
/// capture point, so three duplicate ACKs, its retransmission, and the ACKs.
fn exchange(x: u32, y: u32) -> Vec<P> {
    let d = |k: u32| x.wrapping_add(1 + 1000 * k);
    vec![
        P(0, true, x, 0, SYN, 0),
        P(100_000, false, y, x.wrapping_add(1), SA, 0),
        P(100_000, true, x.wrapping_add(1), y.wrapping_add(1), ACK, 0),
        P(100_000, true, d(0), y + 1, ACK, 1000),
        P(100_001, true, d(1), y + 1, ACK, 1000),
        P(100_002, true, d(2), y + 1, ACK, 1000),
        P(200_000, false, y + 1, d(1), ACK, 0),
        P(200_001, true, d(3), y + 1, ACK, 1000),
        P(200_002, true, d(4), y + 1, ACK, 1000),
        P(200_100, false, y + 1, d(2), ACK, 0),
        P(300_000, false, y + 1, d(2), ACK, 0),
        P(300_001, false, y + 1, d(2), ACK, 0),
        P(300_002, false, y + 1, d(2), ACK, 0),
        P(300_003, true, d(2), y + 1, ACK, 1000),
        P(400_003, false, y + 1, d(5), ACK, 0),
        P(400_004, true, d(5), y + 1, ACK | TH_FIN, 0),
        P(500_004, false, y + 1, d(5).wrapping_add(1), ACK, 0),
    ]
}

fn check_exchange(c: &Value) {
    let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k}: {}", c[k]));
    assert_eq!(c["a"], "10.0.0.1:10000");
    assert_eq!(c["b"], "10.0.0.2:5001");
    assert_eq!(n("a2b_segs"), 9);
    assert_eq!(n("a2b_data_segs"), 6);
    assert_eq!(n("unique_bytes"), 5000);
    assert_eq!(n("rexmt_segs"), 1);
    assert_eq!(n("rexmt_bytes"), 1000);
    assert_eq!(n("a2b_dup_segs"), 1);
    assert_eq!(n("a2b_ooo_segs"), 0);
    assert_eq!(n("dup_acks"), 3);
    assert_eq!(n("b2a_pure_acks"), 7);
    assert_eq!(n("iw_segs"), 3);
    assert_eq!(n("iw_bytes".replace("iw", "a2b_iw").as_str()), 3000);
    assert_eq!(n("loss_events"), 1);
    assert_eq!(n("syn_retransmits"), 0);
    // RTT samples: the ACKs of segments 1 and 2 (100 and 100.099 ms); the ACK that covers the
    // retransmitted segment 3 gives none (Karn); the handshake 100 ms.
    assert_eq!(n("a2b_rtt_samples"), 2);
    assert!((c["a2b_rtt_min_s"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    assert!((c["a2b_rtt_max_s"].as_f64().unwrap() - 0.100099).abs() < 1e-9);
    assert!((c["handshake_rtt_s"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    assert_eq!(c["a2b_mss"], 1000);
    assert_eq!(c["sack_permitted"], true);
    assert!((c["transfer_time_s"].as_f64().unwrap() - 0.500004).abs() < 1e-9);
    assert!((c["a2b_first_data_s"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    assert!((c["a2b_last_data_s"].as_f64().unwrap() - 0.300003).abs() < 1e-9);
    // Every byte passed this capture point in order by 0.200002 (the loss is downstream).
    assert!((c["a2b_data_complete_s"].as_f64().unwrap() - 0.200002).abs() < 1e-9);
}

#[test]
fn analyser_definitions_on_a_known_exchange() {
    for format in [Format::Pcap, Format::Pcapng] {
        let v = analyze(&capture(&exchange(1000, 7000), format)[..]).unwrap();
        check_exchange(one(&v));
    }
}

#[test]
fn sequence_numbers_wrap_around() {
    // ISNs just below 2^32: the data and the ACKs cross zero.
    for x in [u32::MAX - 2500, u32::MAX, u32::MAX - 999] {
        let v = analyze(&capture(&exchange(x, u32::MAX - 1), Format::Pcap)[..]).unwrap();
        check_exchange(one(&v));
    }
    // A long transfer: 5 GB of sequence space, more than one wrap.
    let mut pk = vec![P(0, true, 5, 0, SYN, 0), P(1, false, 9, 6, SA, 0)];
    let mut seq: u32 = 6;
    for i in 0..80_000u32 {
        pk.push(P(2 + i as i64, true, seq, 10, ACK, 65000));
        seq = seq.wrapping_add(65000);
        pk.push(P(2 + i as i64, false, 10, seq, ACK, 0));
    }
    pk.push(P(100_000, true, seq.wrapping_sub(65000), 10, ACK, 65000)); // one retransmission
    let v = analyze(&capture(&pk, Format::Pcap)[..]).unwrap();
    let c = one(&v);
    assert_eq!(c["unique_bytes"].as_u64().unwrap(), 80_000 * 65000);
    assert_eq!(c["rexmt_segs"].as_u64().unwrap(), 1);
    assert_eq!(c["a2b_ooo_segs"].as_u64().unwrap(), 0);
    assert_eq!(c["a2b_rtt_samples"].as_u64().unwrap(), 80_000);
}

/// Re-frame an Ethernet/IPv4 frame for another link type.
fn relink(eth: &[u8], linktype: u32) -> Vec<u8> {
    let ip = &eth[14..];
    let mut f = Vec::new();
    match linktype {
        113 => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0]);
            f.extend_from_slice(&0x0800u16.to_be_bytes());
            f.truncate(14);
            f.extend_from_slice(&0x0800u16.to_be_bytes());
        }
        276 => {
            f.extend_from_slice(&0x0800u16.to_be_bytes());
            f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        }
        101 | 228 => {}
        0 => f.extend_from_slice(&2u32.to_le_bytes()),
        1 => {
            // Ethernet with an 802.1Q tag.
            f.extend_from_slice(&eth[..12]);
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x08, 0x00]);
        }
        _ => unreachable!(),
    }
    f.extend_from_slice(ip);
    f
}

fn pcap_of(linktype: u32, big_endian: bool, micro: bool, frames: &[(i64, Vec<u8>, u32)]) -> Vec<u8> {
    let e = |x: u32| if big_endian { x.to_be_bytes() } else { x.to_le_bytes() };
    let mut out = Vec::new();
    out.extend_from_slice(&e(if micro { 0xa1b2c3d4 } else { 0xa1b23c4d }));
    out.extend_from_slice(&if big_endian { [0, 2, 0, 4] } else { [2, 0, 4, 0] });
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&e(65535));
    out.extend_from_slice(&e(linktype));
    for (t, f, orig) in frames {
        out.extend_from_slice(&e((t / 1_000_000_000) as u32));
        let frac = (t % 1_000_000_000) as u32;
        out.extend_from_slice(&e(if micro { frac / 1000 } else { frac }));
        out.extend_from_slice(&e(f.len() as u32));
        out.extend_from_slice(&e(*orig));
        out.extend_from_slice(f);
    }
    out
}

#[test]
fn link_types_and_byte_orders() {
    let pk = exchange(77, 99);
    for lt in [113u32, 276, 101, 228, 0, 1] {
        for (be, micro) in [(false, false), (true, true)] {
            let frames: Vec<(i64, Vec<u8>, u32)> = pk
                .iter()
                .map(|p| {
                    let mut o = TcpOptions::default();
                    if p.4 & TH_SYN != 0 {
                        o.mss(1000).sack_permitted();
                    }
                    let (f, wire) = frame(p, &o);
                    let g = relink(&f, lt);
                    let orig = wire - 14 + (g.len() as u32 - (f.len() as u32 - 14));
                    (p.0 * 1000, g, orig)
                })
                .collect();
            let v = analyze(&pcap_of(lt, be, micro, &frames)[..]).unwrap();
            assert_eq!(v["reader"]["tcp_packets"].as_u64().unwrap(), pk.len() as u64, "linktype {lt}");
            check_exchange(one(&v));
        }
    }
}

fn ipv6_frame(from_a: bool, seq: u32, ack: u32, flags: u8, payload: u32, with_ext: bool) -> Vec<u8> {
    let (s, d, sp, dp) = if from_a { (1u8, 2u8, A, B) } else { (2, 1, B, A) };
    let mut tcp = Vec::new();
    tcp.extend_from_slice(&sp.to_be_bytes());
    tcp.extend_from_slice(&dp.to_be_bytes());
    tcp.extend_from_slice(&seq.to_be_bytes());
    tcp.extend_from_slice(&ack.to_be_bytes());
    tcp.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    let ext: &[u8] = if with_ext { &[6, 0, 1, 4, 0, 0, 0, 0] } else { &[] }; // hop-by-hop, PadN
    let mut f = vec![0x60, 0, 0, 0];
    f.extend_from_slice(&((ext.len() + 20) as u16 + payload as u16).to_be_bytes());
    f.extend_from_slice(&[if with_ext { 0 } else { 6 }, 64]);
    let mut a = [0u8; 16];
    a[0] = 0xfd;
    a[15] = s;
    f.extend_from_slice(&a);
    a[15] = d;
    f.extend_from_slice(&a);
    f.extend_from_slice(ext);
    f.extend_from_slice(&tcp);
    f
}

#[test]
fn ipv6_with_extension_headers() {
    let pk = exchange(5, 6);
    let frames: Vec<(i64, Vec<u8>, u32)> = pk
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f = ipv6_frame(p.1, p.2, p.3, p.4, p.5, i % 2 == 0);
            let orig = f.len() as u32 + p.5;
            (p.0 * 1000, f, orig)
        })
        .collect();
    let v = analyze(&pcap_of(229, false, false, &frames)[..]).unwrap();
    let c = one(&v);
    assert_eq!(c["ip_version"], 6);
    assert_eq!(c["a"], "[fd00::1]:10000");
    assert_eq!(c["unique_bytes"], 5000);
    assert_eq!(c["rexmt_segs"], 1);
    assert_eq!(c["dup_acks"], 3);
}

/// A pcapng file built by hand: two sections (the second big-endian), interfaces with
/// microsecond and nanosecond resolution, enhanced, simple and skipped blocks.
#[test]
fn pcapng_sections_interfaces_and_resolutions() {
    fn block(be: bool, t: u32, body: &[u8]) -> Vec<u8> {
        let e = |x: u32| if be { x.to_be_bytes() } else { x.to_le_bytes() };
        let pad = (4 - body.len() % 4) % 4;
        let len = (12 + body.len() + pad) as u32;
        let mut b = Vec::new();
        b.extend_from_slice(&e(t));
        b.extend_from_slice(&e(len));
        b.extend_from_slice(body);
        b.extend(std::iter::repeat_n(0, pad));
        b.extend_from_slice(&e(len));
        b
    }
    let e16 = |be: bool, x: u16| if be { x.to_be_bytes() } else { x.to_le_bytes() };
    let e32 = |be: bool, x: u32| if be { x.to_be_bytes() } else { x.to_le_bytes() };
    let shb = |be: bool| {
        let mut b = e32(be, 0x1A2B3C4D).to_vec();
        b.extend_from_slice(&e16(be, 1));
        b.extend_from_slice(&e16(be, 0));
        b.extend_from_slice(&[0xff; 8]);
        block(be, 0x0A0D0D0A, &b)
    };
    let idb = |be: bool, lt: u16, tsresol: Option<u8>| {
        let mut b = e16(be, lt).to_vec();
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&e32(be, 0));
        if let Some(r) = tsresol {
            b.extend_from_slice(&e16(be, 9));
            b.extend_from_slice(&e16(be, 1));
            b.extend_from_slice(&[r, 0, 0, 0]);
            b.extend_from_slice(&[0, 0, 0, 0]);
        }
        block(be, 1, &b)
    };
    let epb = |be: bool, iface: u32, ts: u64, data: &[u8], orig: u32| {
        let mut b = e32(be, iface).to_vec();
        b.extend_from_slice(&e32(be, (ts >> 32) as u32));
        b.extend_from_slice(&e32(be, ts as u32));
        b.extend_from_slice(&e32(be, data.len() as u32));
        b.extend_from_slice(&e32(be, orig));
        b.extend_from_slice(data);
        block(be, 6, &b)
    };
    let pk = exchange(1, 2);
    let mut file = shb(false);
    file.extend(idb(false, 1, None)); // microseconds by default
    file.extend(idb(false, 101, Some(9)));
    file.extend(block(false, 5, &[0; 8])); // interface statistics: skipped
    let mut expect = 0;
    for (i, p) in pk.iter().enumerate().take(8) {
        let (f, wire) = frame(p, &TcpOptions::default());
        if i % 2 == 0 {
            file.extend(epb(false, 0, p.0 as u64, &f, wire));
        } else {
            file.extend(epb(false, 1, p.0 as u64 * 1000, &f[14..], wire - 14));
        }
        expect += 1;
    }
    // A second section, big-endian, one interface in units of 2^-10 s... and a simple packet.
    file.extend(shb(true));
    file.extend(idb(true, 1, Some(0x80 | 10)));
    for p in &pk[8..] {
        let (f, wire) = frame(p, &TcpOptions::default());
        file.extend(epb(true, 0, (p.0 as u64 * 1024) / 1_000_000, &f, wire));
        expect += 1;
    }
    let (f, wire) = frame(&pk[0], &TcpOptions::default());
    let mut spb = e32(true, wire).to_vec();
    spb.extend_from_slice(&f);
    file.extend(block(true, 3, &spb));
    expect += 1;
    let mut r = CaptureReader::new(&file[..]).unwrap();
    let mut n = 0;
    let mut times = Vec::new();
    while let Some(fr) = r.next_frame().unwrap() {
        decode(&fr).unwrap();
        times.push(fr.ts_ns);
        n += 1;
    }
    assert_eq!(n, expect);
    assert_eq!(times[4], 100_001_000, "microsecond interface");
    assert_eq!(times[5], 100_002_000, "nanosecond interface");
    // 200_002 µs in units of 2^-10 s is 204 units (truncated), 204/1024 s.
    assert_eq!(times[8], 199_218_750, "2^-10 s units");
}

fn err_of(bytes: &[u8]) -> super::reader::TraceError {
    match analyze(bytes) {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(e) => e,
    }
}

#[test]
fn bad_input_names_the_byte_offset() {
    let good = capture(&exchange(1, 2), Format::Pcap);
    // Empty, short and wrong magic.
    assert_eq!(err_of(&[]).offset, 0);
    let e = err_of(b"GET / HTTP/1.1\r\n\r\n.........");
    assert_eq!(e.offset, 0);
    assert!(e.message.contains("magic"), "{e}");
    let e = err_of(&good[..20]);
    assert!(e.message.contains("file header"), "{e}");
    // Truncated: inside a record's header, inside its data.
    let first = 24u64;
    let second = first + 16 + 62;
    let e = err_of(&good[..second as usize + 7]);
    assert_eq!(e.offset, second);
    assert!(e.message.contains("7 of 16"), "{e}");
    let e = err_of(&good[..second as usize + 30]);
    assert_eq!(e.offset, second);
    assert!(e.message.contains("truncated record"), "{e}");
    assert!(e.to_string().starts_with(&format!("byte {second}: ")));
    // A corrupted captured length.
    let mut bad = good.clone();
    bad[second as usize + 8..second as usize + 12].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let e = err_of(&bad);
    assert_eq!(e.offset, second + 8);
    assert!(e.message.contains("corrupted"), "{e}");
    // A bad version.
    let mut bad = good.clone();
    bad[4] = 9;
    assert_eq!(err_of(&bad).offset, 4);
    // pcapng: corrupted block lengths.
    let ng = capture(&exchange(1, 2), Format::Pcapng);
    let epb0 = 28 + 32;
    let mut bad = ng.clone();
    bad[epb0 + 4..epb0 + 8].copy_from_slice(&13u32.to_le_bytes());
    let e = err_of(&bad);
    assert_eq!(e.offset, epb0 as u64 + 4);
    let mut bad = ng.clone();
    let len = u32::from_le_bytes(bad[epb0 + 4..epb0 + 8].try_into().unwrap()) as usize;
    bad[epb0 + len - 4] ^= 0x40;
    let e = err_of(&bad);
    assert_eq!(e.offset, (epb0 + len - 4) as u64);
    assert!(e.message.contains("trailing length"), "{e}");
    let mut bad = ng.clone();
    bad[epb0 + 8] = 3; // interface 3 was never described
    assert!(err_of(&bad).message.contains("interface 3"));
    let e = err_of(&ng[..ng.len() - 5]);
    assert!(e.message.contains("truncated block"), "{e}");
    let mut bad = ng.clone();
    bad[epb0 + 20..epb0 + 24].copy_from_slice(&5000u32.to_le_bytes());
    assert!(err_of(&bad).message.contains("captured length 5000"));
    // pcapng that does not start with a section header.
    assert!(err_of(&ng[28..]).message.contains("magic"));
}

#[test]
fn undecodable_packets_are_skipped_and_counted() {
    let pk = exchange(1, 2);
    let mut frames: Vec<(i64, Vec<u8>, u32)> = Vec::new();
    let mut push = |f: Vec<u8>| {
        let n = f.len() as u32;
        frames.push((0, f, n));
    };
    // ARP.
    let mut arp = vec![0xff; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    push(arp);
    // UDP (cross traffic as the simulator writes it).
    let mut udp = Vec::new();
    encode_udp(&mut udp, &addrs(true), 100, true);
    push(udp);
    // A snaplen shorter than the headers: 40 bytes of an Ethernet/IPv4/TCP frame.
    let (f, _) = frame(&pk[0], &TcpOptions::default());
    push(f[..40].to_vec());
    // A bad IPv4 header length and a TCP data offset beyond the datagram.
    let (mut f, _) = frame(&pk[0], &TcpOptions::default());
    f[14] = 0x43;
    push(f);
    let (mut f, _) = frame(&pk[0], &TcpOptions::default());
    f[14 + 20 + 12] = 0xf0;
    push(f);
    // And a good one.
    let (f, w) = frame(&pk[0], &TcpOptions::default());
    frames.push((0, f, w));
    let bytes = pcap_of(1, false, false, &frames);
    let v = analyze(&bytes[..]).unwrap();
    let r = &v["reader"];
    assert_eq!(r["packets"], 6);
    assert_eq!(r["tcp_packets"], 1);
    assert_eq!(r["skipped"]["not_ip"], 1);
    assert_eq!(r["skipped"]["not_tcp"], 1);
    assert_eq!(r["skipped"]["truncated"], 1);
    assert_eq!(r["skipped"]["malformed"], 2);
    // The offset of the first packet skipped for each reason: the truncated one is the third.
    assert_eq!(r["first_skip_offset"]["truncated"], 24 + 2 * 16 + 42 + 142);
    // An unknown link type is skipped, not an error.
    let v = analyze(&pcap_of(147, false, false, &frames)[..]).unwrap();
    assert_eq!(v["reader"]["skipped"]["unsupported_link_type"], 6);
    assert_eq!(Skip::ALL.len(), 5);
}

#[test]
fn reader_never_panics_on_mangled_captures() {
    // Every single-byte corruption and every truncation of a small capture: an error or a result.
    for fmt in [Format::Pcap, Format::Pcapng] {
        let good = capture(&exchange(u32::MAX - 1500, 3), fmt);
        for i in 0..good.len() {
            for x in [0x00u8, 0xff, 0x80, 0x01] {
                let mut b = good.clone();
                b[i] ^= x;
                let _ = analyze(&b[..]);
                let mut a = super::analyze::Analyzer::with_packets();
                if a.read_lenient(&b[..]).is_ok() {
                    let (_, p) = a.report_with_packets();
                    assert!(p.is_some_and(|p| p.conn.len() == p.dir.len() && p.dir.len() == p.sack.len()));
                }
            }
            let _ = analyze(&good[..i]);
            let mut a = super::analyze::Analyzer::with_packets();
            if a.read_lenient(&good[..i]).is_ok() {
                let _ = a.report_with_packets();
            }
        }
    }
}

#[test]
fn flags_fin_only_segment() {
    let v = analyze(&capture(&exchange(1, 2), Format::Pcap)[..]).unwrap();
    let c = one(&v);
    assert_eq!(c["a2b_fins"], 1);
    assert_eq!(c["fin_seen"], true);
    assert_eq!(TH_FIN, 1);
}

fn with_handshake(hs: &[P], x: u32, y: u32) -> Vec<P> {
    // The handshake given, then one data segment and its ACK, a second after the last of it.
    let t = hs.last().unwrap().0 + 1_000_000;
    let mut v = hs.to_vec();
    v.push(P(t, true, x + 1, y + 1, ACK, 1000));
    v.push(P(t + 100_000, false, y + 1, x + 1001, ACK, 0));
    v
}

#[test]
fn a_lost_synack_answered_by_a_retransmitted_syn_is_one_loss_event() {
    let (x, y) = (100, 900);
    // Captured at b: its SYN-ACK is lost downstream, a's SYN timer sends the SYN again, b
    // answers with the SYN-ACK again.
    let one_loss = [P(0, true, x, 0, SYN, 0), P(10, false, y, x + 1, SA, 0), P(1_000_000, true, x, 0, SYN, 0), P(1_000_010, false, y, x + 1, SA, 0), P(1_100_000, true, x + 1, y + 1, ACK, 0)];
    let v = analyze(&capture(&with_handshake(&one_loss, x, y), Format::Pcap)[..]).unwrap();
    let c = one(&v);
    assert_eq!((c["syn_retransmits"].as_u64(), c["synack_retransmits"].as_u64()), (Some(1), Some(1)));
    assert_eq!(c["loss_events"], 1, "one lost SYN-ACK");
    // The SYN-ACK lost twice: two events.
    let two = [
        P(0, true, x, 0, SYN, 0),
        P(10, false, y, x + 1, SA, 0),
        P(1_000_000, true, x, 0, SYN, 0),
        P(1_000_010, false, y, x + 1, SA, 0),
        P(3_000_000, true, x, 0, SYN, 0),
        P(3_000_010, false, y, x + 1, SA, 0),
        P(3_100_000, true, x + 1, y + 1, ACK, 0),
    ];
    let v = analyze(&capture(&with_handshake(&two, x, y), Format::Pcap)[..]).unwrap();
    assert_eq!(one(&v)["loss_events"], 2);
    // The SYN lost twice (seen at a): two events, no SYN-ACK retransmission.
    let syns = [P(0, true, x, 0, SYN, 0), P(1_000_000, true, x, 0, SYN, 0), P(3_000_000, true, x, 0, SYN, 0), P(3_100_000, false, y, x + 1, SA, 0), P(3_100_001, true, x + 1, y + 1, ACK, 0)];
    let v = analyze(&capture(&with_handshake(&syns, x, y), Format::Pcap)[..]).unwrap();
    assert_eq!(one(&v)["loss_events"], 2);
    // Seen at b when both timers fire together: b's timer resends the SYN-ACK as a's SYN arrives
    // again, and b answers that SYN with one more: one lost SYN-ACK, one event.
    let crossed = [
        P(0, true, x, 0, SYN, 0),
        P(10, false, y, x + 1, SA, 0),
        P(1_000_010, false, y, x + 1, SA, 0),
        P(1_000_010, true, x, 0, SYN, 0),
        P(1_000_010, false, y, x + 1, SA, 0),
        P(1_100_000, true, x + 1, y + 1, ACK, 0),
    ];
    let v = analyze(&capture(&with_handshake(&crossed, x, y), Format::Pcap)[..]).unwrap();
    assert_eq!((one(&v)["synack_retransmits"].as_u64(), one(&v)["loss_events"].as_u64()), (Some(2), Some(1)));
    // The SYN-ACK lost three times, both timers running: each round is one more event.
    let thrice = [
        P(0, true, x, 0, SYN, 0),
        P(10, false, y, x + 1, SA, 0),
        P(1_000_000, true, x, 0, SYN, 0),
        P(1_000_010, false, y, x + 1, SA, 0),
        P(2_000_010, false, y, x + 1, SA, 0),
        P(3_000_000, true, x, 0, SYN, 0),
        P(3_000_010, false, y, x + 1, SA, 0),
        P(3_100_000, true, x + 1, y + 1, ACK, 0),
    ];
    assert_eq!(one(&analyze(&capture(&with_handshake(&thrice, x, y), Format::Pcap)[..]).unwrap())["loss_events"], 3);
    // A SYN-ACK sent again by b's own timer, the SYN not resent: one event.
    let timer = [P(0, true, x, 0, SYN, 0), P(10, false, y, x + 1, SA, 0), P(1_000_010, false, y, x + 1, SA, 0), P(1_100_000, true, x + 1, y + 1, ACK, 0)];
    let v = analyze(&capture(&with_handshake(&timer, x, y), Format::Pcap)[..]).unwrap();
    assert_eq!(one(&v)["loss_events"], 1);
}

#[test]
fn a_truncated_capture_keeps_every_complete_record_before_the_cut() {
    let good = capture(&exchange(1, 2), Format::Pcap);
    let second = 24 + 16 + 62;
    for cut in [second + 7, second + 30] {
        let mut a = super::analyze::Analyzer::new();
        a.read_lenient(&good[..cut]).unwrap();
        let v = a.report();
        let r = &v["reader"];
        assert_eq!(r["packets"], 1, "the first record is complete");
        assert_eq!(r["stopped"]["offset"], second as u64);
        assert!(r["stopped"]["message"].as_str().unwrap().contains("truncated"), "{r}");
        assert_eq!(one(&v)["a2b_syns"], 1);
    }
    // Later cuts: every record before the cut is counted.
    let whole = analyze(&good[..]).unwrap();
    let n = whole["reader"]["packets"].as_u64().unwrap();
    let mut a = super::analyze::Analyzer::new();
    a.read_lenient(&good[..good.len() - 3]).unwrap();
    let v = a.report();
    assert_eq!(v["reader"]["packets"].as_u64().unwrap(), n - 1);
    assert!(v["reader"]["stopped"].is_object());
    assert!(whole["reader"]["stopped"].is_null());
    // A file whose header cannot be read is still an error.
    assert!(super::analyze::Analyzer::new().read_lenient(&good[..10]).is_err());
}

#[test]
fn the_vantage_point_is_judged_from_the_handshake() {
    // The exchange is captured at a, the data sender: a's SYN waits 100 ms, a answers at once.
    let v = analyze(&capture(&exchange(1, 2), Format::Pcap)[..]).unwrap();
    assert_eq!(one(&v)["vantage"], "sender");
    // The same exchange seen at b: b answers the SYN at once and waits for the ACK.
    let (x, y) = (1u32, 2u32);
    let at_b = [
        P(0, true, x, 0, SYN, 0),
        P(20, false, y, x + 1, SA, 0),
        P(100_000, true, x + 1, y + 1, ACK, 0),
        P(100_010, true, x + 1, y + 1, ACK, 1000),
        P(100_030, false, y + 1, x + 1001, ACK, 0),
    ];
    let v = analyze(&capture(&at_b, Format::Pcap)[..]).unwrap();
    assert_eq!(one(&v)["vantage"], "receiver");
    // Halfway: each side waits about as long.
    let mid = [P(0, true, x, 0, SYN, 0), P(50_000, false, y, x + 1, SA, 0), P(100_000, true, x + 1, y + 1, ACK, 0), P(100_010, true, x + 1, y + 1, ACK, 1000)];
    assert_eq!(one(&analyze(&capture(&mid, Format::Pcap)[..]).unwrap())["vantage"], "middle");
    // No handshake: unknown.
    let v = analyze(&capture(&exchange(1, 2)[3..], Format::Pcap)[..]).unwrap();
    assert!(one(&v)["vantage"].is_null());
}

#[test]
fn an_empty_capture_reports_the_usual_columns() {
    let empty = capture(&[], Format::Pcap);
    let v = analyze(&empty[..]).unwrap();
    assert_eq!(v["connections"].as_array().unwrap().len(), 0);
    let full = analyze(&capture(&exchange(1, 2), Format::Pcap)[..]).unwrap();
    let keys: Vec<String> = one(&full).as_object().unwrap().keys().cloned().collect();
    let cols: Vec<String> = v["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    assert_eq!(cols, keys);
    assert!(cols.iter().any(|c| c == "loss_events"));
}

#[test]
fn the_packet_table_follows_the_analyser() {
    let pk = exchange(u32::MAX - 10, 7000);
    let mut a = super::analyze::Analyzer::with_packets();
    a.read(&capture(&pk, Format::Pcap)[..]).unwrap();
    let (v, p) = a.report_with_packets();
    let p = p.unwrap();
    assert_eq!(p.time_ns.len(), pk.len());
    assert!(p.conn.iter().all(|&c| c == 0));
    let dirs: Vec<u8> = pk.iter().map(|q| if q.1 { 0 } else { 1 }).collect();
    assert_eq!(p.dir, dirs);
    // Relative numbers: the SYN is 0, the first data byte 1 (across the 32-bit wrap); the
    // SYN-ACK acknowledges 1.
    assert_eq!((p.seq[0], p.seq[3], p.seq[4]), (0, 1, 1001));
    assert_eq!((p.ack[0], p.ack[1], p.ack[6], p.ack[7]), (-1, 1, 1001, 1));
    // One retransmission (the 14th packet) and three duplicate ACKs, as the report counts them.
    let retx: Vec<usize> = (0..pk.len()).filter(|&i| p.retx[i]).collect();
    assert_eq!(retx, vec![13]);
    assert_eq!(p.dup_ack.iter().filter(|&&d| d).count() as u64, one(&v)["dup_acks"].as_u64().unwrap());
    assert_eq!(p.len.iter().map(|&l| l as u64).sum::<u64>(), one(&v)["a2b_data_bytes"].as_u64().unwrap());
}
