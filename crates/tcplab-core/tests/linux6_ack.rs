//! Linux 6.x's ACK processing as the `linux6` profile models it, on the connection harness:
//! the window grows while `tcp_is_cwnd_limited` holds, by what an ACK newly delivers
//! (`tcp_cong_control` with `tcp_newly_delivered`); a SACK block tags only whole segments
//! (`tcp_match_skb_to_sack`); an ACK of data never sent is dropped with a challenge ACK
//! (`tcp_ack` → `tcp_send_challenge_ack`). Kernel functions are net/ipv4/tcp_input.c and
//! tcp_output.c, include/net/tcp.h (6.x).

#[macro_use]
mod harness;

use harness::{Harness, MSS, SYNACK};
use tcplab_core::tcp::config::{Limit, Unlimited};
use tcplab_core::tcp::TcpConfig;
use tcplab_core::units::{Size, Time, MS};

fn ms(x: u64) -> Time {
    x * MS
}

/// The `linux6` profile with MSS 1000, no FIN, an unlimited receive window, after a handshake
/// with a 100 ms round trip (SRTT 100 ms), nothing written yet.
fn linux6(knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
    let mut c = TcpConfig::profile("linux6").unwrap();
    c.mss = Size(MSS);
    c.fin = false;
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    knobs(&mut c);
    c.validate().unwrap();
    let mut h = Harness::client(c);
    assert_eq!(h.take_sent().len(), 1, "the SYN");
    h.send(ms(100), seg!(ack = 1, sack_permitted = true, ..SYNACK));
    h.recv(ms(100), [seg!(ack = 1)]);
    assert_eq!(h.info().srtt, Some(ms(100)));
    h
}

#[test]
fn debug_partial_sack() {
    let mut c = TcpConfig::profile("linux6").unwrap();
    c.mss = Size(MSS);
    c.fin = false;
    let mut h = Harness::server(c);
    h.send(ms(100), seg!(seq = 0, ack = 0, flags = tcplab_core::net::FLAG_SYN, sack_permitted = true, wnd = 32792));
    eprintln!("{:?}", h.take_sent());
    h.send(ms(200), seg!(seq = 1, ack = 1, wnd = 40960));
    h.write(ms(200), 4000);
    eprintln!("{:?} {:?} {:?} {:?}", h.take_sent(), h.info().srtt, h.deadline(tcplab_core::tcp::TimerKind::Rto), h.conn.snd.core.xmit_timer);
    h.send(ms(300), seg!(ack = 1, sack = [(4000, 4001)], wnd = 40960));
    eprintln!("{:?} {:?} {:?} {:?}", h.take_sent(), h.info().srtt, h.deadline(tcplab_core::tcp::TimerKind::Rto), h.conn.snd.core.xmit_timer);
    h.advance_to(ms(1000));
    eprintln!("{:?}", h.take_sent());
    panic!();
}
