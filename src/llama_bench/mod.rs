//! llama-bench's outputs, read as the community writes them (`-o json`, `-o jsonl`, `-o csv`,
//! `-o sql`): one row per test a run measured, with the build, the model, the test's shape
//! (prompt, generated and depth tokens) and its tokens per second. Every format carries the same
//! fields (`test::get_fields()` in llama-bench.cpp: more of them in newer builds, `n_depth` since
//! mid-2025), so a row keeps the ones it knows by name and the rest as text (docs/methodology.md
//! §15 "llama-bench results").
mod tests_asked;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub(crate) use tests_asked::{tests_asked, BenchTest};

/// Which of llama-bench's outputs a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Format {
    Json,
    Jsonl,
    Csv,
    Sql,
}

impl Format {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::Sql => "sql",
        }
    }
}

/// One test of one llama-bench run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BenchRow {
    pub(crate) build_commit: String,
    pub(crate) build_number: Option<i64>,
    pub(crate) model_filename: String,
    pub(crate) model_type: String,
    pub(crate) backends: String,
    pub(crate) gpu_info: String,
    pub(crate) n_prompt: u64,
    pub(crate) n_gen: u64,
    /// Tokens already in the context (`-d`); 0 in builds before the field.
    pub(crate) n_depth: u64,
    pub(crate) test_time: String,
    /// Mean tokens per second over the repetitions, and their standard deviation.
    pub(crate) avg_ts: f64,
    pub(crate) stddev_ts: f64,
    /// Each repetition's tokens per second (JSON and JSONL only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) samples_ts: Vec<f64>,
    /// Every other field as llama-bench printed it (`n_gpu_layers`, `flash_attn`, `type_k`, …).
    pub(crate) settings: BTreeMap<String, String>,
}

impl BenchRow {
    /// The test as llama-bench's table and compare-llama-bench.py name it: `pp512`, `tg128`,
    /// `pp512+tg128`, with ` @ d4096` at a depth.
    pub(crate) fn test(&self) -> String {
        self.test_id().name()
    }

    /// The test this row measured.
    pub(crate) fn test_id(&self) -> BenchTest {
        let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        BenchTest { n_prompt: count(self.n_prompt), n_gen: count(self.n_gen), n_depth: count(self.n_depth) }
    }
}

/// The fields a row must have to be one: a file without them is not llama-bench's.
const NEEDED: [&str; 5] = ["build_commit", "model_filename", "n_prompt", "n_gen", "avg_ts"];

/// Reads a llama-bench output of any format, named by its content; one line naming what is
/// wrong and what llama-bench writes where it is not one.
pub(crate) fn parse(text: &str) -> Result<(Format, Vec<BenchRow>), String> {
    // stderr captured with stdout (the backends' banners) may come first: the output starts at
    // its first line of one of the formats.
    let starts = |l: &str| {
        let l = l.trim_start();
        l.starts_with('[')
            || l.starts_with('{')
            || l.starts_with("CREATE TABLE")
            || l.starts_with("INSERT INTO")
            || l.starts_with("| model")
            || is_csv_header(l)
    };
    let at = text.lines().position(starts).ok_or(NOT_BENCH)?;
    let body: String = text.lines().skip(at).collect::<Vec<_>>().join("\n");
    let first = body.trim_start();
    let (format, maps) = if first.starts_with('[') {
        (Format::Json, json_maps(first)?)
    } else if first.starts_with('{') {
        (Format::Jsonl, jsonl_maps(first)?)
    } else if first.starts_with("CREATE TABLE") || first.starts_with("INSERT INTO") {
        (Format::Sql, sql_maps(first)?)
    } else if first.starts_with("| model") {
        return Err(MARKDOWN.into());
    } else {
        (Format::Csv, csv_maps(first)?)
    };
    if maps.is_empty() {
        return Err(format!("a llama-bench {} output with no test in it: the run measured nothing", format.name()));
    }
    let rows = maps.into_iter().enumerate().map(|(i, m)| row(m).map_err(|e| format!("test {}: {e}", i + 1)));
    Ok((format, rows.collect::<Result<_, _>>()?))
}

const MARKDOWN: &str = "llama-bench's table (-o md, its default) names no build per row and rounds t/s: run it again with -o json (or jsonl, csv, sql) to import it";

/// llama-bench's CSV header: its fields joined by bare commas, `build_commit` first and the
/// rate among them.
fn is_csv_header(line: &str) -> bool {
    let fields: Vec<&str> = line.split(',').collect();
    fields.first() == Some(&"build_commit") && fields.contains(&"avg_ts")
}

const NOT_BENCH: &str = "not a llama-bench output: llama-bench writes a JSON array (-o json), one JSON object a line (-o jsonl), a CSV whose header starts with build_commit (-o csv) or SQL INSERTs into llama_bench (-o sql)";

/// A field's value as text (JSON numbers and booleans as llama-bench's other formats print them).
fn text_of(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Bool(b) => Some(if *b { "1" } else { "0" }.into()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Array(a) => {
            Some(a.iter().filter_map(text_of).collect::<Vec<_>>().join(",")).filter(|_| !a.is_empty())
        }
        serde_json::Value::Null | serde_json::Value::Object(_) => None,
    }
}

fn map_of(obj: &serde_json::Map<String, serde_json::Value>) -> BTreeMap<String, String> {
    obj.iter().filter_map(|(k, v)| Some((k.clone(), text_of(v)?))).collect()
}

fn json_maps(text: &str) -> Result<Vec<BTreeMap<String, String>>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("a JSON array that does not parse: {e}"))?;
    let items = v.as_array().ok_or("a JSON document that is not an array of tests")?;
    items
        .iter()
        .map(|i| i.as_object().map(map_of).ok_or_else(|| "an array item that is not an object".into()))
        .collect()
}

/// One object a line; other lines (stderr mixed in) are not the output's.
fn jsonl_maps(text: &str) -> Result<Vec<BTreeMap<String, String>>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with('{'))
        .map(|(n, l)| {
            let v: serde_json::Value =
                serde_json::from_str(l).map_err(|e| format!("line {} is not a JSON object: {e}", n + 1))?;
            v.as_object().map(map_of).ok_or_else(|| format!("line {} is not a JSON object", n + 1))
        })
        .collect()
}

/// The header, then its rows; a header repeated (several runs' outputs joined) and lines that
/// are no row (stderr) are left out.
fn csv_maps(text: &str) -> Result<Vec<BTreeMap<String, String>>, String> {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let mut kept = vec![header];
    kept.extend(lines.filter(|l| *l != header && l.starts_with('"')));
    let text = kept.join("\n");
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().map_err(|e| e.to_string())?.iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            let r = r.map_err(|e| format!("a CSV row that does not parse: {e}"))?;
            Ok(header.iter().cloned().zip(r.iter().map(String::from)).collect())
        })
        .collect()
}

/// `INSERT INTO llama_bench (f, …) VALUES ('v', …);` (the table was `test` in early builds).
fn sql_maps(text: &str) -> Result<Vec<BTreeMap<String, String>>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| l.starts_with("INSERT INTO")) {
        let bad = || format!("line {}: not `INSERT INTO llama_bench (…) VALUES (…);`", n + 1);
        let (head, values) = line.split_once(" VALUES ").ok_or_else(bad)?;
        let fields = head.split_once('(').and_then(|(_, f)| f.trim_end().strip_suffix(')')).ok_or_else(bad)?;
        let fields: Vec<String> = fields.split(',').map(|f| f.trim().to_string()).collect();
        let values = values.trim_end().trim_end_matches(';').trim();
        let values = values.strip_prefix('(').and_then(|v| v.strip_suffix(')')).ok_or_else(bad)?;
        let values = sql_values(values).ok_or_else(bad)?;
        if values.len() != fields.len() {
            return Err(format!("line {}: {} fields and {} values", n + 1, fields.len(), values.len()));
        }
        out.push(fields.into_iter().zip(values).collect());
    }
    Ok(out)
}

/// `'a', 'b''c', 3` → [a, b'c, 3].
fn sql_values(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut v = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next()? {
                    '\'' if chars.peek() == Some(&'\'') => {
                        chars.next();
                        v.push('\'');
                    }
                    '\'' => break,
                    c => v.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek().filter(|c| **c != ',') {
                v.push(c);
                chars.next();
            }
            v = v.trim().to_string();
        }
        out.push(v);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(out),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

fn row(mut m: BTreeMap<String, String>) -> Result<BenchRow, String> {
    if let Some(missing) = NEEDED.iter().find(|f| !m.contains_key(**f)) {
        return Err(format!("no {missing} field: not a llama-bench test row"));
    }
    let mut take = |k: &str| m.remove(k).unwrap_or_default();
    let int = |k: &str, v: String| -> Result<u64, String> {
        if v.is_empty() {
            return Ok(0);
        }
        v.parse().map_err(|_| format!("{k} {v:?} is not a count"))
    };
    let float = |k: &str, v: String| -> Result<f64, String> {
        v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| format!("{k} {v:?} is not a number"))
    };
    let samples_ts = take("samples_ts");
    let samples_ts: Vec<f64> = if samples_ts.is_empty() {
        Vec::new()
    } else {
        samples_ts.split(',').map(|x| float("samples_ts", x.trim().to_string())).collect::<Result<_, _>>()?
    };
    let n_prompt = take("n_prompt");
    let n_gen = take("n_gen");
    let n_depth = take("n_depth");
    let avg_ts = take("avg_ts");
    let stddev_ts = take("stddev_ts");
    let build_number = take("build_number");
    let r = BenchRow {
        build_commit: take("build_commit"),
        build_number: build_number.parse().ok(),
        model_filename: take("model_filename"),
        model_type: take("model_type"),
        backends: take("backends"),
        gpu_info: take("gpu_info"),
        test_time: take("test_time"),
        n_prompt: int("n_prompt", n_prompt)?,
        n_gen: int("n_gen", n_gen)?,
        n_depth: int("n_depth", n_depth)?,
        avg_ts: float("avg_ts", avg_ts)?,
        stddev_ts: if stddev_ts.is_empty() { 0.0 } else { float("stddev_ts", stddev_ts)? },
        samples_ts,
        settings: BTreeMap::new(),
    };
    m.remove("samples_ns");
    Ok(BenchRow { settings: m, ..r })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_values_keep_quotes_commas_and_bare_numbers() {
        assert_eq!(
            sql_values("'a', 'b''c', 'CUDA,BLAS', 3").unwrap(),
            vec!["a".to_string(), "b'c".into(), "CUDA,BLAS".into(), "3".into()]
        );
        assert_eq!(sql_values("'open"), None);
    }

    #[test]
    fn a_test_is_named_as_llama_bench_names_it() {
        let (_, rows) = parse(
            "build_commit,build_number,model_filename,model_type,n_prompt,n_gen,n_depth,avg_ts,stddev_ts\n\
             \"abc\",\"1\",\"m.gguf\",\"qwen3moe\",\"512\",\"0\",\"0\",\"100.5\",\"1.5\"\n\
             \"abc\",\"1\",\"m.gguf\",\"qwen3moe\",\"0\",\"128\",\"4096\",\"50.25\",\"0.5\"\n\
             \"abc\",\"1\",\"m.gguf\",\"qwen3moe\",\"512\",\"128\",\"0\",\"60\",\"0\"\n",
        )
        .unwrap();
        let tests: Vec<String> = rows.iter().map(BenchRow::test).collect();
        assert_eq!(tests, ["pp512", "tg128 @ d4096", "pp512+tg128"]);
    }

    #[test]
    fn files_that_are_not_llama_bench_outputs_are_refused_in_one_line() {
        for (text, says) in [
            ("hello world\n", "not a llama-bench output"),
            ("[1, 2]", "not an object"),
            ("[]", "no test in it"),
            ("[{\"build_commit\": \"x\"}]", "no model_filename field"),
            ("{\"a\": 1}\n{not json\n", "line 2 is not a JSON object"),
            ("INSERT INTO llama_bench (build_commit) VALUES ('x', 'y');", "1 fields and 2 values"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says) && !e.contains('\n'), "{text:?}: {e}");
        }
    }
}

#[cfg(test)]
mod fixture_tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-bench").join(name);
        String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned()
    }

    /// Every real output kept (tests/fixtures/llama-bench/README.md), eleven llama.cpp builds from
    /// b1275 to b10788 and the pinned tree, read in its format with its build and tests.
    #[test]
    fn real_outputs_of_every_format_and_build_read_with_their_tests() {
        let cases: &[(&str, Format, &str, usize, &str)] = &[
            ("llamacpp-readme-b1275-cuda-rtx3090ti.json", Format::Json, "3469684", 2, "pp512"),
            ("llamacpp-readme-b1275-cuda-rtx3090ti.csv", Format::Csv, "3469684", 2, "pp512"),
            ("llamacpp-readme-b1275-cuda-rtx3090ti.sql", Format::Sql, "3469684", 2, "pp512"),
            ("llamacpp-readme-b5163-cuda-rtx4080.json", Format::Json, "8cf427ff", 2, "pp512"),
            ("llamacpp-readme-b5163-cuda-rtx4080.jsonl", Format::Jsonl, "8cf427ff", 2, "pp512"),
            ("llamacpp-readme-b5163-cuda-rtx4080.csv", Format::Csv, "8cf427ff", 2, "pp512"),
            ("llamacpp-readme-b5163-cuda-rtx4080.sql", Format::Sql, "8cf427ff", 2, "pp512"),
            ("pinned-0c1e57098-b0-cpu-epyc.json", Format::Json, "0c1e57098", 2, "pp64"),
            ("pinned-0c1e57098-b0-cpu-epyc.jsonl", Format::Jsonl, "0c1e57098", 2, "pp64"),
            ("pinned-0c1e57098-b0-cpu-epyc.csv", Format::Csv, "0c1e57098", 2, "pp64"),
            ("pinned-0c1e57098-b0-cpu-epyc.sql", Format::Sql, "0c1e57098", 2, "pp64"),
        ];
        for &(name, format, commit, tests, first) in cases {
            let (got, rows) = parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got, format, "{name}");
            assert_eq!(rows.len(), tests, "{name}");
            assert!(rows.iter().all(|r| r.build_commit == commit && r.avg_ts > 0.0), "{name}: {rows:?}");
            assert_eq!(rows[0].test(), first, "{name}");
        }
        // The other builds: each file read whole, every row a test with a rate.
        for name in [
            "brayniac-b5606-cuda-rtx4090.json",
            "fork-ikllama-b3599-cpu-xeon.json",
            "prismml-b10743-cuda-rtx5090.json",
            "lhl-b5863-rocm-gfx1151-excerpt.jsonl",
            "lhl-b6111-vulkan-gfx1151-excerpt.jsonl",
            "lhl-b6865-rocm-gfx1151-with-stderr.jsonl",
            "lhl-b6867-rocm-gfx1151-gpt-oss-20b.jsonl",
            "kyuz0-b9927-rocm-gfx1151.jsonl",
            "appledoc-b9010-metal-m4pro.csv",
            "moearc-b10788-sycl-arcb580.csv",
            "fork-ttft-readme-b6321-blas-cpu.sql",
        ] {
            let (_, rows) = parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!rows.is_empty() && rows.iter().all(|r| r.avg_ts > 0.0 && !r.build_commit.is_empty()), "{name}");
        }
        // Depths and the samples of each repetition.
        let (_, rows) = parse(&fixture("lhl-b6865-rocm-gfx1151-with-stderr.jsonl")).unwrap();
        assert!(
            rows.iter().any(|r| r.test().ends_with("@ d4096")),
            "{:?}",
            rows.iter().map(BenchRow::test).collect::<Vec<_>>()
        );
        assert!(rows.iter().all(|r| !r.samples_ts.is_empty()));
        // The markdown table is refused with the flag that writes an importable one.
        let e = parse(&fixture("kyuz0-b6609-rocm-gfx1151-with-stderr.md")).unwrap_err();
        assert!(e.contains("-o json"), "{e}");
    }
}
