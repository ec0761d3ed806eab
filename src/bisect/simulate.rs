//! The bisect's decision procedure on simulated steps (docs/methodology.md §19), through the
//! production judge, the summary's interval and the pooled probe interval.
#[cfg(test)]
mod tests {
    use crate::bisect::judge::{call, call_at_cap, reference_clear, reference_settled, threshold_pct, Call, Reading};
    use crate::summary::simulate::{first_blocks, rng, study, Host, HOSTS};
    use crate::summary::stats::{
        change_ci, paired_log_ratios, probe_change_ci, ChangeCi, PooledSpread, MIN_VALUES, PROBE_FIRST_BLOCKS,
    };
    use crate::summary::Metric;
    use rand::Rng;

    const MAX: usize = 20;

    fn reading(ci: Option<ChangeCi>, n: usize) -> Reading {
        Reading {
            metric: Metric::ServerDecodeTps,
            change_pct: ci.map(|c| c.center_pct()),
            ci,
            verdict: None,
            accepted: [n, n],
        }
    }

    /// What a set of simulated bisects found.
    #[derive(Default)]
    struct Outcome {
        bisects: usize,
        named: usize,
        probes: usize,
        wrong: usize,
        reference_blocks: usize,
        probe_blocks: usize,
        no_reference: usize,
    }

    impl Outcome {
        fn named(&self) -> f64 {
            self.named as f64 / self.bisects as f64
        }
        fn wrong(&self) -> f64 {
            self.wrong as f64 / self.probes.max(1) as f64
        }
        fn line(&self, what: &str) -> String {
            format!(
                "bisect, {what}, max {MAX}: first bad named {:.4}, wrong calls per probe {:.4}, reference unclear {}, mean blocks: reference {:.2}, probe {:.2}",
                self.named(),
                self.wrong(),
                self.no_reference,
                self.reference_blocks as f64 / self.bisects as f64,
                self.probe_blocks as f64 / self.probes.max(1) as f64
            )
        }
    }

    /// `trials` bisects over 100 commits of a step to `1 − step` on `host`, each as `drive` runs
    /// one: the reference (good against bad) from 3 blocks until settled, then probes from one
    /// blocks against the pooled spread of the steps before them (from 3 without `pooled`, the
    /// rule before §19's pooling), each called when decided or by its centre at `MAX` blocks.
    fn bisects(host: &Host, step: f64, trials: usize, seed: u64, pooled: bool) -> Outcome {
        let mut rng = rng(seed);
        let mut o = Outcome { bisects: trials, ..Outcome::default() };
        for _ in 0..trials {
            let first_bad = rng.random_range(1..=100usize);
            let [base, cand] = study(&mut rng, host, MAX, 1.0 - step);
            let look = |n: usize| (first_blocks(&base, n), first_blocks(&cand, n));
            let mut n = 3;
            let reference = loop {
                let (b, c) = look(n);
                let r = reading(change_ci(&b, &c, 0.95, None), n);
                if n >= MAX || reference_settled(&r, None) {
                    break r;
                }
                n += 1;
            };
            o.reference_blocks += n;
            if !reference_clear(&reference, None) {
                o.no_reference += 1;
                continue;
            }
            let (b, c) = look(n);
            let mut pool = PooledSpread::default().with(&paired_log_ratios(&b, &c));
            let t = threshold_pct(reference.reference_change().expect("clear"), None);
            let (mut good, mut bad) = (0usize, 100usize);
            let mut ok = true;
            while bad - good > 1 {
                let mid = (good + bad) / 2;
                let is_bad = mid >= first_bad;
                let [base, cand] = study(&mut rng, host, MAX, if is_bad { 1.0 - step } else { 1.0 });
                let probe = |n: usize| {
                    let (b, c) = (first_blocks(&base, n), first_blocks(&cand, n));
                    let ratios = paired_log_ratios(&b, &c);
                    let ci = if pooled { probe_change_ci(&b, &c, pool) } else { change_ci(&b, &c, 0.95, None) };
                    (reading(ci, n), ratios)
                };
                let mut n = if pooled && pool.df >= (MIN_VALUES - 1) as f64 { PROBE_FIRST_BLOCKS } else { 3 };
                let (r, ratios) = loop {
                    let (r, ratios) = probe(n);
                    if n >= MAX || call(&r, t) != Call::Undecided {
                        break (r, ratios);
                    }
                    n += 1;
                };
                o.probes += 1;
                o.probe_blocks += n;
                if pooled {
                    pool = pool.with(&ratios);
                }
                // A step still undecided at the cap is called by its interval's centre (§19).
                let decide = if n >= MAX { call_at_cap } else { call };
                match decide(&r, t) {
                    Call::Bad => {
                        o.wrong += usize::from(!is_bad);
                        bad = mid;
                    }
                    Call::Good => {
                        o.wrong += usize::from(is_bad);
                        good = mid;
                    }
                    Call::Undecided => {
                        ok = false;
                        break;
                    }
                }
            }
            o.named += usize::from(ok && bad == first_bad);
        }
        o
    }

    /// A bisect (docs/methodology.md §19) of a −6% step at 3% noise over 100 commits, each probe
    /// a sequential study of at most `MAX` blocks decided by the production judge: it names the
    /// right first bad commit at least 90% of the time, with at most 1% wrong calls per probe.
    #[test]
    fn a_bisect_of_a_6_percent_step_names_the_first_bad_commit() {
        let o = bisects(&Host::iid(0.03), 0.06, 2000, 19, true);
        eprintln!("{}", o.line("-6% at 3% noise, pooled probes"));
        let before = bisects(&Host::iid(0.03), 0.06, 2000, 19, false);
        eprintln!("{}", before.line("-6% at 3% noise, each probe from its own 3 blocks (before pooling)"));
        assert!(o.named() >= 0.90, "first bad named in {}", o.named());
        assert!(o.wrong() <= 0.01, "wrong calls per probe {}", o.wrong());
    }

    /// Pooling the probes' spread keeps the calls right on every simulated host but the one with
    /// outliers (drift, a rejected sample) and calls a clear step, as the demo's, from fewer
    /// blocks than a probe's own three. On a host where one sample in ten is 15–30% slow neither
    /// rule bisects a −6% step (printed, docs/methodology.md §19).
    #[test]
    fn pooled_probes_stay_right_on_every_host_and_call_a_clear_step_sooner() {
        let per_probe = |o: &Outcome| o.probe_blocks as f64 / o.probes as f64;
        for (i, host) in HOSTS.iter().enumerate() {
            let o = bisects(host, 0.06, 1000, 40 + i as u64, true);
            let own = bisects(host, 0.06, 1000, 40 + i as u64, false);
            eprintln!("{}\n{}", o.line(&format!("-6% on {host:?}, pooled")), own.line("own 3 blocks"));
            if host.outliers == 0.0 {
                assert!(o.wrong() <= 0.01, "{host:?}: wrong calls per probe {}", o.wrong());
                assert!(o.named() >= 0.90, "{host:?}: first bad named in {}", o.named());
                assert!(per_probe(&o) <= per_probe(&own), "{host:?}: pooled probes take no more blocks");
            }
        }
        let (clear, own) =
            (bisects(&Host::iid(0.03), 0.3, 1000, 60, true), bisects(&Host::iid(0.03), 0.3, 1000, 60, false));
        eprintln!("{}\n{}", clear.line("-30% at 3% noise, pooled"), own.line("-30% at 3% noise, own 3 blocks"));
        assert!(clear.named() >= 0.99 && clear.wrong() <= 0.01, "{}", clear.line("-30%"));
        assert!(per_probe(&clear) < 2.5 && per_probe(&own) >= 3.0, "{} vs {}", per_probe(&clear), per_probe(&own));
    }
}
