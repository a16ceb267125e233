//! The sampled time series: one row per (sample time, domain or VCPU).
//!
//! Columns are kept in the types they are computed in (shares in `f32`,
//! counts in `u64`), so that handing them to Arrow/Parquet is a copy of each
//! column's bytes, not a conversion per value. The I/O counters are the
//! domain's (a backend serves a domain, not one of its VCPUs): they are kept
//! for domain rows only, one entry per domain row in row order, and a VCPU
//! row has none.

/// Columnar storage of the time series. A row with `vcpu == -1` is a domain row.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Sample time (end of the interval), seconds since the run started.
    pub time_s: Vec<f64>,
    /// Domain index.
    pub domain: Vec<u32>,
    /// VCPU number within the domain, or -1 on domain rows.
    pub vcpu: Vec<i32>,
    /// Share of the interval spent running (100 = one PCPU).
    pub cpu_pct: Vec<f32>,
    /// Share spent runnable but waiting (xentop's "waited"; CPU ready).
    pub runnable_pct: Vec<f32>,
    /// Share spent blocked (nothing to do).
    pub blocked_pct: Vec<f32>,
    /// Times switched onto a PCPU during the interval (XenMon's executions);
    /// a domain row sums its VCPUs.
    pub executions: Vec<u64>,
    /// The domain's I/O during the interval, one entry per domain row.
    pub io: IoColumns,
}

/// A domain's I/O counters over one sample interval, as deltas of the
/// summary's cumulative counters (`xenmon.io_count` and the `xentop` ones).
#[derive(Clone, Debug, Default)]
pub struct IoColumns {
    /// XenMon's I/O count (for the driver domain: every event its backends handled).
    pub io_count: Vec<u64>,
    /// Packets and payload bytes the backend passed to the guest (xentop's
    /// NETTX: the backend's view).
    pub nettx_pkts: Vec<u64>,
    pub nettx_bytes: Vec<u64>,
    /// Packets and payload bytes the guest sent through the backend (NETRX).
    pub netrx_pkts: Vec<u64>,
    pub netrx_bytes: Vec<u64>,
    /// Disk read and write requests completed (VBD_RD, VBD_WR).
    pub vbd_rd: Vec<u64>,
    pub vbd_wr: Vec<u64>,
}

/// One domain's cumulative I/O counters at a sample, in [`IoColumns`]' order.
pub type IoCounters = [u64; 7];

impl IoColumns {
    /// Append one domain row's interval counters.
    pub fn push(&mut self, c: IoCounters) {
        self.io_count.push(c[0]);
        self.nettx_pkts.push(c[1]);
        self.nettx_bytes.push(c[2]);
        self.netrx_pkts.push(c[3]);
        self.netrx_bytes.push(c[4]);
        self.vbd_rd.push(c[5]);
        self.vbd_wr.push(c[6]);
    }

    /// The columns by name, in order.
    pub fn named(&self) -> [(&'static str, &[u64]); 7] {
        [
            ("io_count", &self.io_count),
            ("nettx_pkts", &self.nettx_pkts),
            ("nettx_bytes", &self.nettx_bytes),
            ("netrx_pkts", &self.netrx_pkts),
            ("netrx_bytes", &self.netrx_bytes),
            ("vbd_rd", &self.vbd_rd),
            ("vbd_wr", &self.vbd_wr),
        ]
    }
}

impl Series {
    /// Append one row.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        t: f64,
        dom: u32,
        vcpu: i32,
        cpu: f32,
        runnable: f32,
        blocked: f32,
        executions: u64,
    ) {
        self.time_s.push(t);
        self.domain.push(dom);
        self.vcpu.push(vcpu);
        self.cpu_pct.push(cpu);
        self.runnable_pct.push(runnable);
        self.blocked_pct.push(blocked);
        self.executions.push(executions);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time_s.len()
    }

    /// No rows?
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }

    /// Bytes the columns hold.
    pub fn heap_bytes(&self) -> usize {
        let rows = self.time_s.capacity() * 8
            + self.domain.capacity() * 4
            + self.vcpu.capacity() * 4
            + (self.cpu_pct.capacity()
                + self.runnable_pct.capacity()
                + self.blocked_pct.capacity())
                * 4
            + self.executions.capacity() * 8;
        let io: usize = self.io.named().iter().map(|(_, c)| c.len() * 8).sum();
        rows + io
    }
}
