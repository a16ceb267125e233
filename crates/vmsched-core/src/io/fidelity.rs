//! The I/O path's fidelity settings: the platform profile keys that switch
//! on finer mechanisms (the front end's per-batch CPU, moderated NIC
//! interrupts, variable costs), and the lognormal draws that make a cost
//! variable.
//!
//! Every key's "off" value gives the model as it was before the key existed,
//! bit for bit: a variable cost with a coefficient of variation of 0 is the
//! constant mean, drawn without touching any random stream.

use super::{fastmath, normal};
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
/// parameters computed once (a draw then costs a standard normal, an
/// exponential and a rounding).
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
                                          // The crate's own logarithm (the same bits everywhere: see
                                          // `fastmath`); the square root is exact by IEEE 754.
        let s2 = if on { fastmath::ln(1.0 + cv * cv) } else { 0.0 };
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
    ///
    /// round(mean·e^(σz − σ²/2)) with z a standard normal by the ziggurat
    /// method ([`super::normal`]) and the crate's own exponential: every
    /// step is IEEE arithmetic, so a draw is the same on every machine.
    #[inline(always)]
    pub fn draw_ns(&self, rng: &mut Rng, mean_ns: u64) -> u64 {
        if !self.on || mean_ns == 0 {
            return mean_ns;
        }
        let z = normal::standard_normal(rng);
        round_to_u64(mean_ns as f64 * fastmath::exp(self.sigma * z - self.half_s2))
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

/// How many standard normals a [`CostStream`] draws at once.
const AHEAD: usize = 16;

/// A domain's stream of variable costs: its random stream, drawn
/// [`AHEAD`] standard normals at a time, with their lognormal factors
/// e^(σz − σ²/2) for the variability whose draw found none left (another
/// variability computes its own factor from the normal).
///
/// Every draw of the stream is a standard normal (all its users are
/// [`Variability`]'s draws), so drawing ahead takes the same words in the
/// same order: the k-th value used is the k-th the stream gives, whichever
/// variability uses it, and every cost is bit for bit what
/// [`Variability::draw_ns`] gives from the bare stream (a test compares
/// them). What it saves is instructions (about a third of a draw's): the
/// normals are made in a tight loop with the stream's state in registers,
/// and the factors' exponentials, each a chain of some fifteen dependent
/// operations, are computed sixteen at a time (two per vector
/// instruction) instead of one at a time in the middle of an event.
#[derive(Clone, Debug)]
pub struct CostStream {
    rng: Rng,
    /// Standard normals drawn ahead, in the stream's order.
    z: [f64; AHEAD],
    /// e^(σz − σ²/2) of each, for the variability of `sigma_bits` and
    /// `half_s2_bits`.
    factor: [f64; AHEAD],
    sigma_bits: u64,
    half_s2_bits: u64,
    /// The next value to use (`AHEAD`: none left).
    next: usize,
}

impl CostStream {
    /// The costs drawn from `rng` (nothing is drawn before the first use).
    pub fn new(rng: Rng) -> CostStream {
        CostStream {
            rng,
            z: [0.0; AHEAD],
            factor: [0.0; AHEAD],
            sigma_bits: 0,
            half_s2_bits: 0,
            next: AHEAD,
        }
    }

    /// The lognormal factor e^(σz − σ²/2) of the stream's next standard
    /// normal z, for the (varying) variability `v`.
    #[inline(always)]
    fn next_factor(&mut self, v: &Variability) -> f64 {
        if self.next >= AHEAD {
            self.refill(v);
        }
        // Below `AHEAD` here: the mask only spares a bounds check.
        let k = self.next & (AHEAD - 1);
        self.next += 1;
        if self.drawn_for(v) {
            self.factor[k]
        } else {
            self.other_factor(v, k)
        }
    }

    /// The factor of drawn value k for a variability other than the one
    /// the factors are for.
    #[inline(never)]
    fn other_factor(&self, v: &Variability, k: usize) -> f64 {
        fastmath::exp(v.sigma * self.z[k] - v.half_s2)
    }

    /// Whether the factors drawn ahead are for `v`.
    #[inline(always)]
    fn drawn_for(&self, v: &Variability) -> bool {
        v.sigma.to_bits() == self.sigma_bits && v.half_s2.to_bits() == self.half_s2_bits
    }

    /// The next `AHEAD` normals, and their factors for `v` (a loop the
    /// compiler runs two exponentials at a time, with the baseline x86-64
    /// vector instructions: the same operations on the same values, so the
    /// same bits).
    #[inline(never)]
    fn refill(&mut self, v: &Variability) {
        normal::fill_standard_normals(&mut self.rng, &mut self.z);
        let (sigma, half_s2) = (v.sigma, v.half_s2);
        let mut far = false;
        for (f, &z) in self.factor.iter_mut().zip(&self.z) {
            let x = sigma * z - half_s2;
            far |= !fastmath::near(x);
            *f = fastmath::exp_near(x);
        }
        if far {
            for (f, &z) in self.factor.iter_mut().zip(&self.z) {
                *f = fastmath::exp(sigma * z - half_s2);
            }
        }
        self.sigma_bits = sigma.to_bits();
        self.half_s2_bits = half_s2.to_bits();
        self.next = 0;
    }
}

impl Variability {
    /// [`Variability::draw_ns`] from a domain's [`CostStream`]: the same
    /// value, drawn ahead.
    #[inline(always)]
    pub fn draw_from(&self, s: &mut CostStream, mean_ns: u64) -> u64 {
        if !self.on || mean_ns == 0 {
            return mean_ns;
        }
        round_to_u64(mean_ns as f64 * s.next_factor(self))
    }

    /// [`Variability::sum_ns`] from a domain's [`CostStream`].
    #[inline]
    pub fn sum_from(&self, s: &mut CostStream, n: u64, mean_ns: u64) -> u64 {
        if !self.on || mean_ns == 0 {
            return n * mean_ns;
        }
        let mean = mean_ns as f64;
        let mut sum = 0u64;
        for _ in 0..n {
            sum += round_to_u64(mean * s.next_factor(self));
        }
        sum
    }
}

/// x rounded to the nearest integer, ties to even (IEEE 754's own rounding,
/// without a bias either way), as a `u64`; NaN gives 0 and +∞ `u64::MAX`.
/// Adding 2^52 to x in [0, 2^52) rounds it to an integer held in the low
/// bits of the sum's significand: two instructions instead of a conversion
/// and its checks; from 2^52 on every double is an integer already.
#[inline]
fn round_to_u64(x: f64) -> u64 {
    const SHIFT: f64 = (1u64 << 52) as f64;
    if (0.0..SHIFT).contains(&x) {
        return (x + SHIFT).to_bits() - SHIFT.to_bits();
    }
    x as u64
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
    use super::super::normal::reference::{phi, quantile};
    use super::*;

    /// Millions of draws against the lognormal they stand for, at the
    /// profiles' CVs and beyond: the largest gap between the sample's
    /// distribution function and the lognormal's (Kolmogorov–Smirnov) within
    /// what a true lognormal sample shows 999 times in 1,000 (1.95/√n); the
    /// 0.1st to 99.9th percentiles within 4 of their standard errors of the
    /// exact ones (at cv 0.3 that is 0.15 % at the median, 1.1 % at the
    /// 0.1st and 99.9th); the sample
    /// mean within 5 standard errors of the cost's mean and the sample
    /// standard deviation within 3 % of cv times it. The mean of 10 s keeps
    /// the rounding to nanoseconds out of the comparison.
    #[test]
    fn draws_follow_the_lognormal() {
        let mean = 10_000_000_000u64;
        for (i, cv) in [0.05, 0.3, 1.3, 10.0].into_iter().enumerate() {
            let v = Variability::new(cv);
            let mut rng = Rng::new(17, i as u64);
            let n = 1_000_000usize;
            let mut x: Vec<u64> = (0..n).map(|_| v.draw_ns(&mut rng, mean)).collect();
            let nf = n as f64;
            let s2 = (1.0 + cv * cv).ln();
            let (mu, sigma) = ((mean as f64).ln() - s2 / 2.0, s2.sqrt());
            x.sort_unstable();
            let mut ks = 0f64;
            for (k, &d) in x.iter().enumerate() {
                let p = phi(((d as f64).ln() - mu) / sigma);
                ks = ks
                    .max((p - k as f64 / nf).abs())
                    .max(((k + 1) as f64 / nf - p).abs());
            }
            assert!(ks < 1.95 / nf.sqrt(), "cv {cv}: KS distance {ks:e}");
            for q in [0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999] {
                let got = x[(q * nf) as usize] as f64;
                let zq = quantile(q);
                let want = (mu + sigma * zq).exp();
                // The sample quantile's standard error, on the log scale.
                let pdf = (-0.5 * zq * zq).exp() / (2.0 * std::f64::consts::PI).sqrt();
                let se = sigma * (q * (1.0 - q) / nf).sqrt() / pdf;
                assert!(
                    (got.ln() - want.ln()).abs() < 4.0 * se,
                    "cv {cv} q{q}: {got} vs {want}"
                );
            }
            // The moments, for the CVs where the sample's are stable (at
            // cv 10 the sample variance is dominated by a few draws).
            if cv <= 1.3 {
                let m = x.iter().map(|&d| d as f64).sum::<f64>() / nf;
                let sd = (x.iter().map(|&d| (d as f64 - m).powi(2)).sum::<f64>() / nf).sqrt();
                let want_sd = cv * mean as f64;
                assert!(
                    (m / mean as f64 - 1.0).abs() < 5.0 * cv / nf.sqrt(),
                    "cv {cv}: mean {m}"
                );
                assert!(
                    (sd / want_sd - 1.0).abs() < 0.03,
                    "cv {cv}: sd {sd} vs {want_sd}"
                );
            }
        }
    }

    /// At a mean of microseconds, where each draw is rounded to a whole
    /// nanosecond, the mean is still the cost's (within 5 standard errors),
    /// and small means stay non-negative integers around themselves.
    #[test]
    fn rounded_draws_keep_the_mean() {
        for (i, mean) in [7u64, 150, 20_113, 507_035].into_iter().enumerate() {
            let v = Variability::new(0.3);
            let mut rng = Rng::new(23, i as u64);
            let n = 400_000u64;
            let sum: u64 = (0..n).map(|_| v.draw_ns(&mut rng, mean)).sum();
            let m = sum as f64 / n as f64;
            // The rounding adds at most ±½ ns per draw to the spread.
            let se = (0.3 * mean as f64 + 0.5) / (n as f64).sqrt();
            assert!((m - mean as f64).abs() < 5.0 * se, "mean {mean}: {m}");
        }
    }

    /// A coefficient of variation of 0 draws nothing: the mean itself and
    /// the stream untouched; a sum is the draws one after the other.
    #[test]
    fn constant_costs_draw_nothing_and_sums_are_draws() {
        let off = Variability::new(0.0);
        let (mut a, mut b) = (Rng::new(3, 1), Rng::new(3, 1));
        assert_eq!(off.draw_ns(&mut a, 12_345), 12_345);
        assert_eq!(off.sum_ns(&mut a, 17, 12_345), 17 * 12_345);
        assert_eq!(a.next_u64(), b.next_u64());
        let on = Variability::new(0.3);
        let want: u64 = (0..17).map(|_| on.draw_ns(&mut b, 12_000)).sum();
        assert_eq!(on.sum_ns(&mut a, 17, 12_000), want);
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(on.draw_ns(&mut a, 0), 0);
    }

    /// A cost stream gives the bare stream's draws bit for bit, whichever
    /// variabilities take turns on it (the factors drawn ahead are for
    /// one of them; the others compute theirs), across many refills, with
    /// means from 1 ns to far beyond 2^52 ns, and with a variability whose
    /// exponents leave [−708, 708] (the refill's slow case).
    #[test]
    fn a_cost_stream_draws_what_the_bare_stream_draws() {
        let vs = [
            Variability::new(0.1),
            Variability::new(0.3),
            Variability::new(0.2),
            Variability::new(0.0),
            Variability::new(10.0),
            // Half of its exponents σz are beyond ±708.
            Variability {
                cv: f64::INFINITY,
                on: true,
                sigma: 1_000.0,
                half_s2: 0.0,
            },
        ];
        let mut bare = Rng::new(29, 4);
        let mut s = CostStream::new(Rng::new(29, 4));
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let (mut zero, mut inf) = (0usize, 0usize);
        for k in 0..400_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly the first variability, as in a run (packets).
            let v = if x % 8 < 5 {
                &vs[0]
            } else {
                &vs[(x >> 8) as usize % vs.len()]
            };
            let mean = [0, 1, 7, 5_000, 20_113_000, 1 << 53][(x >> 20) as usize % 6];
            if x >> 40 & 3 == 0 {
                let n = (x >> 44) % 5;
                let (got, want) = (v.sum_from(&mut s, n, mean), v.sum_ns(&mut bare, n, mean));
                assert_eq!(got, want, "draw {k}: sum of {n} of {mean}");
            } else {
                let (got, want) = (v.draw_from(&mut s, mean), v.draw_ns(&mut bare, mean));
                assert_eq!(got, want, "draw {k}: {mean}");
                zero += usize::from(want == 0 && mean > 0);
                inf += usize::from(want == u64::MAX);
            }
        }
        assert!(zero > 1_000 && inf > 1_000, "{zero} zeros, {inf} overflows");
    }

    /// Rounding: to the nearest integer, ties to even, on either side of
    /// 2^52 and at the limits.
    #[test]
    fn rounding_is_to_nearest_even() {
        for x in [
            0.0,
            0.4,
            0.5,
            0.6,
            1.5,
            2.5,
            12_000.25,
            12_000.5,
            12_000.499_999_999,
            12_001.5,
            12_000.75,
            1e15 + 0.5,
            3e15,
            4503599627370495.5,
            4503599627370497.0,
            1e300,
        ] {
            assert_eq!(round_to_u64(x), x.round_ties_even() as u64, "{x}");
        }
        assert_eq!(round_to_u64(f64::INFINITY), u64::MAX);
        assert_eq!(round_to_u64(f64::NAN), 0);
        assert_eq!(round_to_u64(-3.0), 0);
    }
}
