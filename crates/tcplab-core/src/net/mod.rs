//! The network: packets, links with one queue per direction, queue disciplines, loss elements,
//! drop filters, static shortest-path routing, and the fabric that moves packets over them
//! (`fabric.rs`), telling instruments through one interface (`observe.rs`).

pub mod fabric;
pub mod filter;
pub mod fq;
pub mod link;
pub mod observe;
pub mod packet;
pub mod red;
pub mod routing;
pub mod vfifo;

pub use fabric::{Fabric, NetEv};
pub use observe::NetObserver;
pub use filter::{DelayFilter, DropFilter, FilterKind};
pub use fq::{FqSpec, FqStats};
pub use link::{LinkDir, LinkDirId, LinkDirStats, MarkThreshold, QueueLimit};
pub use packet::*;
pub use red::RedSpec;
