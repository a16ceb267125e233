//! Measurement: wake-up latency and response-time histograms, per-VCPU
//! state accounting and the sampled time series.

mod hist;
mod series;

pub use hist::{LatencyHistogram, ResponseHistogram};
pub use series::Series;
