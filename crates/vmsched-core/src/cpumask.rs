//! A set of PCPUs (Xen's `cpumask_t`), with Xen's `cycle` operation.
//!
//! A mask is a plain `Copy` array of `W` 64-bit words, `W` a const generic
//! parameter: its storage is sized to the host. A simulation chooses the
//! width once, when its scheduler is built ([`words_for`]): one word for a
//! host of up to 64 PCPUs, [`MAX_WORDS`] for a larger one. The schedulers
//! that keep masks (Credit, Credit 2, RTDS, null and the schedulers built
//! on them) are generic over the width and monomorphised twice, so on a
//! 2-PCPU host every operation of theirs is a single-word instruction with
//! no loop and no bound, and a mask is 8 bytes, not 64.
//!
//! The engine and the scenario keep their masks (the VCPUs' affinities, the
//! topology's sibling and socket sets) at the full width, [`CpuMask`] with
//! its default parameter; a sized scheduler takes the words it needs with
//! [`CpuMask::sized`]. Every mask of a host holds only PCPUs of that host
//! (the scenario and the toolstack actions are validated against it), so
//! the words left out are zero.
//!
//! A PCPU beyond a mask's width is a checked error (a panic naming it),
//! never a silent wrap into another word.

use crate::ids::PcpuId;

/// Words in the widest mask. 8 × 64 = 512 PCPUs, the largest host vmsched simulates.
pub const MAX_WORDS: usize = 8;
/// The largest number of PCPUs a host may have.
pub const MAX_PCPUS: usize = MAX_WORDS * 64;

/// The mask width a host of `npcpus` PCPUs uses: one word up to 64 PCPUs,
/// [`MAX_WORDS`] beyond (the two widths the sized schedulers are built in).
pub const fn words_for(npcpus: usize) -> usize {
    if npcpus <= 64 {
        1
    } else {
        MAX_WORDS
    }
}

/// A set of PCPUs numbered below `64 * W`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuMask<const W: usize = MAX_WORDS> {
    w: [u64; W],
}

impl<const W: usize> Default for CpuMask<W> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<const W: usize> std::fmt::Debug for CpuMask<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter().map(|p| p.0)).finish()
    }
}

/// The panic of a PCPU beyond a mask: out of line, so that the check on the
/// hot path is one comparison.
#[cold]
#[inline(never)]
fn beyond(p: PcpuId, words: usize) -> ! {
    panic!(
        "PCPU {} beyond a mask of {} PCPUs (the host's mask width)",
        p.idx(),
        words * 64
    )
}

impl<const W: usize> CpuMask<W> {
    /// PCPUs a mask of this width can hold.
    pub const CAPACITY: usize = W * 64;

    /// The empty set.
    pub const fn empty() -> Self {
        CpuMask { w: [0; W] }
    }

    /// PCPUs 0..n.
    pub fn first_n(n: usize) -> Self {
        let mut m = Self::empty();
        for i in 0..n {
            m.set(PcpuId(i as u32));
        }
        m
    }

    /// A set holding only `p`.
    pub fn single(p: PcpuId) -> Self {
        let mut m = Self::empty();
        m.set(p);
        m
    }

    /// The same set at width `V`. Used to take a host-sized mask out of a
    /// full-width one: the words left out must be empty (every mask of a
    /// host holds only its PCPUs, and `V` is chosen from the host's size),
    /// which is checked in debug builds.
    #[inline]
    pub fn sized<const V: usize>(&self) -> CpuMask<V> {
        debug_assert!(
            self.w.iter().skip(V).all(|&x| x == 0),
            "{self:?} does not fit in {V} words"
        );
        CpuMask {
            w: std::array::from_fn(|i| if i < W { self.w[i] } else { 0 }),
        }
    }

    /// The word holding `p`'s bit; a PCPU beyond the width panics.
    #[inline]
    fn word_of(p: PcpuId) -> usize {
        let wi = p.idx() >> 6;
        if wi >= W {
            beyond(p, W);
        }
        wi
    }

    /// Add `p`.
    #[inline]
    pub fn set(&mut self, p: PcpuId) {
        self.w[Self::word_of(p)] |= 1u64 << (p.idx() & 63);
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
        self.w.iter().all(|&x| x == 0)
    }

    /// Number of PCPUs in the set.
    #[inline]
    pub fn count(&self) -> u32 {
        self.w.iter().map(|x| x.count_ones()).sum()
    }

    /// Intersection.
    #[inline]
    pub fn and(&self, o: &Self) -> Self {
        CpuMask {
            w: std::array::from_fn(|i| self.w[i] & o.w[i]),
        }
    }

    /// Union.
    #[inline]
    pub fn or(&self, o: &Self) -> Self {
        CpuMask {
            w: std::array::from_fn(|i| self.w[i] | o.w[i]),
        }
    }

    /// Difference (`self` without `o`).
    #[inline]
    pub fn andnot(&self, o: &Self) -> Self {
        CpuMask {
            w: std::array::from_fn(|i| self.w[i] & !o.w[i]),
        }
    }

    /// Do the sets share a PCPU?
    #[inline]
    pub fn intersects(&self, o: &Self) -> bool {
        self.w.iter().zip(&o.w).any(|(a, b)| a & b != 0)
    }

    /// `self.and(o).cycle(n)` without building the intersection: the next
    /// PCPU after `n` in both sets, wrapping round; `n` itself if it is the
    /// only one. `None` if the sets share no PCPU.
    #[inline]
    pub fn cycle_and(&self, o: &Self, n: PcpuId) -> Option<PcpuId> {
        let both = |i: usize| self.w[i] & o.w[i];
        let start = n.idx() + 1;
        // From `start` to the end, then from 0 up to and including `n`.
        let mut wi = start >> 6;
        if wi < W {
            let mut word = both(wi) & (!0u64 << (start & 63));
            loop {
                if word != 0 {
                    return Some(PcpuId((wi * 64 + word.trailing_zeros() as usize) as u32));
                }
                wi += 1;
                if wi >= W {
                    break;
                }
                word = both(wi);
            }
        }
        (0..W).find_map(|i| {
            let word = both(i);
            (word != 0).then(|| PcpuId((i * 64 + word.trailing_zeros() as usize) as u32))
        })
    }

    /// Is every PCPU of `self` in `o`?
    #[inline]
    pub fn is_subset(&self, o: &Self) -> bool {
        self.w.iter().zip(&o.w).all(|(a, b)| a & !b == 0)
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
        if wi >= W {
            return None;
        }
        let mut word = self.w[wi] & (!0u64 << (start & 63));
        loop {
            if word != 0 {
                return Some(PcpuId((wi * 64 + word.trailing_zeros() as usize) as u32));
            }
            wi += 1;
            if wi >= W {
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
            let mut m = <CpuMask>::empty();
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
            assert_eq!(cleared, <CpuMask>::empty());
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
            let mut m = <CpuMask>::empty();
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
        let mut m = <CpuMask>::empty();
        for p in [1, 3, 200] {
            m.set(PcpuId(p));
        }
        assert_eq!(m.cycle(PcpuId(1)), Some(PcpuId(3)));
        assert_eq!(m.cycle(PcpuId(3)), Some(PcpuId(200)));
        assert_eq!(m.cycle(PcpuId(200)), Some(PcpuId(1)));
        assert_eq!(m.cycle(PcpuId(0)), Some(PcpuId(1)));
        assert_eq!(
            <CpuMask>::single(PcpuId(5)).cycle(PcpuId(5)),
            Some(PcpuId(5))
        );
        assert_eq!(<CpuMask>::empty().cycle(PcpuId(5)), None);
        assert_eq!(m.count(), 3);
        assert_eq!(m.iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 3, 200]);
    }

    /// A one-word mask answers as the full-width one for the PCPUs it can
    /// hold, and `sized` moves a set between the widths unchanged.
    #[test]
    fn one_word_masks_agree_with_full_width_ones() {
        let sets: [&[u32]; 5] = [&[], &[0], &[1, 63], &[0, 5, 6, 62], &[63]];
        let wide = |s: &[u32]| {
            let mut m = <CpuMask>::empty();
            s.iter().for_each(|&p| m.set(PcpuId(p)));
            m
        };
        for a in sets {
            for b in sets {
                let (wa, wb) = (wide(a), wide(b));
                let (na, nb) = (wa.sized::<1>(), wb.sized::<1>());
                assert_eq!(na.and(&nb).sized::<MAX_WORDS>(), wa.and(&wb));
                assert_eq!(na.or(&nb).sized::<MAX_WORDS>(), wa.or(&wb));
                assert_eq!(na.andnot(&nb).sized::<MAX_WORDS>(), wa.andnot(&wb));
                assert_eq!(na.intersects(&nb), wa.intersects(&wb));
                assert_eq!(na.is_subset(&nb), wa.is_subset(&wb));
                for n in [0, 1, 5, 62, 63] {
                    assert_eq!(na.cycle_and(&nb, PcpuId(n)), wa.cycle_and(&wb, PcpuId(n)));
                    assert_eq!(na.cycle(PcpuId(n)), wa.cycle(PcpuId(n)));
                    assert_eq!(na.test(PcpuId(n)), wa.test(PcpuId(n)));
                }
            }
            let (w, n) = (wide(a), wide(a).sized::<1>());
            assert_eq!(n.count(), w.count());
            assert_eq!(n.first(), w.first());
            assert_eq!(n.iter().collect::<Vec<_>>(), w.iter().collect::<Vec<_>>());
        }
        assert_eq!(std::mem::size_of::<CpuMask<1>>(), 8);
        assert_eq!(words_for(1), 1);
        assert_eq!(words_for(64), 1);
        assert_eq!(words_for(65), MAX_WORDS);
        assert_eq!(words_for(MAX_PCPUS), MAX_WORDS);
    }

    /// A PCPU beyond a mask's width is an error, not a wrap into word 0.
    #[test]
    #[should_panic(expected = "PCPU 64 beyond a mask of 64 PCPUs")]
    fn a_pcpu_beyond_a_one_word_mask_panics() {
        let mut m = CpuMask::<1>::empty();
        m.set(PcpuId(64));
    }

    #[test]
    #[should_panic(expected = "PCPU 512 beyond a mask of 512 PCPUs")]
    fn a_pcpu_beyond_the_widest_mask_panics() {
        <CpuMask>::empty().test(PcpuId(512));
    }
}
