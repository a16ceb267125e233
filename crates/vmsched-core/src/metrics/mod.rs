//! Measurement: wake-up latency and response-time histograms, per-VCPU
//! state accounting and the sampled time series.

mod hist;
mod parquet;
mod series;

pub use hist::{LatencyHistogram, ResponseHistogram};
pub use parquet::{series_parquet, write_series_parquet};
pub use series::{IoColumns, IoCounters, Series};
