//! Lazily cancelled timers. A timer remembers its deadline and the time of the one event it has in
//! the queue; moving the deadline later costs nothing (the early event re-arms itself when it
//! fires), moving it earlier schedules one new event, and cancelling only clears the deadline.
//! Stale events are recognised by their time and ignored. This keeps the RTO timer, restarted on
//! every ACK, from flooding the event heap.

use crate::units::Time;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer {
    deadline: Option<Time>,
    armed_at: Option<Time>,
}

/// What a popped timer event means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerFire {
    /// The event is stale (cancelled, or superseded by an earlier one): ignore it.
    Stale,
    /// The deadline moved later: schedule a new event at this time.
    Rearm(Time),
    /// The deadline is now: the timer fires (and is disarmed).
    Fire,
}

impl Timer {
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    pub fn is_set(&self) -> bool {
        self.deadline.is_some()
    }

    /// Set the deadline. Returns the time at which the caller must schedule an event, if any.
    #[must_use]
    pub fn set(&mut self, at: Time) -> Option<Time> {
        self.deadline = Some(at);
        match self.armed_at {
            Some(a) if a <= at => None,
            _ => {
                self.armed_at = Some(at);
                Some(at)
            }
        }
    }

    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    /// Interpret an event scheduled for `at` (which is now).
    pub fn on_event(&mut self, at: Time) -> TimerFire {
        if self.armed_at != Some(at) {
            return TimerFire::Stale;
        }
        self.armed_at = None;
        match self.deadline {
            None => TimerFire::Stale,
            Some(d) if d > at => {
                self.armed_at = Some(d);
                TimerFire::Rearm(d)
            }
            Some(_) => {
                self.deadline = None;
                TimerFire::Fire
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_deadline_rearms_instead_of_scheduling() {
        let mut t = Timer::default();
        assert_eq!(t.set(100), Some(100));
        assert_eq!(t.set(150), None); // later: no new event
        assert_eq!(t.on_event(100), TimerFire::Rearm(150));
        assert_eq!(t.on_event(150), TimerFire::Fire);
        assert!(!t.is_set());
    }

    #[test]
    fn earlier_deadline_schedules_and_old_event_is_stale() {
        let mut t = Timer::default();
        assert_eq!(t.set(100), Some(100));
        assert_eq!(t.set(50), Some(50));
        assert_eq!(t.on_event(50), TimerFire::Fire);
        assert_eq!(t.on_event(100), TimerFire::Stale);
    }

    #[test]
    fn cancel_makes_event_stale() {
        let mut t = Timer::default();
        assert_eq!(t.set(100), Some(100));
        t.cancel();
        assert_eq!(t.on_event(100), TimerFire::Stale);
        assert_eq!(t.set(200), Some(200));
        assert_eq!(t.on_event(200), TimerFire::Fire);
    }
}
