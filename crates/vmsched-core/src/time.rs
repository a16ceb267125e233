//! Simulated time: an integer count of nanoseconds since the start of the run.
//!
//! Floats never enter the engine; conversion to seconds or percentages happens
//! only at the edges (metrics output, scenario input).

/// Nanoseconds in one microsecond.
pub const NS_PER_US: u64 = 1_000;
/// Nanoseconds in one millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds in one second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// An instant of simulated time, in nanoseconds since the run started.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    /// The start of the run.
    pub const ZERO: Time = Time(0);

    /// Nanoseconds since the start of the run.
    #[inline]
    pub fn ns(self) -> u64 {
        self.0
    }

    /// Seconds since the start of the run, for output only.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }

    /// `self + d` nanoseconds, saturating at the end of representable time.
    #[inline]
    pub fn after(self, d_ns: u64) -> Time {
        Time(self.0.saturating_add(d_ns))
    }

    /// Nanoseconds from `earlier` to `self` (0 if `earlier` is later).
    #[inline]
    pub fn since(self, earlier: Time) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// Milliseconds to nanoseconds.
#[inline]
pub const fn ms(x: u64) -> u64 {
    x * NS_PER_MS
}

/// Microseconds to nanoseconds.
#[inline]
pub const fn us(x: u64) -> u64 {
    x * NS_PER_US
}

/// Seconds (a float from a scenario file) to nanoseconds, rounded to the nearest ns.
#[inline]
pub fn secs_f64(x: f64) -> u64 {
    (x * NS_PER_S as f64).round() as u64
}
