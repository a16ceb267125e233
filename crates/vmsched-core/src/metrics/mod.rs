//! Measurement: wake-up latency histograms, per-VCPU state accounting and the
//! sampled time series.

mod hist;
mod series;

pub use hist::LatencyHistogram;
pub use series::{IoColumns, IoCounters, Series};
