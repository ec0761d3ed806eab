//! More samples for a study that has run: its plan grows by whole interleaved blocks, the samples
//! already taken keep their slots (the order of `N` blocks is the first part of the order of
//! `N + k`, shuffle seed included), and a resumed run takes the new slots (docs/methodology.md §5).
use super::evidence::{read_json, write_json, Evidence, Plan, SampleLayout};
use super::file::StudyFile;
use crate::schedule::interleaved;
use anyhow::{bail, Result};
use std::path::Path;

/// Grows the study in `root` to `samples` per variant; nothing changes when it has that many.
pub(crate) fn add_blocks(root: &Path, samples: u32) -> Result<()> {
    let ev = Evidence::open(root)?.lock()?;
    let mut file = StudyFile::load(&ev.study_toml())?;
    let mut plan: Plan = read_json(&ev.path("plan.json"))?;
    if plan.layout != SampleLayout::Study || !plan.traced.is_empty() {
        bail!("{} is not a plain A/B study: only an A/B study grows by blocks", root.display());
    }
    let slots = interleaved(plan.labels.len(), samples as usize, plan.order_seed);
    if slots.len() < plan.slots.len() || slots[..plan.slots.len()] != plan.slots[..] {
        bail!("the plan of {} is not the first blocks of a {samples}-sample plan: it cannot grow", root.display());
    }
    // The plan first: a crash before the study file is rewritten leaves a plan that a second
    // call finds already grown.
    plan.slots = slots;
    write_json(&ev.path("plan.json"), &plan)?;
    if file.samples != samples {
        file.samples = samples;
        crate::atomic_file::write_atomic(&ev.study_toml(), file.to_toml().as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_grows_by_blocks_and_keeps_its_slots() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("s");
        let ev = Evidence::create(&root).unwrap();
        let file: StudyFile = toml::from_str(
            "model='/m'\ntokens=8\nsamples=3\nvariants=['a=/bin/true','b=/bin/true']\nprompt_tokens=50\norder_seed=7\n",
        )
        .unwrap();
        crate::atomic_file::write_atomic(&ev.study_toml(), file.to_toml().as_bytes()).unwrap();
        let plan = Plan {
            labels: vec!["a".into(), "b".into()],
            order_seed: Some(7),
            slots: interleaved(2, 3, Some(7)),
            layout: SampleLayout::Study,
            traced: vec![],
        };
        write_json(&ev.path("plan.json"), &plan).unwrap();
        drop(ev);
        add_blocks(&root, 5).unwrap();
        let grown: Plan = read_json(&root.join("plan.json")).unwrap();
        assert_eq!(grown.slots.len(), 10);
        assert_eq!(grown.slots[..6], plan.slots[..]);
        assert_eq!(StudyFile::load(&root.join("study.toml")).unwrap().samples, 5);
        // Again: nothing to do.
        add_blocks(&root, 5).unwrap();
        assert_eq!(read_json::<Plan>(&root.join("plan.json")).unwrap(), grown);
        // Fewer is not a growth.
        assert!(add_blocks(&root, 2).is_err());
    }
}
