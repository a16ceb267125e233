//! A driver domain's backend for one guest (netback and blkback together).
//!
//! Items a guest signals wait in `pending` until the backend runs; a run
//! takes everything pending as one batch, so that a driver domain that runs
//! less often handles more items per run and pays its per-batch overhead
//! less often. The engine's side (`engine/io.rs`) starts and ends batches.

use super::IoReq;

/// The backend a driver domain runs for one guest (netback + blkback).
#[derive(Clone, Debug, Default)]
pub struct Backend {
    /// Items signalled and not yet taken into a batch.
    pub pending: Vec<IoReq>,
    /// The items of the pass being processed.
    pub batch: Vec<IoReq>,
    /// A backend work item exists (queued or running).
    pub active: bool,
}
