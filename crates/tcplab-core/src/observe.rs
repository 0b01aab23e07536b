//! Instruments (time series, packet captures, and whatever comes next) observe a run through one
//! interface: the fabric's packet hooks (`net::observe::NetObserver`) and, one layer up, a
//! connection's state after it acted (`on_conn`). The world holds them as one list
//! (`Observers`) and calls the list; adding an instrument is one implementation of `Observer`
//! and one line where the world is built, never an edit of the event loop.

use crate::net::link::{DropReason, LinkDir};
use crate::net::{Dir, Label, NetObserver, Packet};
use crate::tcp::TcpConn;
use crate::units::Time;
use std::any::Any;

pub trait Observer: NetObserver + Send {
    /// A TCP endpoint (`label`, `dir`, at `node`, its peer at `peer`) has handled a segment, a
    /// timer or its application's call.
    fn on_conn(&mut self, _now: Time, _label: Label, _dir: Dir, _node: u32, _peer: u32, _c: &TcpConn) {}
    /// Connections labelled `flow` belong to an application whose segments carry at most `mss`
    /// bytes and whose ends announce the window scale `wscale` (for what a capture writes in
    /// their SYN and in the window field after it).
    fn describe(&mut self, _flow: u32, _mss: u64, _wscale: Option<u8>) {}
    /// The instrument itself, for the world to take back what it recorded when the run ends.
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// The run's instruments, called in the order they were added.
#[derive(Default)]
pub struct Observers {
    list: Vec<Box<dyn Observer>>,
}

impl Observers {
    pub fn push(&mut self, o: Box<dyn Observer>) {
        self.list.push(o);
    }

    /// Take out the instrument of type `T`, if the run has one.
    pub fn take<T: Observer + 'static>(&mut self) -> Option<Box<T>> {
        let i = self.list.iter().position(|o| o.as_any().is::<T>())?;
        self.list.remove(i).into_any().downcast::<T>().ok()
    }

    #[inline]
    pub fn on_conn(&mut self, now: Time, label: Label, dir: Dir, node: u32, peer: u32, c: &TcpConn) {
        for o in &mut self.list {
            o.on_conn(now, label, dir, node, peer, c);
        }
    }

    pub fn describe(&mut self, flow: u32, mss: u64, wscale: Option<u8>) {
        for o in &mut self.list {
            o.describe(flow, mss, wscale);
        }
    }
}

impl NetObserver for Observers {
    #[inline]
    fn active(&self) -> bool {
        !self.list.is_empty()
    }
    fn on_send(&mut self, now: Time, p: &Packet, first: Option<&LinkDir>) {
        for o in &mut self.list {
            o.on_send(now, p, first);
        }
    }
    fn on_ingress(&mut self, now: Time, l: usize, p: &Packet, links: &[LinkDir]) {
        for o in &mut self.list {
            o.on_ingress(now, l, p, links);
        }
    }
    fn on_drop(&mut self, now: Time, l: usize, p: &Packet, why: DropReason) {
        for o in &mut self.list {
            o.on_drop(now, l, p, why);
        }
    }
    fn on_queue(&mut self, now: Time, l: usize, link: &LinkDir) {
        for o in &mut self.list {
            o.on_queue(now, l, link);
        }
    }
    fn on_egress(&mut self, now: Time, l: usize, p: &Packet, links: &[LinkDir]) {
        for o in &mut self.list {
            o.on_egress(now, l, p, links);
        }
    }
    fn on_node(&mut self, now: Time, node: u32, p: &Packet, from: Option<&LinkDir>) {
        for o in &mut self.list {
            o.on_node(now, node, p, from);
        }
    }
    fn on_deliver(&mut self, now: Time, p: &Packet) {
        for o in &mut self.list {
            o.on_deliver(now, p);
        }
    }
}
