//! Seeded random streams, one per drawing component.
//!
//! xoshiro256++ seeded through SplitMix64 from (run seed, stream key). The
//! stream key is derived from the component's name, so adding a domain does not
//! perturb the draws of the others. The generator is implemented here (a dozen
//! lines) so that results never change with a dependency's version.

/// A deterministic pseudo-random stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a hash of a component name: the stable key of its stream.
pub fn stream_key(name: &str) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in name.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    h
}

impl Rng {
    /// The stream for component `key` in a run seeded with `seed`.
    pub fn new(seed: u64, key: u64) -> Rng {
        let mut st = seed ^ key.rotate_left(17);
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        Rng::step(&mut self.s)
    }

    /// The generator's state, for a loop that draws many words: it steps a
    /// local copy with [`Rng::step`] (which the compiler keeps in
    /// registers) and puts it back with [`Rng::set_state`].
    #[inline]
    pub(crate) fn state(&self) -> [u64; 4] {
        self.s
    }

    /// Puts back a state taken by [`Rng::state`] and stepped.
    #[inline]
    pub(crate) fn set_state(&mut self, s: [u64; 4]) {
        self.s = s;
    }

    /// One step of xoshiro256++ on the state `s`: its next 64 random bits.
    #[inline(always)]
    pub(crate) fn step(s: &mut [u64; 4]) -> u64 {
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A float uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An exponentially distributed value with the given mean.
    ///
    /// The logarithm is the crate's own ([`crate::io::fastmath::ln`]), not
    /// the C library's, which may differ by an ulp between machines and
    /// library versions: a think time or an arrival gap is then the same on
    /// every machine.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * crate::io::fastmath::ln(1.0 - self.uniform())
    }

    /// An integer uniform in [0, n). `n` must be > 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = Rng::new(42, stream_key("vm1"));
        let mut b = Rng::new(42, stream_key("vm1"));
        let mut c = Rng::new(42, stream_key("vm2"));
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn uniform_mean_is_about_half() {
        let mut r = Rng::new(7, 1);
        let n = 100_000;
        let mean: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
    }
}
