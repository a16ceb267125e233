//! The I/O path's fidelity settings: the platform profile keys that switch
//! on finer mechanisms (the front end's per-batch CPU, moderated NIC
//! interrupts, variable costs), and the lognormal draws that make a cost
//! variable.
//!
//! Every key's "off" value gives the model as it was before the key existed,
//! bit for bit: a variable cost with a coefficient of variation of 0 is the
//! constant mean, drawn without touching any random stream.

use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::rng::Rng;

/// Profile key: the guest front end's CPU per backend batch delivered to it.
pub const PROFILE_GUEST_BATCH: ParamSpec = ParamSpec {
    name: "guest_batch_ns",
    unit: "ns",
    kind: ParamKind::Int {
        min: 0,
        max: 1_000_000_000,
    },
    default: Default::Int(0),
    scope: ParamScope::Global,
    doc: "Guest CPU per backend batch delivered to it (upcall, remap multicall, buffer refill, softirq, notify); 0 = off.",
};

/// Profile key: how received packets raise the NIC's interrupts.
pub const PROFILE_NIC_RX_IRQ: ParamSpec = ParamSpec {
    name: "nic_rx_irq",
    unit: "",
    kind: ParamKind::Choice(&["per-message", "moderated"]),
    default: Default::Str("per-message"),
    scope: ParamScope::Global,
    doc: "per-message: a message's packets arrive together and raise one interrupt; moderated: each packet arrives on its own, interrupts at most one per nic_irq_interval_us.",
};

/// Profile key: the NIC's interrupt moderation interval.
pub const PROFILE_NIC_IRQ_INTERVAL: ParamSpec = ParamSpec {
    name: "nic_irq_interval_us",
    unit: "µs",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1_000_000.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "With nic_rx_irq = moderated: least time between two receive interrupts (e1000's 1/InterruptThrottleRate); 0 = one interrupt per packet.",
};

/// Profile key: variability of the per-request application CPU.
pub const PROFILE_REQUEST_CPU_CV: ParamSpec = ParamSpec {
    name: "request_cpu_cv",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "Coefficient of variation of each request's or transaction's application CPU (lognormal, mean kept); 0 = constant.",
};

/// Profile key: variability of the per-item I/O CPU costs.
pub const PROFILE_IO_COST_CV: ParamSpec = ParamSpec {
    name: "io_cost_cv",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "Coefficient of variation of each packet's and disk request's CPU cost, in the backends and the front ends (lognormal, mean kept); 0 = constant.",
};

/// Profile key: variability of the disk's service times.
pub const PROFILE_DISK_SERVICE_CV: ParamSpec = ParamSpec {
    name: "disk_service_cv",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "Coefficient of variation of each disk request's service time (lognormal, mean kept); 0 = the deterministic seek/rotation/transfer model.",
};

/// The I/O path's fidelity settings of a platform profile. Each one's "off"
/// value (0, `per-message`) gives the model as it was before it existed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IoFidelity {
    /// Guest CPU per backend batch delivered to the guest (its front end's
    /// upcall, page remapping, buffer refill, softirq and notification).
    pub guest_batch_ns: u64,
    /// Packets arrive one by one and raise moderated interrupts (instead of
    /// a message's packets arriving, and interrupting, together).
    pub nic_moderated: bool,
    /// With `nic_moderated`: least time between two receive interrupts.
    pub nic_irq_interval_ns: u64,
    /// Coefficients of variation (0 = constant costs).
    pub request_cpu_cv: f64,
    pub io_cost_cv: f64,
    pub disk_service_cv: f64,
}

impl IoFidelity {
    /// From a validated profile.
    pub fn from_params(p: &Params) -> IoFidelity {
        IoFidelity {
            guest_batch_ns: p.int("guest_batch_ns") as u64,
            nic_moderated: p.str("nic_rx_irq") == "moderated",
            nic_irq_interval_ns: (p.float("nic_irq_interval_us") * 1e3).round() as u64,
            request_cpu_cv: p.float("request_cpu_cv"),
            io_cost_cv: p.float("io_cost_cv"),
            disk_service_cv: p.float("disk_service_cv"),
        }
    }
}

/// A lognormally distributed duration with mean `mean_ns` and coefficient
/// of variation `cv`, drawn from `rng`; exactly `mean_ns` (and no draw) when
/// `cv` is 0, so that constant costs stay bit for bit what they were.
///
/// The lognormal is the usual model of service demands that are positive
/// and right-skewed (a few slow requests, most near the median): with
/// σ² = ln(1 + cv²) and μ = ln(mean) − σ²/2 its mean is `mean_ns` and its
/// standard deviation `cv × mean_ns`.
pub fn vary_ns(rng: &mut Rng, mean_ns: u64, cv: f64) -> u64 {
    if cv <= 0.0 || mean_ns == 0 {
        return mean_ns;
    }
    let s2 = (1.0 + cv * cv).ln();
    let z = standard_normal(rng);
    (mean_ns as f64 * (s2.sqrt() * z - s2 / 2.0).exp()).round() as u64
}

/// A standard normal draw (Box–Muller, one of the pair: two uniforms per draw).
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.uniform(); // (0, 1]: ln is finite
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The sum of `n` independent [`vary_ns`] draws (`n` items of one cost).
pub fn vary_sum_ns(rng: &mut Rng, n: u64, mean_ns: u64, cv: f64) -> u64 {
    if cv <= 0.0 || mean_ns == 0 {
        return n * mean_ns;
    }
    // `vary_ns`'s arithmetic, with the parameters of the lognormal worked
    // out once for the `n` draws (the same operations on the same values,
    // so the same results bit for bit).
    let s2 = (1.0 + cv * cv).ln();
    let (sd, half) = (s2.sqrt(), s2 / 2.0);
    let mean = mean_ns as f64;
    (0..n)
        .map(|_| {
            let z = standard_normal(rng);
            (mean * (sd * z - half).exp()).round() as u64
        })
        .sum()
}
