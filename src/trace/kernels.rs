//! What every trace reader produces: per-kernel call counts and GPU time, split by request phase.
use std::collections::HashMap;

use super::phase::{Phase, PhaseWindows, PHASES};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) calls: u64,
    pub(crate) ns: u64,
}

impl Totals {
    #[inline]
    pub(crate) fn add(&mut self, start: i64, end: i64) {
        self.calls += 1;
        // A record whose end precedes its start is a tracer glitch; it counts as a call of no time.
        self.ns += end.saturating_sub(start).max(0) as u64;
    }

    pub(crate) fn merge(&mut self, other: Totals) {
        self.calls += other.calls;
        self.ns += other.ns;
    }

    /// What is left of these totals once `part` of them is taken out.
    pub(crate) fn less(self, part: Totals) -> Totals {
        Totals { calls: self.calls.saturating_sub(part.calls), ns: self.ns.saturating_sub(part.ns) }
    }
}

/// Totals of one kernel (by its full name as the tracer printed it) in each phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KernelTotals {
    pub(crate) name: String,
    pub(crate) phases: [Totals; PHASES],
    /// Run by a speculative server's draft context, on its own lanes (docs/methodology.md §10.2);
    /// the same name run by the target is a separate entry.
    pub(crate) draft: bool,
}

impl KernelTotals {
    pub(crate) fn phase(&self, p: Phase) -> Totals {
        self.phases[p as usize]
    }

    pub(crate) fn all(&self) -> Totals {
        let mut t = Totals::default();
        for p in self.phases {
            t.merge(p);
        }
        t
    }
}

/// All kernels of a trace, one entry per distinct name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Aggregate {
    pub(crate) kernels: Vec<KernelTotals>,
}

impl Aggregate {
    /// Builds the per-name list from per-id totals and an id → name lookup; ids that share a
    /// name (the same kernel in two code objects) are merged.
    pub(crate) fn from_ids<K: std::hash::Hash + Eq>(
        by_id: HashMap<K, [Totals; PHASES]>,
        mut name_of: impl FnMut(&K) -> String,
    ) -> Aggregate {
        let mut by_name: HashMap<String, [Totals; PHASES]> = HashMap::new();
        for (id, phases) in by_id {
            let entry = by_name.entry(name_of(&id)).or_default();
            for (acc, t) in entry.iter_mut().zip(phases) {
                acc.merge(t);
            }
        }
        let mut kernels: Vec<KernelTotals> =
            by_name.into_iter().map(|(name, phases)| KernelTotals { name, phases, draft: false }).collect();
        kernels.sort_by(|a, b| a.name.cmp(&b.name));
        Aggregate { kernels }
    }

    /// The kernels of `draft` (this trace's dispatches on the draft context's lanes) taken out
    /// of the target's entries of the same name and kept as draft entries beside them.
    pub(crate) fn with_draft(mut self, draft: Aggregate) -> Aggregate {
        for d in draft.kernels {
            if let Some(k) = self.kernels.iter_mut().find(|k| !k.draft && k.name == d.name) {
                for (t, p) in k.phases.iter_mut().zip(d.phases) {
                    *t = t.less(p);
                }
            }
            self.kernels.push(KernelTotals { draft: true, ..d });
        }
        self.kernels.retain(|k| k.all().calls > 0);
        self.kernels.sort_by(|a, b| a.name.cmp(&b.name).then(a.draft.cmp(&b.draft)));
        self
    }

    pub(crate) fn phase_total(&self, p: Phase) -> Totals {
        let mut t = Totals::default();
        for k in &self.kernels {
            t.merge(k.phase(p));
        }
        t
    }

    pub(crate) fn total(&self) -> Totals {
        let mut t = Totals::default();
        for k in &self.kernels {
            t.merge(k.all());
        }
        t
    }
}

/// Adds one dispatch to a per-id map, in the phase its start falls in.
#[inline]
pub(crate) fn accumulate<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, [Totals; PHASES]>,
    key: K,
    start: i64,
    end: i64,
    windows: Option<&PhaseWindows>,
) {
    let phase = windows.map_or(Phase::Decode, |w| w.classify(start));
    map.entry(key).or_default()[phase as usize].add(start, end);
}
