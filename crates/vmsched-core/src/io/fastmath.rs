//! A quick cosine for the lognormal draws of
//! [`super::fidelity::Variability`], built from `+ − ×` alone (the same bits
//! on every machine).
//!
//! The Box–Muller angle θ = 2π·u spans a whole turn, where the system
//! library's cosine takes its slow argument reduction (about 15 ns, more
//! than half of a draw). This one is not the library's function: it agrees
//! with it to 5·10^−14 (absolute), not to the last bit. A draw uses it only
//! when the cost it gives is clear of a rounding boundary by a margin a
//! thousand times wider than the difference that can make; nearer one the
//! draw is made again with the library's cosine (`Variability::draw_ns`),
//! so each cost in nanoseconds is the library's, bit for bit.

use std::f64::consts::{FRAC_PI_2, PI};

/// cos θ for θ in [0, 2π]: cos θ = sin y with y = |θ − π| − π/2 in
/// [−π/2, π/2], and sin y by its Taylor series to y^17 (the first term left
/// out, y^19/19!, is below 4.5·10^−14 there; the reduction's error is about
/// 10^−16).
#[inline]
pub(crate) fn cos_turn(theta: f64) -> f64 {
    let y = (theta - PI).abs() - FRAC_PI_2;
    let x = y * y;
    let p = 1.0 / 355_687_428_096_000.0; // 1/17!
    let p = p * x - 1.0 / 1_307_674_368_000.0; // 1/15!
    let p = p * x + 1.0 / 6_227_020_800.0; // 1/13!
    let p = p * x - 1.0 / 39_916_800.0; // 1/11!
    let p = p * x + 1.0 / 362_880.0; // 1/9!
    let p = p * x - 1.0 / 5_040.0; // 1/7!
    let p = p * x + 1.0 / 120.0; // 1/5!
    let p = p * x - 1.0 / 6.0; // 1/3!
    y + y * x * p
}

/// The largest difference from the library's cosine the draws allow for
/// (`Variability::draw_ns`'s margin is computed from it).
pub(crate) const COS_TURN_ERROR: f64 = 5e-14;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Against the library over the whole turn, and at its ends and
    /// quarters: within the bound the draws' margin relies on.
    #[test]
    fn agrees_with_the_library() {
        let mut rng = Rng::new(7, 11);
        let mut worst = 0f64;
        for _ in 0..4_000_000u64 {
            let th = std::f64::consts::TAU * rng.uniform();
            worst = worst.max((cos_turn(th) - th.cos()).abs());
        }
        for k in 0..=8 {
            let th = k as f64 * std::f64::consts::FRAC_PI_4;
            worst = worst.max((cos_turn(th) - th.cos()).abs());
        }
        let last = std::f64::consts::TAU * (1.0 - f64::EPSILON / 2.0);
        worst = worst.max((cos_turn(last) - last.cos()).abs());
        assert!(worst < COS_TURN_ERROR, "{worst:e}");
    }
}
