//! Retakes (docs/methodology.md §7.19): a sample rejected only by rules about the host (another
//! workload, abprof's own CPU, the power state, the isolation hooks) says nothing about its
//! variant, so its whole interleaved block is taken again at the end of the schedule, up to the
//! study's `retakes`. A whole block keeps the interleaving balanced and gives the paired model
//! one more complete block; the spoiled block's samples stay in the evidence and in the rejected
//! list. Rules that say the variant itself is wrong are never retaken: a retake would fail alike.
use super::rules::{Rejection, Rule};
use crate::study::evidence::Plan;
use crate::study::file::StudyFile;
use serde::{Deserialize, Serialize};

/// The rules about the host, not the variant (docs/methodology.md §7.7, §7.15, §7.17, §7.8).
pub(crate) const HOST_RULES: [Rule; 4] =
    [Rule::OtherWorkload, Rule::AbprofCpu, Rule::PowerStateChanged, Rule::IsolationRestored];

/// A rejection every reason of which is about the host.
fn about_the_host(reasons: &[Rejection]) -> bool {
    !reasons.is_empty() && reasons.iter().all(|x| HOST_RULES.contains(&x.rule))
}

/// A study's retakes: the blocks a host rule spoiled and the blocks added for them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Retakes {
    /// Blocks the study may add (`retakes`).
    pub(crate) limit: u32,
    /// Blocks added so far.
    pub(crate) taken: usize,
    /// Blocks (1-based) with a sample rejected only by rules about the host.
    pub(crate) spoiled: Vec<usize>,
}

impl Retakes {
    /// The standing of the study `file` describes and `plan` planned, from its rejected samples
    /// (each its slot index and reasons); None where no block was spoiled and none retaken.
    pub(crate) fn of<'a>(
        file: &StudyFile,
        plan: &Plan,
        rejected: impl IntoIterator<Item = (usize, &'a [Rejection])>,
    ) -> Option<Retakes> {
        let mut spoiled: Vec<usize> = rejected
            .into_iter()
            .filter(|(_, reasons)| about_the_host(reasons))
            .filter_map(|(index, _)| plan.slots.iter().find(|s| s.index == index && !plan.is_traced(s)))
            .map(|s| s.repeat + 1)
            .collect();
        spoiled.sort_unstable();
        spoiled.dedup();
        (!spoiled.is_empty() || plan.retakes > 0).then(|| Retakes {
            limit: file.retakes(),
            taken: plan.retakes,
            spoiled,
        })
    }

    /// Another block is due: more blocks spoiled than retaken, and the limit not reached.
    pub(crate) fn due(&self) -> bool {
        self.taken < self.spoiled.len() && self.taken < self.limit as usize
    }

    /// One line for people.
    pub(crate) fn line(&self) -> String {
        let blocks = self.spoiled.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ");
        let left = self.spoiled.len().saturating_sub(self.taken);
        let end = if left == 0 {
            String::new()
        } else if self.due() {
            format!("; {left} still to retake")
        } else {
            format!("; {left} not retaken: the limit of {} is reached (--retakes)", self.limit)
        };
        format!(
            "retakes: block(s) {blocks} spoiled by a rule about the host, {} block(s) retaken at the end of the schedule{end} (docs/methodology.md §7.19)",
            self.taken
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(index: usize, rules: &[&str]) -> (usize, Vec<Rejection>) {
        (index, rules.iter().map(|r| Rejection { rule: Rule::named(r), reason: String::new() }).collect())
    }

    fn of(file: &StudyFile, plan: &Plan, list: &[(usize, Vec<Rejection>)]) -> Option<Retakes> {
        Retakes::of(file, plan, list.iter().map(|(i, r)| (*i, r.as_slice())))
    }

    fn plan(blocks: usize, retakes: usize) -> Plan {
        Plan {
            labels: vec!["a".into(), "b".into()],
            order_seed: None,
            slots: crate::schedule::interleaved(2, blocks, None),
            layout: Default::default(),
            traced: Vec::new(),
            retakes,
        }
    }

    #[test]
    fn only_blocks_spoiled_by_the_host_are_retaken_up_to_the_limit() {
        let file = |r: Option<u32>| {
            let text = "model='/m.gguf'\nserver_args=''\nsamples=3\nvariants=['a=/b','b=/b']\n";
            StudyFile { retakes: r, ..toml::from_str(text).unwrap() }
        };
        // Slot 3 is block 2's second sample, slot 5 block 3's: other-workload and locked-length.
        let list = [rejected(3, &["other-workload"]), rejected(5, &["locked-length", "other-workload"])];
        let r = of(&file(None), &plan(3, 0), &list).unwrap();
        assert_eq!((r.spoiled.clone(), r.due()), (vec![2], true), "{r:?}");
        let r = of(&file(None), &plan(4, 1), &list).unwrap();
        assert!(!r.due(), "{r:?}");
        assert!(of(&file(Some(0)), &plan(3, 0), &list).is_some_and(|r| !r.due()));
        assert!(of(&file(None), &plan(3, 0), &list[1..]).is_none(), "the variant is wrong: no retake");
        // A retake spoiled again asks for another, until the limit.
        let again = [rejected(3, &["abprof-cpu"]), rejected(7, &["power-state-changed"])];
        let r = of(&file(Some(1)), &plan(4, 1), &again).unwrap();
        assert_eq!((r.spoiled.clone(), r.due()), (vec![2, 4], false));
        assert!(r.line().contains("limit of 1 is reached"), "{}", r.line());
    }
}
