//! A llama-bench sample's run as its record keeps it (docs/methodology.md §4.4): the tests it
//! asked, each result line as llama-bench printed it with the moment it was seen, and what in
//! them is not what was asked.
use crate::llama_bench::{BenchRow, BenchTest};
use serde::{Deserialize, Serialize};

/// One test's result as llama-bench printed it, with the moment abprof saw its line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BenchResult {
    pub(crate) row: BenchRow,
    /// CLOCK_MONOTONIC ns at which the line was first seen (within the load's poll, 10 ms, of the test's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seen_mono_ns: Option<u64>,
}

/// A llama-bench sample's run (the record's `extra.llama_bench`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BenchRun {
    /// The tests the sample asked for, in the order llama-bench runs them.
    pub(crate) asked: Vec<BenchTest>,
    /// The KV cache type the variant asked for (`kv=`), which every result must report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cache_type: Option<String>,
    /// Each result line, in the order printed.
    pub(crate) results: Vec<BenchResult>,
    /// Why the output is not llama-bench's JSONL, where it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unreadable: Option<String>,
}

impl BenchRun {
    /// The test's tokens per second, where exactly one result of one repetition measured it.
    pub(crate) fn tps(&self, test: BenchTest) -> Option<f64> {
        let mut of = self.results.iter().filter(|r| r.row.test_id() == test);
        match (of.next(), of.next()) {
            (Some(r), None) if r.row.samples_ts.len() <= 1 => Some(r.row.avg_ts),
            _ => None,
        }
    }

    /// What this run printed that is not what it asked, one phrase each (empty: nothing).
    pub(crate) fn mismatches(&self) -> Vec<String> {
        let mut out = Vec::new();
        let printed: Vec<BenchTest> = self.results.iter().map(|r| r.row.test_id()).collect();
        for t in &self.asked {
            match printed.iter().filter(|p| *p == t).count() {
                0 => out.push(format!("{} asked, not printed", t.name())),
                1 => {}
                n => out.push(format!("{} printed {n} times", t.name())),
            }
        }
        for t in printed.iter().filter(|p| !self.asked.contains(p)) {
            out.push(format!("{} printed, not asked", t.name()));
        }
        for r in &self.results {
            let reps = r.row.samples_ts.len();
            if reps > 1 {
                out.push(format!("{}: {reps} repetitions, not 1", r.row.test()));
            }
            if let Some(want) = &self.cache_type {
                for key in ["type_k", "type_v"] {
                    match r.row.settings.get(key) {
                        Some(got) if got != want => {
                            out.push(format!("{}: {key} {got}, not the asked {want}", r.row.test()))
                        }
                        _ => {}
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(line: &str) -> BenchResult {
        let (_, rows) = crate::llama_bench::parse(line).unwrap();
        BenchResult { row: rows.into_iter().next().unwrap(), seen_mono_ns: None }
    }

    /// A pinned-tree llama-bench JSONL line of test (`n_prompt`, `n_gen`) at `ts` t/s, KV `kv`.
    fn line(n_prompt: u32, n_gen: u32, ts: f64, kv: &str) -> String {
        format!(
            r#"{{"build_commit": "0c1e570", "build_number": 1, "model_filename": "m.gguf", "model_type": "x", "n_prompt": {n_prompt}, "n_gen": {n_gen}, "n_depth": 0, "type_k": "{kv}", "type_v": "{kv}", "test_time": "t", "avg_ns": 1, "stddev_ns": 0, "avg_ts": {ts}, "stddev_ts": 0, "samples_ns": [ 1 ], "samples_ts": [ {ts} ]}}"#
        )
    }

    #[test]
    fn a_run_says_which_tests_it_printed_otherwise_than_asked() {
        let pp = BenchTest { n_prompt: 64, n_gen: 0, n_depth: 0 };
        let tg = BenchTest { n_prompt: 0, n_gen: 16, n_depth: 0 };
        let run = |results: Vec<BenchResult>, kv: Option<&str>| BenchRun {
            asked: vec![pp, tg],
            cache_type: kv.map(String::from),
            results,
            unreadable: None,
        };
        let good = run(vec![result(&line(64, 0, 900.0, "q8_0")), result(&line(0, 16, 30.0, "q8_0"))], Some("q8_0"));
        assert!(good.mismatches().is_empty(), "{:?}", good.mismatches());
        assert_eq!(good.tps(pp), Some(900.0));
        assert_eq!(good.tps(tg), Some(30.0));
        let other = run(vec![result(&line(64, 0, 900.0, "f16")), result(&line(0, 32, 30.0, "f16"))], Some("q8_0"));
        let said = other.mismatches().join("; ");
        assert!(said.contains("tg16 asked, not printed") && said.contains("tg32 printed, not asked"), "{said}");
        assert!(said.contains("type_k f16, not the asked q8_0"), "{said}");
        assert_eq!(other.tps(tg), None);
        let twice = run(vec![result(&line(64, 0, 900.0, "f16")), result(&line(64, 0, 901.0, "f16"))], None);
        assert!(twice.mismatches().iter().any(|m| m == "pp64 printed 2 times"));
        assert_eq!(twice.tps(pp), None, "two results of one test give no one value");
    }
}
