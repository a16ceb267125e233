//! A fixed-size set of PCPUs (Xen's `cpumask_t`), with Xen's `cycle` operation.

use crate::ids::PcpuId;

/// Words in a mask. 8 × 64 = 512 PCPUs, the largest host vmsched simulates.
const WORDS: usize = 8;
/// The largest number of PCPUs a host may have.
pub const MAX_PCPUS: usize = WORDS * 64;

/// A set of PCPUs.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct CpuMask {
    w: [u64; WORDS],
}

impl std::fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter().map(|p| p.0)).finish()
    }
}

impl CpuMask {
    /// The empty set.
    pub const fn empty() -> CpuMask {
        CpuMask { w: [0; WORDS] }
    }

    /// PCPUs 0..n.
    pub fn first_n(n: usize) -> CpuMask {
        let mut m = CpuMask::empty();
        for i in 0..n {
            m.set(PcpuId(i as u32));
        }
        m
    }

    /// A set holding only `p`.
    pub fn single(p: PcpuId) -> CpuMask {
        let mut m = CpuMask::empty();
        m.set(p);
        m
    }

    /// Add `p`.
    #[inline]
    pub fn set(&mut self, p: PcpuId) {
        self.w[p.idx() >> 6] |= 1u64 << (p.idx() & 63);
    }

    /// Remove `p`.
    #[inline]
    pub fn clear(&mut self, p: PcpuId) {
        self.w[p.idx() >> 6] &= !(1u64 << (p.idx() & 63));
    }

    /// Is `p` in the set?
    #[inline]
    pub fn test(&self, p: PcpuId) -> bool {
        self.w[p.idx() >> 6] & (1u64 << (p.idx() & 63)) != 0
    }

    /// Is the set empty?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.w.iter().all(|&x| x == 0)
    }

    /// Number of PCPUs in the set.
    #[inline]
    pub fn count(&self) -> u32 {
        self.w.iter().map(|x| x.count_ones()).sum()
    }

    /// Intersection.
    #[inline]
    pub fn and(&self, o: &CpuMask) -> CpuMask {
        let mut r = *self;
        for i in 0..WORDS {
            r.w[i] &= o.w[i];
        }
        r
    }

    /// Union.
    #[inline]
    pub fn or(&self, o: &CpuMask) -> CpuMask {
        let mut r = *self;
        for i in 0..WORDS {
            r.w[i] |= o.w[i];
        }
        r
    }

    /// Difference (`self` without `o`).
    #[inline]
    pub fn andnot(&self, o: &CpuMask) -> CpuMask {
        let mut r = *self;
        for i in 0..WORDS {
            r.w[i] &= !o.w[i];
        }
        r
    }

    /// Do the sets share a PCPU?
    #[inline]
    pub fn intersects(&self, o: &CpuMask) -> bool {
        (0..WORDS).any(|i| self.w[i] & o.w[i] != 0)
    }

    /// Is every PCPU of `self` in `o`?
    #[inline]
    pub fn is_subset(&self, o: &CpuMask) -> bool {
        (0..WORDS).all(|i| self.w[i] & !o.w[i] == 0)
    }

    /// The lowest-numbered PCPU, if any.
    #[inline]
    pub fn first(&self) -> Option<PcpuId> {
        self.next_from(0)
    }

    /// The lowest PCPU numbered >= `start`.
    #[inline]
    fn next_from(&self, start: usize) -> Option<PcpuId> {
        if start >= MAX_PCPUS {
            return None;
        }
        let mut wi = start >> 6;
        let mut word = self.w[wi] & (!0u64 << (start & 63));
        loop {
            if word != 0 {
                return Some(PcpuId((wi * 64 + word.trailing_zeros() as usize) as u32));
            }
            wi += 1;
            if wi == WORDS {
                return None;
            }
            word = self.w[wi];
        }
    }

    /// Xen's `cpumask_cycle(n, mask)`: the next PCPU after `n`, wrapping round;
    /// `n` itself if it is the only member. `None` if the set is empty.
    #[inline]
    pub fn cycle(&self, n: PcpuId) -> Option<PcpuId> {
        self.next_from(n.idx() + 1).or_else(|| self.first())
    }

    /// The PCPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = PcpuId> + '_ {
        let mut next = self.first();
        std::iter::from_fn(move || {
            let cur = next?;
            next = self.next_from(cur.idx() + 1);
            Some(cur)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_wraps_like_xen() {
        let mut m = CpuMask::empty();
        for p in [1, 3, 200] {
            m.set(PcpuId(p));
        }
        assert_eq!(m.cycle(PcpuId(1)), Some(PcpuId(3)));
        assert_eq!(m.cycle(PcpuId(3)), Some(PcpuId(200)));
        assert_eq!(m.cycle(PcpuId(200)), Some(PcpuId(1)));
        assert_eq!(m.cycle(PcpuId(0)), Some(PcpuId(1)));
        assert_eq!(CpuMask::single(PcpuId(5)).cycle(PcpuId(5)), Some(PcpuId(5)));
        assert_eq!(CpuMask::empty().cycle(PcpuId(5)), None);
        assert_eq!(m.count(), 3);
        assert_eq!(m.iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 3, 200]);
    }
}
