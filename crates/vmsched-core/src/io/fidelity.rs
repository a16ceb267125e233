//! The I/O path's fidelity settings: the platform profile keys that switch
//! on finer mechanisms (the front end's per-batch CPU, moderated NIC
//! interrupts, variable costs), and the lognormal draws that make a cost
//! variable.
//!
//! Every key's "off" value gives the model as it was before the key existed,
//! bit for bit: a variable cost with a coefficient of variation of 0 is the
//! constant mean, drawn without touching any random stream.

use super::fastmath;
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
    /// Variabilities (a coefficient of variation of 0 = constant costs).
    pub request_cpu_cv: Variability,
    pub io_cost_cv: Variability,
    pub disk_service_cv: Variability,
}

impl IoFidelity {
    /// From a validated profile.
    pub fn from_params(p: &Params) -> IoFidelity {
        IoFidelity {
            guest_batch_ns: p.int("guest_batch_ns") as u64,
            nic_moderated: p.str("nic_rx_irq") == "moderated",
            nic_irq_interval_ns: (p.float("nic_irq_interval_us") * 1e3).round() as u64,
            request_cpu_cv: Variability::new(p.float("request_cpu_cv")),
            io_cost_cv: Variability::new(p.float("io_cost_cv")),
            disk_service_cv: Variability::new(p.float("disk_service_cv")),
        }
    }
}

/// A cost's variability: lognormal with coefficient of variation `cv`, its
/// parameters computed once (a draw then costs two uniforms, a logarithm, a
/// cosine and an exponential).
///
/// The lognormal is the usual model of service demands that are positive
/// and right-skewed (a few slow requests, most near the median): with
/// σ² = ln(1 + cv²) and μ = ln(mean) − σ²/2 its mean is the cost's mean
/// and its standard deviation `cv` × the mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variability {
    cv: f64,
    /// Whether costs vary at all (`cv` > 0).
    on: bool,
    /// σ = √ln(1 + cv²).
    sigma: f64,
    /// σ²/2.
    half_s2: f64,
}

impl Variability {
    /// The variability of coefficient of variation `cv` (0 or below: none).
    pub fn new(cv: f64) -> Variability {
        let on = cv > 0.0 || cv.is_nan(); // as `!(cv <= 0.0)` was
        let s2 = if on { (1.0 + cv * cv).ln() } else { 0.0 };
        Variability {
            cv,
            on,
            sigma: s2.sqrt(),
            half_s2: s2 / 2.0,
        }
    }

    /// The coefficient of variation.
    pub fn cv(&self) -> f64 {
        self.cv
    }

    /// One cost of mean `mean_ns`, drawn from `rng`; exactly `mean_ns` (and
    /// no draw) when the coefficient of variation is 0, so that constant
    /// costs stay bit for bit what they were.
    #[inline]
    pub fn draw_ns(&self, rng: &mut Rng, mean_ns: u64) -> u64 {
        if !self.on || mean_ns == 0 {
            return mean_ns;
        }
        let u1 = 1.0 - rng.uniform(); // (0, 1]: ln is finite
        let u2 = rng.uniform();
        let mean = mean_ns as f64;
        // Box–Muller with the quick cosine first. It is within
        // COS_TURN_ERROR of the library's, so z within r times that (r is at
        // most √(2·53·ln 2) < 8.6), the exponent within σ times that again
        // (σ < 2.2 for the profiles' cv ≤ 10, < 38 for any finite cv): the
        // cost differs from the library's draw by less than 2·10^−11 of
        // itself. Clear of a half by 2^−30 of itself, both round to the
        // same integer; nearer, the library's draw is made.
        let r = (-2.0 * u1.ln()).sqrt();
        let th = std::f64::consts::TAU * u2;
        let z = r * fastmath::cos_turn(th);
        let x = mean * (self.sigma * z - self.half_s2).exp();
        match round_clear(x) {
            Some(n) => n,
            None => self.library_draw(mean, r, th),
        }
    }

    /// The draw with the library's cosine (rare: see `draw_ns`).
    #[cold]
    #[inline(never)]
    fn library_draw(&self, mean: f64, r: f64, th: f64) -> u64 {
        let z = r * th.cos();
        round_to_u64(mean * (self.sigma * z - self.half_s2).exp())
    }

    /// The sum of `n` independent [`Variability::draw_ns`] draws (`n` items
    /// of one cost).
    #[inline]
    pub fn sum_ns(&self, rng: &mut Rng, n: u64, mean_ns: u64) -> u64 {
        if !self.on || mean_ns == 0 {
            return n * mean_ns;
        }
        let mut sum = 0u64;
        for _ in 0..n {
            sum += self.draw_ns(rng, mean_ns);
        }
        sum
    }
}

/// The relative margin of [`round_clear`]: 2^−30, more than forty times
/// the largest relative difference the quick cosine can make in a draw
/// (its error, times r < 8.6, times σ < 38, with room for the roundings).
const CLEAR: f64 = 1.0 / (1u64 << 30) as f64;
const _: () = assert!(fastmath::COS_TURN_ERROR * 8.6 * 38.0 * 40.0 < CLEAR);

/// `x.round() as u64` when `x` is in [0, 2^51) and farther than
/// `x`·2^−30 + 2^−40 from a half; `None` otherwise (NaN too).
#[inline]
fn round_clear(x: f64) -> Option<u64> {
    const LIMIT: f64 = (1u64 << 51) as f64;
    if !(0.0..LIMIT).contains(&x) {
        return None;
    }
    let whole = x as i64;
    let frac = x - whole as f64;
    let margin = x * CLEAR + 1.0 / (1u64 << 40) as f64;
    if (frac - 0.5).abs() <= margin {
        return None;
    }
    Some((if frac > 0.5 { whole + 1 } else { whole }) as u64)
}

/// `x.round() as u64` (halves away from zero), without the library call
/// that `f64::round` costs on the baseline x86-64 target: below 2^52 a
/// non-negative float's integer part and fraction are exact.
#[inline]
fn round_to_u64(x: f64) -> u64 {
    const EXACT: f64 = (1u64 << 52) as f64;
    if !(0.0..EXACT).contains(&x) {
        return x.round() as u64;
    }
    // Through i64: one conversion instruction each way (x < 2^52).
    let whole = x as i64;
    (if x - whole as f64 >= 0.5 {
        whole + 1
    } else {
        whole
    }) as u64
}

/// A lognormally distributed duration with mean `mean_ns` and coefficient
/// of variation `cv`, drawn from `rng` (see [`Variability`]; a caller that
/// draws often keeps a [`Variability`] instead).
pub fn vary_ns(rng: &mut Rng, mean_ns: u64, cv: f64) -> u64 {
    Variability::new(cv).draw_ns(rng, mean_ns)
}

/// The sum of `n` independent [`vary_ns`] draws (`n` items of one cost).
pub fn vary_sum_ns(rng: &mut Rng, n: u64, mean_ns: u64, cv: f64) -> u64 {
    Variability::new(cv).sum_ns(rng, n, mean_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draw as first written, with the library's functions throughout:
    /// a standard normal by Box–Muller (one of the pair, two uniforms), then
    /// the lognormal of mean `mean_ns`.
    fn library_draw(rng: &mut Rng, mean_ns: u64, cv: f64) -> u64 {
        if cv <= 0.0 || mean_ns == 0 {
            return mean_ns;
        }
        let s2 = (1.0 + cv * cv).ln();
        let u1 = 1.0 - rng.uniform();
        let u2 = rng.uniform();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        (mean_ns as f64 * (s2.sqrt() * z - s2 / 2.0).exp()).round() as u64
    }

    /// Every draw equals the library's, bit for bit, over millions of
    /// draws of the profiles' CVs and means from 1 ns to 10 s, and the sums
    /// too; the stream is left in the same state.
    #[test]
    fn draws_equal_the_library_draws() {
        let means = [
            1u64,
            7,
            150,
            12_000,
            20_113,
            507_035,
            4_000_000,
            10_000_000_000,
        ];
        for (i, cv) in [0.0, 0.05, 0.1, 0.2, 0.3, 1.3, 10.0]
            .into_iter()
            .enumerate()
        {
            let v = Variability::new(cv);
            let (mut a, mut b) = (Rng::new(3, i as u64), Rng::new(3, i as u64));
            for k in 0..400_000usize {
                let m = means[k % means.len()];
                assert_eq!(
                    v.draw_ns(&mut a, m),
                    library_draw(&mut b, m, cv),
                    "cv {cv} mean {m} draw {k}"
                );
            }
            let n = 17;
            let want: u64 = (0..n).map(|_| library_draw(&mut b, 12_000, cv)).sum();
            assert_eq!(v.sum_ns(&mut a, n, 12_000), want);
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    /// Values that fall next to a half take the library's path: exactly
    /// halves, and their neighbours.
    #[test]
    fn rounding_near_halves() {
        for x in [
            0.5,
            1.5,
            2.5,
            12_000.5,
            12_000.499_999_999,
            1e15 + 0.5,
            3e15,
            1e300,
        ] {
            assert_eq!(round_clear(x), None, "{x}");
            assert_eq!(round_to_u64(x), x.round() as u64, "{x}");
        }
        for x in [0.0, 0.4, 0.6, 12_000.25, 12_000.75, 1e6 + 0.1] {
            assert_eq!(round_clear(x), Some(x.round() as u64), "{x}");
            assert_eq!(round_to_u64(x), x.round() as u64, "{x}");
        }
        assert_eq!(round_clear(f64::NAN), None);
        assert_eq!(round_clear(-1.0), None);
    }
}
