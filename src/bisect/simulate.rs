//! The bisect's decision procedure on simulated steps (docs/methodology.md §19), through the
//! production judge and the summary's sequential study (`summary::simulate`).
#[cfg(test)]
mod tests {
    /// A bisect (docs/methodology.md §19) of a −6% step at 3% noise over 100 commits, each probe
    /// a sequential study of at most `MAX` blocks decided by the production judge: it names the
    /// right first bad commit at least 90% of the time, with at most 1% wrong calls per probe.
    #[test]
    fn a_bisect_of_a_6_percent_step_names_the_first_bad_commit() {
        use crate::bisect::judge::{
            call, call_at_cap, reference_clear, reference_settled, threshold_pct, Call, Reading,
        };
        use crate::summary::simulate::{rng, sequential_study, Host};
        use crate::summary::Metric;
        use rand::Rng;
        const MAX: u32 = 20;
        let reading = |ci: Option<crate::summary::stats::ChangeCi>, n: usize| Reading {
            metric: Metric::ServerDecodeTps,
            change_pct: ci.map(|c| c.center_pct()),
            ci,
            verdict: None,
            accepted: [n, n],
        };
        let rule = crate::study::file::AdaptiveRule {
            until_ci_pct: None,
            until_decided: false,
            mei_pct: None,
            max_samples: MAX,
        };
        let host = Host::iid(0.03);
        let mut rng = rng(19);
        let (trials, mut named, mut probes, mut wrong, mut samples, mut no_reference) = (2000, 0, 0, 0, 0, 0);
        for _ in 0..trials {
            let first_bad = rng.random_range(1..=100usize);
            let (ci, n) = sequential_study(&mut rng, &host, 0.94, 3, rule, false, |c| {
                reference_settled(&reading(Some(*c), 0), None)
            });
            samples += n;
            let r = reading(ci, n);
            if !reference_clear(&r, None) {
                no_reference += 1;
                continue;
            }
            let t = threshold_pct(r.reference_change().expect("clear"), None);
            let (mut good, mut bad) = (0usize, 100usize);
            let mut ok = true;
            while bad - good > 1 {
                let mid = (good + bad) / 2;
                let is_bad = mid >= first_bad;
                let effect = if is_bad { 0.94 } else { 1.0 };
                let (ci, n) = sequential_study(&mut rng, &host, effect, 3, rule, false, |c| {
                    call(&reading(Some(*c), 0), t) != Call::Undecided
                });
                probes += 1;
                samples += n;
                // A step still undecided at the cap is called by its interval's centre (§19).
                let decide = if n >= MAX as usize { call_at_cap } else { call };
                match decide(&reading(ci, n), t) {
                    Call::Bad => {
                        wrong += usize::from(!is_bad);
                        bad = mid;
                    }
                    Call::Good => {
                        wrong += usize::from(is_bad);
                        good = mid;
                    }
                    Call::Undecided => {
                        ok = false;
                        break;
                    }
                }
            }
            named += usize::from(ok && bad == first_bad);
        }
        let (named, wrong) = (named as f64 / trials as f64, wrong as f64 / probes as f64);
        eprintln!(
            "bisect, -6% at 3% noise, max {MAX}: first bad named {named:.4}, wrong calls per probe {wrong:.4}, reference unclear {no_reference}, mean samples per study {:.2}",
            samples as f64 / (probes + trials) as f64
        );
        assert!(named >= 0.90, "first bad named in {named}");
        assert!(wrong <= 0.01, "wrong calls per probe {wrong}");
    }
}
