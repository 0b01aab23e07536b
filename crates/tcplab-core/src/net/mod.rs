//! The network: packets, links with one queue per direction, queue disciplines, loss elements,
//! drop filters, and static shortest-path routing.

pub mod filter;
pub mod link;
pub mod packet;
pub mod red;
pub mod routing;

pub use filter::{DelayFilter, DropFilter, FilterKind};
pub use link::{LinkDir, LinkDirId, LinkDirStats, MarkThreshold, QueueLimit};
pub use packet::*;
pub use red::RedSpec;
