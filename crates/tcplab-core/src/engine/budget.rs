//! Limits on one run: a wall-clock deadline and a number of events. The event loop checks them
//! once per slice of events, so that a sweep can stop a run that would take hours, record why,
//! and go on, without the per-packet path paying for the check.

use std::fmt;
use std::time::{Duration, Instant};

/// Events processed between two checks. `Instant::now()` costs tens of nanoseconds and an event a
/// hundred or more, so a check per 4096 events costs well under 0.1 % and stops a run within
/// about a millisecond of its deadline.
pub const CHECK_EVERY: u64 = 4096;

/// What a run may spend. The default is no limit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget {
    /// Wall-clock deadline, counted from `started`.
    pub deadline: Option<Instant>,
    /// The run may process at most this many events.
    pub max_events: Option<u64>,
    /// When the wall clock started (to report the time spent).
    pub started: Option<Instant>,
}

impl Budget {
    /// A budget of `max_wall` from now and/or `max_events` events. A wall time past the clock's
    /// range (about 9.2e18 s) is no deadline at all (`Instant + Duration` would panic).
    pub fn new(max_wall: Option<Duration>, max_events: Option<u64>) -> Budget {
        let now = Instant::now();
        Budget { deadline: max_wall.and_then(|d| now.checked_add(d)), max_events, started: Some(now) }
    }

    pub fn is_unlimited(&self) -> bool {
        self.deadline.is_none() && self.max_events.is_none()
    }

    /// How many events may run before the next check, after `done` events.
    pub(crate) fn slice(&self, done: u64) -> u64 {
        match self.max_events {
            Some(m) => CHECK_EVERY.min(m.saturating_sub(done)),
            None => CHECK_EVERY,
        }
    }

    /// Is the wall-clock deadline past?
    pub(crate) fn wall_exceeded(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    pub(crate) fn hit(&self, limit: Limit, events: u64, sim_time_s: f64) -> LimitHit {
        let wall_time_s = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        let allowed = match limit {
            Limit::MaxWall => match (self.deadline, self.started) {
                (Some(d), Some(s)) => d.duration_since(s).as_secs_f64(),
                _ => 0.0,
            },
            Limit::MaxEvents => self.max_events.unwrap_or(0) as f64,
            Limit::Memory => 0.0,
        };
        LimitHit { limit, allowed, events, sim_time_s, wall_time_s }
    }
}

/// Which limit stopped a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    MaxWall,
    MaxEvents,
    /// What the run holds at once (queued and in-flight packets) grew past what the memory
    /// limit (footprint.rs) leaves above the built world.
    Memory,
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::MaxWall => "max_wall",
            Limit::MaxEvents => "max_events",
            Limit::Memory => "memory",
        }
    }
}

/// A run stopped by its budget before it was over: where it had got to.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitHit {
    pub limit: Limit,
    /// The limit: seconds of wall time, or a number of events.
    pub allowed: f64,
    /// Events processed, simulated time reached and wall time spent when it stopped.
    pub events: u64,
    pub sim_time_s: f64,
    pub wall_time_s: f64,
}

impl fmt::Display for LimitHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.limit {
            Limit::MaxWall => format!("its wall-time limit of {} s", self.allowed),
            Limit::MaxEvents => format!("its limit of {} events", self.allowed),
            Limit::Memory => format!(
                "its memory limit: the packets held in queues and on links outgrew the {:.0} MiB the memory limit leaves \
                 above the world (TCPLAB_MAX_MEMORY, or the machine's, address-space or cgroup limit); a queue without a \
                 limit is fed faster than it drains: give it a `queue` size",
                self.allowed / (1u64 << 20) as f64
            ),
        };
        write!(
            f,
            "run stopped at {what} before it was over: {} events, {:.6} s simulated, {:.3} s wall time",
            self.events, self.sim_time_s, self.wall_time_s
        )
    }
}

/// Why a limited run gave no result: its scenario is invalid, or it hit a limit.
#[derive(Clone, Debug)]
pub enum RunError {
    Invalid(crate::error::ScenarioError),
    Limit(LimitHit),
}

impl From<crate::error::ScenarioError> for RunError {
    fn from(e: crate::error::ScenarioError) -> Self {
        RunError::Invalid(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_end_exactly_at_the_event_limit() {
        let b = Budget::new(None, Some(10_000));
        assert_eq!(b.slice(0), CHECK_EVERY);
        assert_eq!(b.slice(8192), 10_000 - 8192);
        assert_eq!(b.slice(10_000), 0);
        assert_eq!(Budget::default().slice(u64::MAX), CHECK_EVERY);
    }

    #[test]
    fn a_deadline_in_the_past_is_exceeded_and_none_never_is() {
        assert!(Budget::new(Some(Duration::ZERO), None).wall_exceeded());
        assert!(!Budget::new(Some(Duration::from_secs(3600)), None).wall_exceeded());
        assert!(!Budget::default().wall_exceeded());
        assert!(Budget::default().is_unlimited());
        // A wall time past the clock's range is no deadline, not a panic.
        assert!(!Budget::new(Some(Duration::MAX), None).wall_exceeded());
        assert!(!Budget::new(Some(Duration::from_secs_f64(1e19)), None).wall_exceeded());
    }
}
