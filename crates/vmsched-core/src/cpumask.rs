//! A set of PCPUs (Xen's `cpumask_t`), with Xen's `cycle` operation.
//!
//! The storage is fixed (room for the largest host, so that a mask is a
//! plain `Copy` value), but every operation touches only the words in use:
//! a mask remembers how many of its words may hold a member (`used`; every
//! word beyond is zero), so on a 2-PCPU host an intersection, a test for
//! emptiness or a walk over the members is one word's work, not eight.

use crate::ids::PcpuId;

/// Words in a mask. 8 × 64 = 512 PCPUs, the largest host vmsched simulates.
const WORDS: usize = 8;
/// The largest number of PCPUs a host may have.
pub const MAX_PCPUS: usize = WORDS * 64;

/// A set of PCPUs.
#[derive(Clone, Copy, Default)]
pub struct CpuMask {
    w: [u64; WORDS],
    /// Words that may hold a member; every word from here on is zero.
    used: u8,
}

// Equality and hashing are of the members alone (`used` is a bound, and two
// equal sets may have different bounds).
impl PartialEq for CpuMask {
    fn eq(&self, o: &Self) -> bool {
        self.w == o.w
    }
}
impl Eq for CpuMask {}
impl std::hash::Hash for CpuMask {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.w.hash(h);
    }
}

impl std::fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter().map(|p| p.0)).finish()
    }
}

impl CpuMask {
    /// The empty set.
    pub const fn empty() -> CpuMask {
        CpuMask {
            w: [0; WORDS],
            used: 0,
        }
    }

    /// The words that may hold a member.
    #[inline]
    fn words(&self) -> usize {
        usize::from(self.used)
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

    /// The word holding `p`'s bit. PCPU numbers are below [`MAX_PCPUS`]
    /// (the scenario refuses larger hosts), so the index is taken modulo
    /// [`WORDS`], which the compiler sees is in range: no bounds check on
    /// the hottest operations.
    #[inline]
    fn word_of(p: PcpuId) -> usize {
        debug_assert!(p.idx() < MAX_PCPUS, "PCPU {} beyond a mask", p.idx());
        (p.idx() >> 6) & (WORDS - 1)
    }

    /// Add `p`.
    #[inline]
    pub fn set(&mut self, p: PcpuId) {
        let wi = Self::word_of(p);
        self.w[wi] |= 1u64 << (p.idx() & 63);
        self.used = self.used.max(wi as u8 + 1);
    }

    /// Remove `p`.
    #[inline]
    pub fn clear(&mut self, p: PcpuId) {
        self.w[Self::word_of(p)] &= !(1u64 << (p.idx() & 63));
    }

    /// Is `p` in the set?
    #[inline]
    pub fn test(&self, p: PcpuId) -> bool {
        self.w[Self::word_of(p)] & (1u64 << (p.idx() & 63)) != 0
    }

    /// Is the set empty?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.w[..self.words()].iter().all(|&x| x == 0)
    }

    /// Number of PCPUs in the set.
    #[inline]
    pub fn count(&self) -> u32 {
        self.w[..self.words()].iter().map(|x| x.count_ones()).sum()
    }

    /// Intersection.
    #[inline]
    pub fn and(&self, o: &CpuMask) -> CpuMask {
        let mut r = *self;
        for i in 0..self.words() {
            r.w[i] &= o.w[i];
        }
        r
    }

    /// Union.
    #[inline]
    pub fn or(&self, o: &CpuMask) -> CpuMask {
        let mut r = *self;
        for i in 0..o.words() {
            r.w[i] |= o.w[i];
        }
        r.used = self.used.max(o.used);
        r
    }

    /// Difference (`self` without `o`).
    #[inline]
    pub fn andnot(&self, o: &CpuMask) -> CpuMask {
        let mut r = *self;
        for i in 0..self.words().min(o.words()) {
            r.w[i] &= !o.w[i];
        }
        r
    }

    /// Do the sets share a PCPU?
    #[inline]
    pub fn intersects(&self, o: &CpuMask) -> bool {
        let n = self.words().min(o.words());
        self.w[..n].iter().zip(&o.w[..n]).any(|(a, b)| a & b != 0)
    }

    /// `self.and(o).cycle(n)` without building the intersection: the next
    /// PCPU after `n` in both sets, wrapping round; `n` itself if it is the
    /// only one. `None` if the sets share no PCPU.
    #[inline]
    pub fn cycle_and(&self, o: &CpuMask, n: PcpuId) -> Option<PcpuId> {
        let words = self.words().min(o.words());
        let (a, b) = (&self.w[..words], &o.w[..words]);
        let start = n.idx() + 1;
        let both = |i: usize| a[i] & b[i];
        // From `start` to the end, then from 0 up to and including `n`.
        let mut wi = start >> 6;
        if wi < words {
            let mut word = both(wi) & (!0u64 << (start & 63));
            loop {
                if word != 0 {
                    return Some(PcpuId((wi * 64 + word.trailing_zeros() as usize) as u32));
                }
                wi += 1;
                if wi >= words {
                    break;
                }
                word = both(wi);
            }
        }
        (0..words).find_map(|i| {
            let word = both(i);
            (word != 0).then(|| PcpuId((i * 64 + word.trailing_zeros() as usize) as u32))
        })
    }

    /// Is every PCPU of `self` in `o`?
    #[inline]
    pub fn is_subset(&self, o: &CpuMask) -> bool {
        (0..self.words()).all(|i| self.w[i] & !o.w[i] == 0)
    }

    /// The lowest-numbered PCPU, if any.
    #[inline]
    pub fn first(&self) -> Option<PcpuId> {
        self.next_from(0)
    }

    /// The lowest PCPU numbered >= `start`.
    #[inline]
    fn next_from(&self, start: usize) -> Option<PcpuId> {
        let mut wi = start >> 6;
        if wi >= self.words() {
            return None;
        }
        let mut word = self.w[wi] & (!0u64 << (start & 63));
        loop {
            if word != 0 {
                return Some(PcpuId((wi * 64 + word.trailing_zeros() as usize) as u32));
            }
            wi += 1;
            if wi >= self.words() {
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

    /// The operations against a plain model (a sorted list of members),
    /// across word boundaries and with masks of different extents.
    #[test]
    fn operations_agree_with_a_plain_set() {
        let sets: [&[u32]; 6] = [&[], &[0], &[1, 63], &[64, 200], &[0, 63, 64, 511], &[511]];
        let mask = |s: &[u32]| {
            let mut m = CpuMask::empty();
            s.iter().for_each(|&p| m.set(PcpuId(p)));
            m
        };
        let members = |m: CpuMask| m.iter().map(|p| p.0).collect::<Vec<_>>();
        for a in sets {
            for b in sets {
                let (ma, mb) = (mask(a), mask(b));
                let both: Vec<u32> = a.iter().copied().filter(|x| b.contains(x)).collect();
                let mut either: Vec<u32> = a.iter().chain(b).copied().collect();
                either.sort_unstable();
                either.dedup();
                let only_a: Vec<u32> = a.iter().copied().filter(|x| !b.contains(x)).collect();
                assert_eq!(members(ma.and(&mb)), both);
                assert_eq!(members(ma.or(&mb)), either);
                assert_eq!(members(ma.andnot(&mb)), only_a);
                assert_eq!(ma.intersects(&mb), !both.is_empty());
                assert_eq!(ma.is_subset(&mb), only_a.is_empty());
                assert_eq!(ma == mb, a == b);
                assert!(ma.and(&mb) == mask(&both));
            }
            let m = mask(a);
            assert_eq!(m.count() as usize, a.len());
            assert_eq!(m.is_empty(), a.is_empty());
            assert_eq!(m.first().map(|p| p.0), a.first().copied());
            // Removing every member leaves a set equal to the empty one.
            let mut cleared = m;
            a.iter().for_each(|&p| cleared.clear(PcpuId(p)));
            assert_eq!(cleared, CpuMask::empty());
            assert!(cleared.is_empty() && cleared.first().is_none());
        }
    }

    /// The fused `cycle_and` against `and` then `cycle`, from every start,
    /// across word boundaries and with masks of different extents.
    #[test]
    fn cycle_and_is_and_then_cycle() {
        let sets: [&[u32]; 7] = [
            &[],
            &[0],
            &[1, 63],
            &[64, 200],
            &[0, 63, 64, 511],
            &[511],
            &[1, 3, 64, 65, 200, 511],
        ];
        let mask = |s: &[u32]| {
            let mut m = CpuMask::empty();
            s.iter().for_each(|&p| m.set(PcpuId(p)));
            m
        };
        for a in sets {
            for b in sets {
                let (ma, mb) = (mask(a), mask(b));
                for n in [0, 1, 2, 62, 63, 64, 65, 199, 200, 201, 300, 510, 511] {
                    assert_eq!(
                        ma.cycle_and(&mb, PcpuId(n)),
                        ma.and(&mb).cycle(PcpuId(n)),
                        "{a:?} & {b:?} from {n}"
                    );
                }
            }
        }
    }

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
