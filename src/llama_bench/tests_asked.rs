//! The tests a llama-bench command line asks for, named as llama-bench names them: its `-p`,
//! `-n`, `-pg` and `-d` lists (comma lists and `first-last+step` / `first-last*mult` ranges, each
//! flag given once or more) crossed the way `get_cmd_params_instances` crosses them in the pinned
//! tree's tools/llama-bench/llama-bench.cpp: for each depth, the prompt tests, then the generation
//! tests, then the prompt+generation pairs; a 0 in `-p` or `-n` runs none of that kind. A study of
//! llama-bench samples judges each of these tests on its own (docs/methodology.md §4.4).
use serde::{Deserialize, Serialize};

/// One llama-bench test: prompt tokens, generated tokens, and tokens already in the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct BenchTest {
    pub(crate) n_prompt: u32,
    pub(crate) n_gen: u32,
    #[serde(default)]
    pub(crate) n_depth: u32,
}

impl BenchTest {
    /// llama-bench's and compare-llama-bench.py's name: `pp512`, `tg128`, `pp512+tg128`, with
    /// ` @ d4096` at a depth.
    pub(crate) fn name(self) -> String {
        let base = match (self.n_prompt, self.n_gen) {
            (p, 0) => format!("pp{p}"),
            (0, g) => format!("tg{g}"),
            (p, g) => format!("pp{p}+tg{g}"),
        };
        match self.n_depth {
            0 => base,
            d => format!("{base} @ d{d}"),
        }
    }

    /// The name without spaces (`tg128@d4096`): the test's part of its metric's stored name.
    pub(crate) fn slug(self) -> String {
        self.name().replace(" @ ", "@")
    }

    /// The test a [`slug`](Self::slug) names.
    pub(crate) fn from_slug(slug: &str) -> Option<BenchTest> {
        let (base, depth) = match slug.split_once('@') {
            Some((b, d)) => (b, d.strip_prefix('d')?.parse().ok()?),
            None => (slug, 0),
        };
        let count = |s: &str, prefix: &str| s.strip_prefix(prefix)?.parse::<u32>().ok().filter(|n| *n > 0);
        let (n_prompt, n_gen) = match base.split_once('+') {
            Some((p, g)) => (count(p, "pp")?, count(g, "tg")?),
            None => match count(base, "pp") {
                Some(p) => (p, 0),
                None => (0, count(base, "tg")?),
            },
        };
        Some(BenchTest { n_prompt, n_gen, n_depth: depth })
    }
}

/// The flags that take a list of values, each a test axis or a setting: a setting given two
/// values (`-fa 0,1`) makes llama-bench run every test twice, under settings one variant cannot
/// hold apart (docs/methodology.md §4.4).
const LIST_SETTINGS: [&str; 30] = [
    "-b",
    "--batch-size",
    "-ub",
    "--ubatch-size",
    "-ctk",
    "--cache-type-k",
    "-ctv",
    "--cache-type-v",
    "-t",
    "--threads",
    "-ngl",
    "--n-gpu-layers",
    "-ncmoe",
    "--n-cpu-moe",
    "-sm",
    "--split-mode",
    "-fa",
    "--flash-attn",
    "-mg",
    "--main-gpu",
    "-nkvo",
    "--no-kv-offload",
    "-embd",
    "--embeddings",
    "-nopo",
    "--no-op-offload",
    "--poll",
    "-C",
    "--cpu-mask",
    "--numa",
];

/// What abprof sets on every llama-bench sample itself: one repetition, JSONL on stdout, and the
/// model (the variant's).
const OWNED: [&str; 8] = ["-r", "--repetitions", "-o", "--output", "-oe", "--output-err", "-m", "--model"];

/// llama-bench's `parse_int_range`: `512`, `128,256`, `128-1024+128`, `1-64*2`.
fn int_range(flag: &str, s: &str) -> Result<Vec<u32>, String> {
    let bad =
        || format!("{flag} {s}: not a list of counts or ranges as llama-bench reads them (512,1024 or 128-1024+128)");
    let mut out = Vec::new();
    for part in s.split(',') {
        let (range, op, step) = match part.find(['+', '*']) {
            Some(i) => (&part[..i], &part[i..i + 1], part[i + 1..].parse::<u32>().map_err(|_| bad())?),
            None => (part, "+", 1),
        };
        let (first, last) = match range.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().map_err(|_| bad())?, b.parse::<u32>().map_err(|_| bad())?),
            None => {
                let a = range.parse::<u32>().map_err(|_| bad())?;
                (a, a)
            }
        };
        let mut i = first;
        while i <= last {
            out.push(i);
            let next = if op == "+" { i.checked_add(step) } else { i.checked_mul(step) };
            match next {
                Some(n) if n > i => i = n,
                Some(_) => return Err(bad()),
                None => break,
            }
        }
    }
    Ok(out)
}

/// The tests `args` (llama-bench's own flags, without the model) ask for, in the order llama-bench
/// runs them; one line naming the word and the fix where they cannot be a study's tests.
pub(crate) fn tests_asked(args: &[String]) -> Result<Vec<BenchTest>, String> {
    let (mut prompt, mut gen, mut depth) = (Vec::<u32>::new(), Vec::<u32>::new(), Vec::<u32>::new());
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        let value = |i: usize| args.get(i + 1).ok_or_else(|| format!("{flag} needs a value: give one after it"));
        match flag {
            "-p" | "--n-prompt" => prompt.extend(int_range(flag, value(i)?)?),
            "-n" | "--n-gen" => gen.extend(int_range(flag, value(i)?)?),
            "-d" | "--n-depth" => depth.extend(int_range(flag, value(i)?)?),
            "-pg" => {
                let v = value(i)?;
                let pair = v.split_once(',').and_then(|(p, g)| Some((p.trim().parse().ok()?, g.trim().parse().ok()?)));
                pairs.push(pair.ok_or_else(|| format!("-pg {v}: llama-bench takes one pair, pp,tg (-pg 512,128)"))?);
            }
            f if OWNED.contains(&f) => {
                return Err(format!("{f} is abprof's: every llama-bench sample runs one repetition (-r 1), writes JSONL (-o jsonl) and loads the variant's model (-m): drop it"));
            }
            f if LIST_SETTINGS.contains(&f) => {
                let v = value(i)?;
                if v.contains(',') || (v.contains('-') && v.chars().next().is_some_and(|c| c.is_ascii_digit())) {
                    return Err(format!("{f} {v} gives several values, and a variant is one configuration: give one value per variant (variants differing by {f}), or --sweep"));
                }
            }
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    // llama-bench's defaults where a list is not given (cmd_params_defaults).
    if prompt.is_empty() {
        prompt.push(512);
    }
    if gen.is_empty() {
        gen.push(128);
    }
    if depth.is_empty() {
        depth.push(0);
    }
    let mut tests = Vec::new();
    for &n_depth in &depth {
        tests.extend(prompt.iter().filter(|p| **p > 0).map(|&n_prompt| BenchTest { n_prompt, n_gen: 0, n_depth }));
        tests.extend(gen.iter().filter(|g| **g > 0).map(|&n_gen| BenchTest { n_prompt: 0, n_gen, n_depth }));
        tests.extend(pairs.iter().filter(|(p, g)| *p > 0 || *g > 0).map(|&(n_prompt, n_gen)| BenchTest {
            n_prompt,
            n_gen,
            n_depth,
        }));
    }
    if tests.is_empty() {
        return Err("these llama-bench arguments ask for no test (-p 0 and -n 0): give -p N, -n N or -pg N,M".into());
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(t) = tests.iter().find(|t| !seen.insert(**t)) {
        return Err(format!("test {} is asked for twice: give each -p, -n, -pg and -d value once", t.name()));
    }
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(line: &str) -> Result<Vec<String>, String> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        tests_asked(&args).map(|t| t.into_iter().map(BenchTest::name).collect())
    }

    #[test]
    fn tests_cross_as_llama_bench_crosses_them() {
        assert_eq!(asked("").unwrap(), ["pp512", "tg128"]);
        assert_eq!(asked("-p 512 -n 0").unwrap(), ["pp512"]);
        assert_eq!(asked("-p 0 -n 32 -d 0,4096").unwrap(), ["tg32", "tg32 @ d4096"]);
        assert_eq!(
            asked("-p 512,1024 -n 128 -pg 512,128 -d 0,20000").unwrap(),
            [
                "pp512",
                "pp1024",
                "tg128",
                "pp512+tg128",
                "pp512 @ d20000",
                "pp1024 @ d20000",
                "tg128 @ d20000",
                "pp512+tg128 @ d20000"
            ]
        );
        assert_eq!(asked("-p 128-512*2 -n 0").unwrap(), ["pp128", "pp256", "pp512"]);
        assert_eq!(asked("-n 0 -p 100-300+100 -p 1000").unwrap(), ["pp100", "pp200", "pp300", "pp1000"]);
        assert_eq!(asked("-fa 1 -ngl 99 -t 2 -n 16 -p 64").unwrap(), ["pp64", "tg16"]);
    }

    #[test]
    fn what_cannot_be_a_studys_tests_is_refused_in_one_line() {
        for (line, says) in [
            ("-fa 0,1", "a variant is one configuration"),
            ("-ngl 0-99+99", "a variant is one configuration"),
            ("-r 5", "abprof's"),
            ("-o md", "abprof's"),
            ("-m x.gguf", "abprof's"),
            ("-p 0 -n 0", "no test"),
            ("-p 512,512", "twice"),
            ("-p x", "not a list"),
            ("-pg 512", "one pair"),
            ("-n", "needs a value"),
        ] {
            let e = asked(line).unwrap_err();
            assert!(e.contains(says) && !e.contains('\n'), "{line}: {e}");
        }
    }

    #[test]
    fn a_slug_names_its_test_and_back() {
        for t in [
            BenchTest { n_prompt: 512, n_gen: 0, n_depth: 0 },
            BenchTest { n_prompt: 0, n_gen: 128, n_depth: 4096 },
            BenchTest { n_prompt: 512, n_gen: 128, n_depth: 0 },
        ] {
            assert_eq!(BenchTest::from_slug(&t.slug()), Some(t), "{}", t.slug());
        }
        assert_eq!(BenchTest { n_prompt: 0, n_gen: 128, n_depth: 4096 }.slug(), "tg128@d4096");
        for bad in ["", "pp", "tg0", "xx12", "pp5@4096", "pp512+"] {
            assert_eq!(BenchTest::from_slug(bad), None, "{bad}");
        }
    }
}
