//! The discrete-event engine: an integer-nanosecond clock, an event queue with deterministic
//! tie-breaking, lazily cancelled timers, and seeded per-component random streams.

pub mod budget;
pub mod heap;
pub mod queue;
pub mod rng;
pub mod timer;

pub use budget::{Budget, Limit, LimitHit, RunError};
pub use queue::EventQueue;
pub use rng::{stream_seed, RngStream};
pub use timer::{Timer, TimerFire};
