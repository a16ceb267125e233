//! Standard normal draws by the ziggurat method (Marsaglia and Tsang, 2000),
//! for the lognormal variable costs of [`super::fidelity::Variability`].
//!
//! The half density f(x) = e^(−x²/2), x ≥ 0, is covered by 256 layers of
//! equal area v: the base layer is the rectangle [0, r] × [0, f(r)] together
//! with the tail beyond r; layer i (1 to 255) is the rectangle of width xᵢ
//! between the heights f(xᵢ) and f(xᵢ₊₁), with x₁ = r, xᵢ₊₁ = f⁻¹(f(xᵢ) +
//! v/xᵢ) and x₂₅₆ = 0. r ≈ 3.6541528853610088 is the width for which the
//! 255th layer comes out of the recurrence with the area v as well (the
//! layers close at f(0) = 1); the base layer's area gives v = f(r)·(r +
//! m(r)), m the normal's Mills ratio, and its equivalent width x₀ = v/f(r).
//!
//! A draw takes one 64-bit word: 8 bits choose a layer i, one the sign and
//! 53 a uniform u in [0, 1). x = u·xᵢ lies under the curve for sure when
//! x < xᵢ₊₁ (about 99 draws in 100): that is the draw. Otherwise, in a
//! layer above the base, a second uniform places a height y in the layer
//! and x is the draw when y < f(x); in the base, the draw is one from the
//! tail beyond r (Marsaglia's method: a ~ Exp(r), b ~ Exp(1), r + a once
//! 2b > a²). A rejected point starts again with a new word. Every point of
//! the area under f is thus equally likely, and x follows the half normal
//! exactly, up to the rounding of the tables (the test below measures how
//! well the layers close).
//!
//! The tables are computed when the crate is compiled, by the `const`
//! functions of [`super::fastmath`], so they are the same bits everywhere.

use super::fastmath::{exp, ln, sqrt};
use crate::rng::Rng;

const LAYERS: usize = 256;

/// The base layer's right edge (the tail starts here).
const R: f64 = 3.654_152_885_361_009;

/// The half density, unnormalised.
const fn density(x: f64) -> f64 {
    exp(-0.5 * x * x)
}

/// The normal's Mills ratio at x > 0, ∫ₓ^∞ f / f(x), by its continued
/// fraction 1/(x + 1/(x + 2/(x + 3/(x + …)))), evaluated from depth 400
/// (at x = r, far past convergence).
const fn mills_ratio(x: f64) -> f64 {
    let mut t = x;
    let mut k = 400;
    while k > 0 {
        t = x + k as f64 / t;
        k -= 1;
    }
    1.0 / t
}

/// The area of each layer.
const AREA: f64 = density(R) * (R + mills_ratio(R));

/// The ziggurat: the layers' widths `x[0..=256]` (x[0] the base's equivalent
/// width v/f(r), x[1] = r, x[256] = 0) and heights `f[i]` = f(x[i]).
struct Tables {
    x: [f64; LAYERS + 1],
    f: [f64; LAYERS + 1],
}

const fn tables() -> Tables {
    let mut x = [0.0f64; LAYERS + 1];
    let mut f = [0.0f64; LAYERS + 1];
    x[0] = AREA / density(R);
    f[0] = density(x[0]);
    x[1] = R;
    f[1] = density(R);
    let mut i = 1;
    while i < LAYERS - 1 {
        // The top of layer i: f(x[i+1]) = f(x[i]) + v/x[i].
        let top = f[i] + AREA / x[i];
        x[i + 1] = sqrt(-2.0 * ln(top));
        f[i + 1] = density(x[i + 1]);
        i += 1;
    }
    x[LAYERS] = 0.0;
    f[LAYERS] = 1.0;
    Tables { x, f }
}

const TABLES: Tables = tables();
static ZIG: Tables = TABLES;

/// 2^−53: a 53-bit integer times this is a uniform in [0, 1).
const UNIT: f64 = 1.0 / (1u64 << 53) as f64;

/// The widths times 2^−53 (exact: a power of two), so that a 53-bit
/// integer u times `SCALED[i]` is u·2^−53·xᵢ in one product.
static SCALED: [f64; LAYERS] = {
    let mut s = [0.0f64; LAYERS];
    let mut i = 0;
    while i < LAYERS {
        s[i] = TABLES.x[i] * UNIT;
        i += 1;
    }
    s
};

/// One standard normal value drawn from `rng` (one word of the stream for
/// about 99 draws in 100, more for the rest).
#[inline]
pub(crate) fn standard_normal(rng: &mut Rng) -> f64 {
    loop {
        let bits = rng.next_u64();
        let i = (bits & 0xff) as usize;
        // Below 2^53: a signed conversion, one instruction.
        let x = (bits >> 11) as i64 as f64 * SCALED[i];
        let accepted = if x < ZIG.x[i + 1] {
            Some(x)
        } else {
            beyond_the_rectangle(rng, i, x)
        };
        if let Some(x) = accepted {
            // Bit 8 is the sign.
            return f64::from_bits(x.to_bits() | ((bits & 0x100) << 55));
        }
    }
}

/// `out.len()` standard normal values drawn from `rng`, the same values in
/// the same order as that many calls of [`standard_normal`] give, and
/// `rng` left where they leave it. The stream's state stays in a local
/// copy during the loop (put back for the rare step), so that the words
/// are made in registers rather than through memory.
#[inline(always)]
pub(crate) fn fill_standard_normals(rng: &mut Rng, out: &mut [f64]) {
    let mut s = rng.state();
    for slot in out.iter_mut() {
        *slot = loop {
            let bits = Rng::step(&mut s);
            let i = (bits & 0xff) as usize;
            let x = (bits >> 11) as i64 as f64 * SCALED[i];
            let accepted = if x < ZIG.x[i + 1] {
                Some(x)
            } else {
                // The rare step draws from the stream itself.
                rng.set_state(s);
                let a = beyond_the_rectangle(rng, i, x);
                s = rng.state();
                a
            };
            if let Some(x) = accepted {
                break f64::from_bits(x.to_bits() | ((bits & 0x100) << 55));
            }
        };
    }
    rng.set_state(s);
}

/// The rare part of a draw: the point x in layer i is not under the curve
/// for sure. In the base layer, a value from the tail beyond r; above it,
/// x if a uniform height in the layer falls under f(x), else `None` (the
/// draw starts again).
#[cold]
#[inline(never)]
fn beyond_the_rectangle(rng: &mut Rng, i: usize, x: f64) -> Option<f64> {
    if i == 0 {
        loop {
            let a = -ln(1.0 - rng.uniform()) / R;
            let b = -ln(1.0 - rng.uniform());
            if 2.0 * b > a * a {
                return Some(R + a);
            }
        }
    }
    let y = ZIG.f[i] + rng.uniform() * (ZIG.f[i + 1] - ZIG.f[i]);
    if y < density(x) {
        Some(x)
    } else {
        None
    }
}

/// The normal distribution function and its inverse, for the tests of the
/// draws (here and in `fidelity`).
#[cfg(test)]
pub(crate) mod reference {
    use super::mills_ratio;

    /// The standard normal distribution function Φ(z): for |z| < 3 by the
    /// series Φ(z) = ½ + φ(z)·(z + z³/3 + z⁵/(3·5) + …), beyond by the Mills
    /// ratio above (its continued fraction converges fast there).
    pub(crate) fn phi(z: f64) -> f64 {
        let pdf = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        if z.abs() < 3.0 {
            let (mut term, mut sum, mut k) = (z, z, 1.0);
            while term.abs() > 1e-18 * sum.abs().max(1e-300) {
                k += 2.0;
                term *= z * z / k;
                sum += term;
            }
            return 0.5 + pdf * sum;
        }
        let upper = pdf * mills_ratio(z.abs());
        if z > 0.0 {
            1.0 - upper
        } else {
            upper
        }
    }

    /// Φ⁻¹(p) by bisection on `phi`.
    pub(crate) fn quantile(p: f64) -> f64 {
        let (mut lo, mut hi) = (-10.0f64, 10.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if phi(mid) < p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

#[cfg(test)]
mod tests {
    use super::reference::{phi, quantile};
    use super::*;

    /// The tables are what their definition says: widths decreasing from
    /// x₀ > r to 0, heights f(xᵢ), every layer above the base of area v to
    /// rounding, and the 255th layer, which the recurrence does not force,
    /// of area v within 10^−11 of it (r closes the ziggurat: 4.5·10^−13 as
    /// computed).
    #[test]
    fn the_layers_have_equal_areas_and_close_at_the_top() {
        let t = &ZIG;
        assert!(t.x[0] > R && t.x[1] == R && t.x[LAYERS] == 0.0);
        for i in 1..LAYERS {
            assert!(t.x[i + 1] < t.x[i], "layer {i}");
            assert!((t.f[i] - (-0.5 * t.x[i] * t.x[i]).exp()).abs() < 1e-15);
        }
        for i in 1..LAYERS - 1 {
            let area = t.x[i] * (t.f[i + 1] - t.f[i]);
            assert!((area / AREA - 1.0).abs() < 1e-11, "layer {i}: {area:e}");
        }
        let top = t.x[LAYERS - 1] * (1.0 - t.f[LAYERS - 1]);
        assert!(
            (top / AREA - 1.0).abs() < 1e-11,
            "top layer {top:e} vs {AREA:e}"
        );
    }

    /// Filling a buffer gives the values of one draw after the other, in
    /// their order, and leaves the stream where they leave it: 1.68 million
    /// values in buffers of 1, 2, 16 and 37 (about 1 in 100 takes the rare
    /// step; those beyond r, some 440 expected, all come from the tail
    /// sampler).
    #[test]
    fn a_filled_buffer_is_the_draws_one_after_the_other() {
        let mut a = Rng::new(2026, 13);
        let mut b = Rng::new(2026, 13);
        let mut buf = [0f64; 37];
        let mut tail = 0usize;
        for round in 0..120_000usize {
            let len = [1, 2, 16, 37][round % 4];
            fill_standard_normals(&mut a, &mut buf[..len]);
            for &got in &buf[..len] {
                let want = standard_normal(&mut b);
                assert_eq!(got.to_bits(), want.to_bits(), "round {round}");
                tail += usize::from(got.abs() > R);
            }
            assert_eq!(a.next_u64(), b.next_u64(), "round {round}");
        }
        assert!(tail > 100, "only {tail} values from the tail");
    }

    /// The tail sampler alone (the base layer beyond r, rare in the draws
    /// above): a million values against the normal conditioned on |z| > r,
    /// P(Z > r + a | Z > r) = (1 − Φ(r + a))/(1 − Φ(r)), by the
    /// Kolmogorov–Smirnov distance at the 1/1,000 level.
    #[test]
    fn the_tail_follows_the_normal_beyond_r() {
        let n = 1_000_000usize;
        let mut rng = Rng::new(2026, 12);
        let mut t: Vec<f64> = (0..n)
            .map(|_| beyond_the_rectangle(&mut rng, 0, R).expect("the tail always gives a value"))
            .collect();
        t.sort_unstable_by(f64::total_cmp);
        let upper = |z: f64| (-0.5 * z * z).exp() * mills_ratio(z);
        let (nf, at_r) = (n as f64, upper(R));
        let mut ks = 0f64;
        for (k, &v) in t.iter().enumerate() {
            assert!(v >= R);
            let p = 1.0 - upper(v) / at_r;
            ks = ks
                .max((p - k as f64 / nf).abs())
                .max(((k + 1) as f64 / nf - p).abs());
        }
        assert!(ks < 1.95 / nf.sqrt(), "KS distance {ks:e}");
    }

    /// Four million draws against the normal distribution: the largest gap
    /// between the sample's distribution function and Φ (Kolmogorov–Smirnov)
    /// is within what a true normal sample shows 999 times in 1,000
    /// (1.95/√n), and so are the counts in 200 cells of equal probability
    /// and beyond ±3.5 (χ²-like, each within 5 standard errors), the mean,
    /// variance, skewness and kurtosis.
    #[test]
    fn draws_follow_the_standard_normal() {
        let n = 4_000_000usize;
        let mut rng = Rng::new(2026, 11);
        let mut z: Vec<f64> = (0..n).map(|_| standard_normal(&mut rng)).collect();
        let nf = n as f64;
        let mean = z.iter().sum::<f64>() / nf;
        let m2 = z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / nf;
        let m3 = z.iter().map(|v| (v - mean).powi(3)).sum::<f64>() / nf;
        let m4 = z.iter().map(|v| (v - mean).powi(4)).sum::<f64>() / nf;
        assert!(mean.abs() < 5.0 / nf.sqrt(), "mean {mean}");
        assert!((m2 - 1.0).abs() < 5.0 * (2.0 / nf).sqrt(), "variance {m2}");
        assert!(m3.abs() < 5.0 * (6.0 / nf).sqrt(), "skewness {m3}");
        assert!((m4 - 3.0).abs() < 5.0 * (96.0 / nf).sqrt(), "kurtosis {m4}");
        z.sort_unstable_by(f64::total_cmp);
        let mut ks = 0f64;
        for (k, &v) in z.iter().enumerate() {
            let p = phi(v);
            ks = ks
                .max((p - k as f64 / nf).abs())
                .max(((k + 1) as f64 / nf - p).abs());
        }
        assert!(ks < 1.95 / nf.sqrt(), "KS distance {ks:e}");
        // Cells of equal probability 1/200: their counts, by binary search of
        // each cell's upper edge in the sorted sample.
        let cells = 200usize;
        let expect = nf / cells as f64;
        let sd = (expect * (1.0 - 1.0 / cells as f64)).sqrt();
        let mut below = 0usize;
        for c in 1..=cells {
            let edge = if c == cells {
                f64::INFINITY
            } else {
                quantile(c as f64 / cells as f64)
            };
            let upto = z.partition_point(|&v| v < edge);
            let count = (upto - below) as f64;
            assert!(
                (count - expect).abs() < 5.0 * sd,
                "cell {c}: {count} vs {expect}"
            );
            below = upto;
        }
        // The tails beyond the base layer's edge and beyond 3.5 (the tail
        // sampler and the outer layers).
        for edge in [R, 3.5, 4.5] {
            let p = 2.0 * (1.0 - phi(edge));
            let count = z.iter().filter(|v| v.abs() > edge).count() as f64;
            let (e, s) = (nf * p, (nf * p * (1.0 - p)).sqrt());
            assert!(
                (count - e).abs() < 5.0 * s,
                "beyond ±{edge}: {count} vs {e}"
            );
        }
    }
}
