//! The sampled time series: one row per (sample time, domain or VCPU).

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
}

impl Series {
    /// Append one row.
    pub fn push(&mut self, t: f64, dom: u32, vcpu: i32, cpu: f32, runnable: f32, blocked: f32) {
        self.time_s.push(t);
        self.domain.push(dom);
        self.vcpu.push(vcpu);
        self.cpu_pct.push(cpu);
        self.runnable_pct.push(runnable);
        self.blocked_pct.push(blocked);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time_s.len()
    }

    /// No rows?
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}
