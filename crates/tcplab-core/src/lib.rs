//! tcplab-core: a packet-level simulator of TCP start-up, congestion control and loss recovery.
//!
//! A scenario (TOML or JSON, `scenario`) is validated once, expanded into a world of nodes, links
//! and connections (`world`), run by a discrete-event engine with integer-nanosecond time
//! (`engine`), and returns columnar instruments (`result`).

pub mod app;
pub mod conns;
pub mod engine;
pub mod error;
pub mod footprint;
pub mod input;
pub mod net;
pub mod observe;
pub mod scenario;
pub mod scripted;
pub mod series;
pub mod tcp;
pub mod template;
pub mod tbit;
pub mod trace;
pub mod units;
pub mod result;
pub mod rv;
pub mod world;

pub use result::RunResult;
pub use error::ScenarioError;
pub use scenario::Scenario;
pub use engine::{Budget, Limit, LimitHit, RunError};
pub use world::{run, run_limited, World};

/// The crate version, recorded with every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
