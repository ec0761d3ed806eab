//! Run order. Cold samples are taken in balanced blocks that alternate direction — A B, B A, A B
//! for two variants, A B C, C B A, … for more — so a linear drift (temperature, clocks) lands
//! equally on every variant (docs/methodology.md §5): `old1 new1 new2 old2 old3 new3`. Optionally
//! each block is shuffled with a recorded seed, against periodic disturbances.
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// One planned sample: its position in the study and which variant it measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Slot {
    pub(crate) index: usize,
    pub(crate) variant: usize,
    /// The how-many-th sample of this variant (0-based).
    pub(crate) repeat: usize,
}

/// `samples` samples of each of `variants` variants, interleaved; `shuffle_seed` shuffles within
/// each block.
pub(crate) fn interleaved(variants: usize, samples: usize, shuffle_seed: Option<u64>) -> Vec<Slot> {
    let mut rng = shuffle_seed.map(ChaCha8Rng::seed_from_u64);
    let mut order = Vec::with_capacity(variants * samples);
    for block in 0..samples {
        let mut ids: Vec<usize> = (0..variants).collect();
        if block % 2 == 1 {
            ids.reverse();
        }
        if let Some(r) = rng.as_mut() {
            ids.shuffle(r);
        }
        for v in ids {
            order.push(Slot { index: order.len(), variant: v, repeat: block });
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(o: &[Slot]) -> String {
        o.iter().map(|s| (b'A' + s.variant as u8) as char).collect()
    }

    #[test]
    fn balanced_blocks_alternate() {
        assert_eq!(letters(&interleaved(2, 3, None)), "ABBAAB");
        assert_eq!(letters(&interleaved(3, 2, None)), "ABCCBA");
        assert_eq!(letters(&interleaved(1, 3, None)), "AAA");
        let o = interleaved(2, 3, None);
        assert!(o.iter().enumerate().all(|(i, s)| s.index == i));
        assert_eq!(o.iter().filter(|s| s.variant == 1).map(|s| s.repeat).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn a_shuffle_is_reproducible_and_keeps_blocks_whole() {
        let a = interleaved(3, 4, Some(9));
        assert_eq!(a, interleaved(3, 4, Some(9)));
        for block in a.chunks(3) {
            let mut v: Vec<_> = block.iter().map(|s| s.variant).collect();
            v.sort();
            assert_eq!(v, vec![0, 1, 2]);
        }
    }
}
