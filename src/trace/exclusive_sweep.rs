//! The exclusive-time sweep (docs/methodology.md §10 "Exclusive busy time"): dispatches fed in
//! start order, every instant of busy time given, in equal parts, to the earliest-started running
//! kernel of each lane busy in it. [`super::overlap`] explains the rule; this floor, below the
//! readers, is the arithmetic, so a reader can sweep inside its own scan threads.
//!
//! **Stretches.** A trace in start order can be cut into stretches, one per thread, each swept on
//! its own from its first start ([`Stretch`]). What a stretch cannot see is the kernels of earlier
//! stretches still running when it begins; [`merge`] hands them over, stretch by stretch, and
//! re-sweeps the stretch's first rows (its head, kept for this) with them. After the last of those
//! kernels has ended, both sweeps have the same running kernels, so everything after the head is
//! already right. A handed-over kernel that outlives a head is rare (one long kernel beside
//! thousands of short ones); then [`merge`] gives up and the caller sweeps in one pass.
use std::collections::HashMap;
use std::hash::Hash;

/// A running kernel: where it ends, its lane and its accumulator.
#[derive(Debug, Clone, Copy)]
struct Active {
    end: i64,
    lane: i64,
    slot: usize,
}

/// A kernel's key; one that reads as a small non-negative number (rocpd kernel ids, nsys string
/// ids) finds its accumulator by indexing instead of hashing, once per dispatch.
pub(crate) trait SweepKey: Copy + Eq + Hash {
    fn small(&self) -> Option<usize>;
}

/// Keys below this index a vector; others go through a map.
const SMALL_KEYS: i64 = 1 << 16;

impl SweepKey for i64 {
    #[inline]
    fn small(&self) -> Option<usize> {
        (0..SMALL_KEYS).contains(self).then_some(*self as usize)
    }
}

impl SweepKey for u8 {
    #[inline]
    fn small(&self) -> Option<usize> {
        Some(*self as usize)
    }
}

/// The sweep over dispatches fed in start order.
#[derive(Debug)]
pub(crate) struct ExclusiveSweep<K> {
    active: Vec<Active>,
    now: i64,
    /// Each key's accumulator index (small keys: `by_small[key]` − 1, 0 unseen), and the keys by
    /// index.
    by_small: Vec<u32>,
    index: HashMap<K, usize>,
    keys: Vec<K>,
    busy_ns: u64,
    exclusive: Vec<f64>,
    /// While set, time is credited to the head's accumulators instead (see [`Stretch`]).
    in_head: bool,
    head_busy_ns: u64,
    head_exclusive: Vec<f64>,
    owners: Vec<(i64, usize)>,
}

impl<K: SweepKey> Default for ExclusiveSweep<K> {
    fn default() -> Self {
        ExclusiveSweep {
            active: Vec::new(),
            now: i64::MIN,
            by_small: Vec::new(),
            index: HashMap::new(),
            keys: Vec::new(),
            busy_ns: 0,
            exclusive: Vec::new(),
            in_head: false,
            head_busy_ns: 0,
            head_exclusive: Vec::new(),
            owners: Vec::new(),
        }
    }
}

impl<K: SweepKey> ExclusiveSweep<K> {
    #[inline]
    fn slot(&mut self, key: K) -> usize {
        let small = key.small();
        match small {
            Some(k) if k < self.by_small.len() && self.by_small[k] > 0 => return self.by_small[k] as usize - 1,
            Some(_) => {}
            None => {
                if let Some(&i) = self.index.get(&key) {
                    return i;
                }
            }
        }
        let i = self.keys.len();
        match small {
            Some(k) => {
                if k >= self.by_small.len() {
                    self.by_small.resize(k + 1, 0);
                }
                self.by_small[k] = i as u32 + 1;
            }
            None => {
                self.index.insert(key, i);
            }
        }
        self.keys.push(key);
        self.exclusive.push(0.0);
        self.head_exclusive.push(0.0);
        i
    }

    /// One dispatch; starts must not decrease. A dispatch of no time still names its kernel.
    #[inline]
    pub(crate) fn push(&mut self, start: i64, end: i64, lane: i64, key: K) {
        self.advance(start);
        let slot = self.slot(key);
        if end > start {
            self.active.push(Active { end, lane, slot });
        }
    }

    /// A kernel that started before the sweep's present and runs until `end`: it precedes, in
    /// its lane, every kernel pushed after it.
    fn push_running(&mut self, end: i64, lane: i64, key: K) {
        let slot = self.slot(key);
        if end > self.now {
            self.active.push(Active { end, lane, slot });
        }
    }

    /// Credits the time up to `t` to the kernels running in it.
    fn advance(&mut self, t: i64) {
        while let Some(next_end) = self.active.iter().map(|r| r.end).min() {
            let until = next_end.min(t);
            if until > self.now {
                let dt = (until - self.now) as u64;
                self.owners.clear();
                for r in &self.active {
                    if !self.owners.iter().any(|o| o.0 == r.lane) {
                        self.owners.push((r.lane, r.slot));
                    }
                }
                let each = dt as f64 / self.owners.len() as f64;
                let (busy, exclusive) = if self.in_head {
                    (&mut self.head_busy_ns, &mut self.head_exclusive)
                } else {
                    (&mut self.busy_ns, &mut self.exclusive)
                };
                *busy += dt;
                for (_, slot) in &self.owners {
                    exclusive[*slot] += each;
                }
                self.now = until;
            }
            if next_end > t {
                break;
            }
            self.active.retain(|r| r.end > next_end);
        }
        self.now = self.now.max(t);
    }

    /// Adds (head or not) accumulators into `out`.
    fn add_into(&self, head: bool, busy: &mut u64, out: &mut HashMap<K, f64>) {
        let (b, values) =
            if head { (self.head_busy_ns, &self.head_exclusive) } else { (self.busy_ns, &self.exclusive) };
        *busy += b;
        for (key, v) in self.keys.iter().zip(values) {
            *out.entry(*key).or_default() += v;
        }
    }

    /// Busy ns and exclusive ns per key, once every kernel has ended.
    pub(crate) fn finish(mut self) -> (u64, HashMap<K, f64>) {
        self.advance(i64::MAX);
        let (mut busy, mut out) = (0, HashMap::with_capacity(self.keys.len()));
        self.add_into(true, &mut busy, &mut out);
        self.add_into(false, &mut busy, &mut out);
        (busy, out)
    }
}

/// Rows a stretch keeps for [`merge`] to re-sweep with the kernels handed over to it.
pub(crate) const HEAD_ROWS: usize = 4096;

/// One stretch of a trace in start order, swept on its own from its first start.
#[derive(Debug)]
pub(crate) struct Stretch<K> {
    sweep: ExclusiveSweep<K>,
    first_start: Option<i64>,
    head: Vec<(i64, i64, i64, K)>,
    head_rows: usize,
    /// The start of the first row after the head: time before it was credited to the head.
    horizon: Option<i64>,
}

impl<K: SweepKey> Stretch<K> {
    pub(crate) fn new(head_rows: usize) -> Self {
        let sweep = ExclusiveSweep { in_head: true, ..Default::default() };
        Stretch { sweep, first_start: None, head: Vec::new(), head_rows, horizon: None }
    }

    /// One dispatch; starts must not decrease.
    #[inline]
    pub(crate) fn push(&mut self, start: i64, end: i64, lane: i64, key: K) {
        if self.first_start.is_none() {
            self.first_start = Some(start);
        }
        if self.horizon.is_none() {
            if self.head.len() < self.head_rows {
                self.head.push((start, end, lane, key));
            } else {
                self.sweep.advance(start);
                self.sweep.in_head = false;
                self.horizon = Some(start);
            }
        }
        self.sweep.push(start, end, lane, key);
    }
}

/// Busy ns and exclusive ns per key of the stretches, in start order, as one sweep over all of
/// their dispatches gives them; `None` where a kernel handed over to a stretch outlives its head.
pub(crate) fn merge<K: SweepKey>(stretches: Vec<Stretch<K>>) -> Option<(u64, HashMap<K, f64>)> {
    let stretches: Vec<Stretch<K>> = stretches.into_iter().filter(|s| s.first_start.is_some()).collect();
    let starts: Vec<i64> = stretches.iter().filter_map(|s| s.first_start).collect();
    let (mut busy, mut exclusive) = (0u64, HashMap::new());
    // Kernels of earlier stretches still running, in start order: (end, lane, key).
    let mut carry: Vec<(i64, i64, K)> = Vec::new();
    for (i, mut s) in stretches.into_iter().enumerate() {
        let (t0, t1) = (starts[i], starts.get(i + 1).copied().unwrap_or(i64::MAX));
        carry.retain(|r| r.0 > t0);
        // This stretch's time ends where the next one's begins.
        s.sweep.advance(t1);
        let tail: Vec<(i64, i64, K)> = s.sweep.active.iter().map(|a| (a.end, a.lane, s.sweep.keys[a.slot])).collect();
        if carry.is_empty() {
            s.sweep.add_into(true, &mut busy, &mut exclusive);
        } else {
            let until = s.horizon.unwrap_or(t1);
            let last_end = carry.iter().map(|r| r.0).max().unwrap_or(i64::MIN);
            if s.horizon.is_some() && last_end > until {
                return None;
            }
            let mut again = ExclusiveSweep { now: t0, ..Default::default() };
            for &(end, lane, key) in &carry {
                again.push_running(end, lane, key);
            }
            for &(start, end, lane, key) in &s.head {
                again.push(start, end, lane, key);
            }
            again.advance(until);
            again.add_into(false, &mut busy, &mut exclusive);
        }
        s.sweep.add_into(false, &mut busy, &mut exclusive);
        carry.retain(|r| r.0 > t1);
        carry.extend(tail);
    }
    Some((busy, exclusive))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_sweep(rows: &[(i64, i64, i64, u8)]) -> (u64, HashMap<u8, f64>) {
        let mut s = ExclusiveSweep::default();
        for &(a, b, lane, k) in rows {
            s.push(a, b, lane, k);
        }
        s.finish()
    }

    fn stretched(rows: &[(i64, i64, i64, u8)], cuts: &[usize], head_rows: usize) -> Option<(u64, HashMap<u8, f64>)> {
        let mut bounds = vec![0];
        bounds.extend(cuts.iter().copied());
        bounds.push(rows.len());
        let stretches = bounds
            .windows(2)
            .map(|w| {
                let mut s = Stretch::new(head_rows);
                for &(a, b, lane, k) in &rows[w[0]..w[1]] {
                    s.push(a, b, lane, k);
                }
                s
            })
            .collect();
        merge(stretches)
    }

    fn same(a: &(u64, HashMap<u8, f64>), b: &(u64, HashMap<u8, f64>), what: &str) {
        assert_eq!(a.0, b.0, "busy: {what}");
        for (k, v) in &a.1 {
            let w = b.1.get(k).copied().unwrap_or(f64::NAN);
            assert!((v - w).abs() < 1e-6, "key {k}: {v} vs {w}: {what}");
        }
        assert_eq!(a.1.len(), b.1.len(), "{what}");
    }

    /// Random traces in start order, cut into random stretches with small heads: every merge
    /// that does not give up equals the one sweep, and with heads long enough none gives up.
    #[test]
    fn stretches_merge_into_the_one_sweep() {
        let mut state: u64 = 0x2545f4914f6cdd1d;
        let mut rnd = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut gave_up = 0;
        for round in 0..500 {
            let n = rnd(40) as usize + 1;
            let mut rows: Vec<(i64, i64, i64, u8)> = (0..n)
                .map(|_| {
                    let a = rnd(200) as i64;
                    // Mostly short kernels, now and then a long one in a side lane.
                    let len = if rnd(10) == 0 { rnd(120) } else { rnd(15) } as i64;
                    (a, a + len, rnd(3) as i64, rnd(5) as u8)
                })
                .collect();
            rows.sort_by_key(|r| r.0);
            let want = one_sweep(&rows);
            let mut cuts: Vec<usize> = (0..rnd(4)).map(|_| rnd(n as u64 + 1) as usize).collect();
            cuts.sort();
            match stretched(&rows, &cuts, 1 + rnd(4) as usize) {
                Some(got) => same(&got, &want, &format!("round {round}: {rows:?} cut at {cuts:?}")),
                None => gave_up += 1,
            }
            let got = stretched(&rows, &cuts, n).expect("a head as long as the trace never gives up");
            same(&got, &want, &format!("round {round}, whole heads"));
        }
        assert!(gave_up < 250, "gave up {gave_up} times in 500");
    }

    #[test]
    fn a_kernel_handed_over_past_the_head_is_refused_not_misattributed() {
        // Lane 1 runs one long kernel; lane 0 a string of short ones, cut after the first.
        let rows = [(0, 100, 1, 9u8), (1, 2, 0, 1), (3, 4, 0, 1), (5, 6, 0, 1), (7, 8, 0, 1)];
        assert!(stretched(&rows, &[1], 2).is_none());
        same(&stretched(&rows, &[1], 4).unwrap(), &one_sweep(&rows), "a head long enough");
    }
}
