//! The TCP timestamps option (RFC 7323 §3–4): negotiated on the SYN and SYN-ACK, then TSval (the
//! sender's 1 ms clock) and TSecr (the TS.Recent it echoes) on every segment. The connection
//! stamps every segment its two halves send (`stamp`) and takes TS.Recent from the segments it
//! receives (`on_segment`); the send half reads TSecr for its RTT samples (`rtt_ms`).
//!
//! Linux: `tcp_syn_options()`, `tcp_synack_options()`, `tcp_established_options()` and
//! `tcp_options_write()` (net/ipv4/tcp_output.c) write it; `tcp_parse_options()`,
//! `tcp_replace_ts_recent()` and `tcp_rtt_tsopt_us()` (net/ipv4/tcp_input.c) read it. The clock
//! is `tcp_time_stamp_ts()`: milliseconds (TCP_TS_HZ 1000; the µs clock of `usec_ts` is off by
//! default). Linux adds a per-connection random offset (`tsoffset`, whole milliseconds); here the
//! clock starts at 0, so runs stay deterministic. Where the milliseconds tick is the host's
//! (its monotonic clock's phase); `ts_offset` sets it (the last tick before time 0 came that
//! long before it). PAWS (RFC 7323 §5) is not modelled: no segment is old enough.

use crate::net::{Segment, TS_OPTION_BYTES};
use crate::units::{Time, MS};

/// The most SACK blocks a segment with timestamps carries: 12 + 4 + 3·8 = 40 option bytes
/// (RFC 2018 §3: "a SACK option that specifies n blocks will have a length of 8*n+2 bytes, so the
/// 40 bytes available for TCP options can specify a maximum of 4 blocks ... 3 if the Timestamp
/// option is used"; Linux `tcp_established_options()`).
pub const MAX_SACK_BLOCKS_WITH_TS: usize = 3;

/// TSval at `now`: the 1 ms timestamp clock, wrapping at 2^32 (RFC 7323 §5.4 allows 1 ms to
/// 1 s a tick; Linux `tcp_time_stamp_ts()` without `usec_ts`), its ticks `offset` (less than
/// 1 ms, the `ts_offset` knob) before whole milliseconds of the simulated time.
#[inline]
pub fn ts_clock(now: Time, offset: Time) -> u32 {
    ((now + offset) / MS) as u32
}

/// Option bytes the timestamps option adds to a SYN or SYN-ACK: 10 and two NOPs, except that
/// with SACK-permitted Linux writes SACK-permitted (2 bytes) in the place of the NOPs
/// (`tcp_options_write()`: OPTION_SACK_ADVERTISE with OPTION_TS), so the SYN's
/// NOP,NOP,SACK-permitted (4 bytes) and NOP,NOP,TS (12) become SACK-permitted,TS (12): 8 more.
pub fn syn_option_bytes(sack_permitted: bool) -> u16 {
    if sack_permitted {
        TS_OPTION_BYTES as u16 - 4
    } else {
        TS_OPTION_BYTES as u16
    }
}

/// One connection's timestamps state (RFC 7323 §4.3: TS.Recent and Last.ACK.sent).
#[derive(Clone, Debug, Default)]
pub struct Timestamps {
    /// This end sends the option on its SYN / accepts it on a SYN (the `timestamps` knob).
    offered: bool,
    /// Both ends agreed: every segment carries the option.
    pub on: bool,
    /// TS.Recent: the TSval to echo.
    pub ts_recent: u32,
    /// Last.ACK.sent: the acknowledgment number of the last segment sent.
    last_ack_sent: u64,
    /// The clock's phase (`ts_offset`).
    offset: Time,
}

impl Timestamps {
    /// `offered`: the knob; without a handshake both ends use the option at once when it is on.
    pub fn new(offered: bool, handshake: bool, offset: Time) -> Timestamps {
        // Last.ACK.sent starts at the first data sequence number (RCV.NXT once synchronised):
        // until our first ACK is sent only the SYN sets TS.Recent.
        Timestamps { offered, on: offered && !handshake, ts_recent: 0, last_ack_sent: 1, offset }
    }

    /// This end uses the option when the peer does (the `timestamps` knob).
    #[inline]
    pub fn offered(&self) -> bool {
        self.offered
    }

    /// A segment from the peer, before this end answers it.
    #[inline]
    pub fn on_segment(&mut self, seg: &Segment) {
        if !self.offered {
            return;
        }
        if seg.syn() {
            // RFC 7323 §3.2: "A TCP MAY send the TSopt in an initial <SYN> segment ... a TCP
            // that receives a <SYN,ACK> segment containing a TSopt [after sending one] ... MAY
            // send TSopt in other segments"; "if a TSopt is received in a <SYN> and the TCP
            // [is willing], it MUST send a TSopt in its <SYN,ACK>". Either SYN without it turns
            // it off for the connection (Linux `tcp_parse_options()` → saw_tstamp, tstamp_ok).
            self.on = seg.ts;
            if seg.ts {
                // RFC 7323 §4.3 (1): TS.Recent is initialised from the peer's SYN.
                self.ts_recent = seg.tsval;
            }
            return;
        }
        // RFC 7323 §4.3 (2): "If SEG.TSval >= TS.Recent and SEG.SEQ <= Last.ACK.sent then
        // SEG.TSval is copied to TS.Recent; otherwise, it is ignored." So a delayed ACK echoes
        // the earliest unacknowledged segment's TSval, and an out-of-order segment's is not
        // taken (Linux `tcp_replace_ts_recent()`: tcp_paws_check() and !after(seq, rcv_wup)).
        if self.on && seg.ts && (seg.tsval.wrapping_sub(self.ts_recent) as i32) >= 0 && seg.seq <= self.last_ack_sent {
            self.ts_recent = seg.tsval;
        }
    }

    /// Put the option on the segments this end sends now (RFC 7323 §3.2: once agreed, "every
    /// non-<RST> segment MUST contain a TSopt"; the SYN offers it with TSecr 0) and remember
    /// the acknowledgment they carry.
    #[inline]
    pub fn stamp<'a>(&mut self, now: Time, out: impl Iterator<Item = &'a mut Segment>) {
        for s in out {
            let syn_only = s.syn() && !s.has_ack();
            if !(self.on || (syn_only && self.offered)) {
                continue;
            }
            s.ts = true;
            s.tsval = ts_clock(now, self.offset);
            if syn_only {
                // RFC 7323 §3.2: "the TSecr field ... MUST be set to zero" on a <SYN>.
                s.tsecr = 0;
                s.opt_len += syn_option_bytes(s.sack_permitted);
                continue;
            }
            s.tsecr = self.ts_recent;
            s.opt_len += if s.syn() { syn_option_bytes(s.sack_permitted) } else { TS_OPTION_BYTES as u16 };
            if s.n_sack as usize > MAX_SACK_BLOCKS_WITH_TS {
                let keep: Vec<_> = s.sack_blocks()[..MAX_SACK_BLOCKS_WITH_TS].to_vec();
                s.set_sack_blocks(&keep);
            }
            self.last_ack_sent = s.ack;
        }
    }
}

/// The RTT a TSecr measures at `now`, in whole milliseconds as the kernel takes it:
/// `tcp_rtt_tsopt_us()` — delta = TSval now − TSecr, 0 counted as 1 ms, and nothing if the
/// difference is negative or implausibly large (a corrupt echo).
pub fn rtt_from_tsecr(now: Time, offset: Time, tsecr: u32) -> Option<Time> {
    let delta = ts_clock(now, offset).wrapping_sub(tsecr);
    if delta >= (i32::MAX as u32) / 1000 {
        return None;
    }
    Some(delta.max(1) as Time * MS)
}
