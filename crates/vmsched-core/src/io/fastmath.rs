//! The exponential and the natural logarithm for the variability draws
//! ([`super::normal`], [`super::fidelity::Variability`]), built from
//! `+ − × ÷` and bit operations alone.
//!
//! IEEE 754 makes each of those operations exact to the last bit on every
//! machine, which the C library's `exp` and `log` are not (they may differ by
//! an ulp between library versions). A drawn cost is rounded to whole
//! nanoseconds, so a last-bit difference can move a cost by one nanosecond
//! and, through it, every later event of a run. With these functions a draw
//! is the same on every machine and with every library.
//!
//! Both are `const fn`: the normal sampler's tables are computed with them
//! when the crate is compiled.

/// ln 2 as the nearest double (0x3FE62E42FEFA39EF).
const LN2: f64 = std::f64::consts::LN_2;
/// ln 2 − `LN2` (ln 2 to 35 digits is 0.693147180559945309417232121458176568;
/// the double is 0.693147180559945286226763982995180413).
const LN2_TAIL: f64 = 2.319_046_813_846_299_6e-17;

/// The exponential's table: 2^(j/64), j = 0..63.
const EXP_STEPS: usize = 64;
/// ln 2 / 64 in two parts: `STEP_HI` keeps the top 32 bits of the
/// significand, so that k·`STEP_HI` is exact for |k| < 2^21; `STEP_LO` is the
/// rest (with ln 2's tail).
const STEP_HI: f64 = f64::from_bits((LN2 / 64.0).to_bits() & !((1u64 << 21) - 1));
const STEP_LO: f64 = (LN2 / 64.0 - STEP_HI) + LN2_TAIL / 64.0;
/// 64 / ln 2.
const INV_STEP: f64 = 64.0 / LN2;
/// Adding and subtracting 1.5·2^52 rounds a double of magnitude below 2^51
/// to the nearest integer (ties to even).
const ROUND_SHIFT: f64 = 6_755_399_441_055_744.0;

/// e^x for |x| ≤ ln 2 (about 0.69) by its Taylor series, summed from the
/// smallest term up: within about an ulp (the first term left out,
/// x^26/26!, is below 2·10^−31).
const fn exp_series(x: f64) -> f64 {
    let mut terms = [0.0f64; 26];
    terms[0] = 1.0;
    let mut k = 1;
    while k < 26 {
        terms[k] = terms[k - 1] * x / k as f64;
        k += 1;
    }
    let mut sum = 0.0;
    let mut k = 26;
    while k > 0 {
        k -= 1;
        sum += terms[k];
    }
    sum
}

const fn exp_table() -> [f64; EXP_STEPS] {
    let mut t = [0.0f64; EXP_STEPS];
    let mut j = 0;
    while j < EXP_STEPS {
        // j·ln 2/64 in two parts, then e^(hi + lo) = e^hi·(1 + lo).
        let hi = j as f64 * STEP_HI;
        let lo = j as f64 * STEP_LO;
        let e = exp_series(hi);
        t[j] = e + e * lo;
        j += 1;
    }
    t
}

/// 2^(j/64), j = 0..63 (each within about an ulp; a test checks them
/// against the library's `exp2`).
const EXP_TABLE: [f64; EXP_STEPS] = exp_table();

/// 2^m for m in [−1022, 1023], from its bits (wrapping: other m give
/// meaningless bits, never a panic).
const fn pow2(m: i64) -> f64 {
    f64::from_bits((1023i64.wrapping_add(m) as u64) << 52)
}

/// x·64/ln 2 rounded to the nearest integer k (ties to even), for |x| below
/// about 700: as a double and as an integer. Adding 1.5·2^52 leaves k in
/// the low bits of the sum's significand, so k is read from the bits
/// rather than converted (a checked conversion costs several instructions).
#[inline]
const fn steps(x: f64) -> (f64, i64) {
    let y = x * INV_STEP + ROUND_SHIFT;
    (
        y - ROUND_SHIFT,
        // Wrapping: for an x outside that range (`exp_near`'s callers throw
        // such a result away) the difference may not fit.
        (y.to_bits() as i64).wrapping_sub(ROUND_SHIFT.to_bits() as i64),
    )
}

/// e^r · 2^(j/64) for the reduced argument r and the table index j.
#[inline]
const fn scaled_exp(r: f64, j: i64) -> f64 {
    let p = 1.0 / 120.0;
    let p = p * r + 1.0 / 24.0;
    let p = p * r + 1.0 / 6.0;
    let p = p * r + 0.5;
    let q = r + r * r * p; // e^r − 1
    let t = EXP_TABLE[(j & 63) as usize];
    t + t * q
}

/// e^x, within about 2 ulps, for every double: +∞ above 709.78, 0 below
/// −745.2, NaN for NaN.
///
/// x = (64m + j)·ln 2/64 + r with |r| ≤ ln 2/128 (about 0.0054); e^x =
/// 2^m · 2^(j/64) · e^r, with e^r − 1 by its Taylor series to r^5 (the first
/// term left out, r^6/720, is below 4·10^−17).
#[inline]
pub(crate) const fn exp(x: f64) -> f64 {
    // |x| ≤ 708 keeps 2^m a normal double; the rest (rare) below.
    if !near(x) {
        return exp_far(x);
    }
    exp_near(x)
}

/// Whether x is in [−708, 708], where [`exp_near`] is [`exp`] (false for
/// NaN).
#[inline(always)]
pub(crate) const fn near(x: f64) -> bool {
    x >= -708.0 && x <= 708.0
}

/// [`exp`] for x in [−708, 708] (see [`near`]), without the test: a loop
/// over many values computes them all this way, then redoes the rare ones
/// outside (whose value here is meaningless, but computed without a
/// panic).
#[inline(always)]
pub(crate) const fn exp_near(x: f64) -> f64 {
    let (kf, k) = steps(x);
    let r = (x - kf * STEP_HI) - kf * STEP_LO;
    scaled_exp(r, k) * pow2(k >> 6)
}

/// [`exp`] outside [−708, 708]: the same computation, scaled in two steps
/// so that each power of two is a normal double.
#[inline(never)]
const fn exp_far(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.782_712_893_384 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    let (kf, k) = steps(x);
    let r = (x - kf * STEP_HI) - kf * STEP_LO;
    let m = k >> 6;
    let m1 = m / 2;
    scaled_exp(r, k) * pow2(m1) * pow2(m - m1)
}

/// ln x for a positive normal double x (0 and subnormals are outside the
/// draws' use: their arguments are at least 2^−53), within about 2 ulps.
///
/// x = 2^e·m with m in [√½, √2); ln m = 2·atanh(s) with s = (m − 1)/(m + 1),
/// |s| ≤ 0.1716, by its series to s^23 (the first term left out, 2s^25/25,
/// is below 6·10^−21).
pub(crate) const fn ln(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = 1.0 / 23.0;
    let mut k = 21;
    while k >= 3 {
        p = p * s2 + 1.0 / k as f64;
        k -= 2;
    }
    let ln_m = 2.0 * s + 2.0 * s * s2 * p;
    let ef = e as f64;
    ef * LN2 + (ef * LN2_TAIL + ln_m)
}

/// √x for x ≥ 0 (for the tables: `f64::sqrt` is not a `const fn`) by
/// Newton's iteration from the halved exponent; the iteration stops where
/// it no longer changes, within an ulp of the correctly rounded root.
pub(crate) const fn sqrt(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let mut g = f64::from_bits((x.to_bits() >> 1) + (1023u64 << 51));
    let mut i = 0;
    while i < 60 {
        let next = 0.5 * (g + x / g);
        if next == g {
            break;
        }
        g = next;
        i += 1;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Distance in ulps between two positive finite doubles.
    fn ulps(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn the_table_is_two_to_the_sixty_fourths() {
        for (j, &t) in EXP_TABLE.iter().enumerate() {
            let want = (j as f64 / 64.0).exp2();
            assert!(ulps(t, want) <= 1, "2^({j}/64): {t:e} vs {want:e}");
        }
    }

    /// Against the library over the draws' range and beyond: within 2 ulps
    /// (the library's own exp is within one of the true value), and its
    /// limits.
    #[test]
    fn exp_agrees_with_the_library() {
        let mut rng = Rng::new(5, 3);
        let mut worst = 0;
        for k in 0..3_000_000u64 {
            let span = [1.0, 30.0, 700.0, 745.0][(k % 4) as usize];
            let x = span * (2.0 * rng.uniform() - 1.0);
            let (got, want) = (exp(x), x.exp());
            if want == 0.0 || want < f64::MIN_POSITIVE {
                assert!((got - want).abs() <= 2.0 * 4.9e-324 * 2.0, "e^{x}");
                continue;
            }
            let d = ulps(got, want);
            worst = worst.max(d);
            assert!(d <= 2, "e^{x}: {got:e} vs {want:e}");
        }
        assert!(worst <= 2);
        for x in [0.0, 1.0, -1.0, 708.0, -708.0, 709.0, 709.78, -720.0] {
            assert!(ulps(exp(x), x.exp()) <= 2, "e^{x}");
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(710.0), f64::INFINITY);
        assert_eq!(exp(-746.0), 0.0);
        assert!(exp(f64::NAN).is_nan());
    }

    #[test]
    fn ln_agrees_with_the_library() {
        let mut rng = Rng::new(6, 3);
        for k in 0..3_000_000u64 {
            let x = match k % 3 {
                0 => 1.0 - rng.uniform(),
                1 => 0.5 + rng.uniform(),
                _ => (1e-300f64).max(rng.uniform() * 10f64.powi((k % 600) as i32 - 300)),
            };
            let (got, want) = (ln(x), x.ln());
            if want == 0.0 {
                assert_eq!(got, 0.0, "ln {x}");
                continue;
            }
            assert!(
                ulps(got.abs(), want.abs()) <= 2 && got.signum() == want.signum(),
                "ln {x}: {got:e} vs {want:e}"
            );
        }
        assert_eq!(ln(1.0), 0.0);
        assert!(ulps(ln(2.0f64.powi(-53)), (2.0f64.powi(-53)).ln()) <= 2);
    }

    #[test]
    fn sqrt_agrees_with_the_library() {
        let mut rng = Rng::new(8, 3);
        for _ in 0..200_000u64 {
            let x = rng.uniform() * 100.0;
            assert!(ulps(sqrt(x), x.sqrt()) <= 1, "√{x}");
        }
        assert_eq!(sqrt(0.0), 0.0);
        assert_eq!(sqrt(4.0), 2.0);
    }
}
