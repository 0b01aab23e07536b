//! What the fabric tells instruments (time series, packet captures): one interface, so a new
//! instrument is one implementation, never an edit of the per-packet path. Every hook only
//! records; none may change the run. The connection-level hook (a TCP endpoint's state after it
//! acted) is the layer above's (`crate::observe::Observer`).

use super::link::{DropReason, LinkDir};
use super::Packet;
use crate::units::Time;

pub trait NetObserver {
    /// Whether any hook records anything: the fabric asks this before building a hook's
    /// arguments, so a run without instruments pays one branch a hook.
    fn active(&self) -> bool {
        true
    }
    /// A packet leaves its source node; `first` is the link direction it takes first.
    fn on_send(&mut self, _now: Time, _p: &Packet, _first: Option<&LinkDir>) {}
    /// A packet is offered to link direction `l` (before its queue's verdict).
    fn on_ingress(&mut self, _now: Time, _l: usize, _p: &Packet, _links: &[LinkDir]) {}
    /// Link direction `l` dropped a packet, for `why`.
    fn on_drop(&mut self, _now: Time, _l: usize, _p: &Packet, _why: DropReason) {}
    /// Link direction `l`'s queue changed (a packet joined or left it).
    fn on_queue(&mut self, _now: Time, _l: usize, _link: &LinkDir) {}
    /// Link direction `l` starts transmitting a packet.
    fn on_egress(&mut self, _now: Time, _l: usize, _p: &Packet, _links: &[LinkDir]) {}
    /// A packet reached node `node` over `from` (to be forwarded or delivered).
    fn on_node(&mut self, _now: Time, _node: u32, _p: &Packet, _from: Option<&LinkDir>) {}
    /// A packet reached the node it is addressed to.
    fn on_deliver(&mut self, _now: Time, _p: &Packet) {}
}
