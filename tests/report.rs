//! The study report: a real study on the test bed writes its HTML page and Markdown tables, and
//! headless Chromium (Debian's `chromium`, installed by scripts/system-deps) renders the page:
//! a screenshot that is not blank, no console message, and every chart each section should have.
//! The Markdown tables are also checked on the captured evidence, with no server.
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn variant(label: &str, kv: &str) -> String {
    format!("{label}={}|kv={kv}", testbed().server.display())
}

/// `chromium` from PATH, or a failure saying how to install it (never a silent skip).
fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join("chromium")).find(|p| p.is_file()))
        .expect("chromium is not installed: run scripts/system-deps (Debian's chromium package)")
}

/// Headless Chromium on a local page with console logging on stderr: (stdout, stderr).
fn headless(page: &Path, args: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Every console message the page produced (Chromium logs each as `…:CONSOLE:…] "text"`).
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// The DOM after Chromium parsed and laid out the page.
fn dom(page: &Path) -> String {
    let (dom, stderr) = headless(page, &["--dump-dom"]);
    assert!(console_lines(&stderr).is_empty(), "console messages: {:#?}", console_lines(&stderr));
    dom
}

/// The `<section id="…">` element's markup, if the page has one.
fn section<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let start = dom.find(&format!("<section id=\"{id}\""))?;
    let end = dom[start..].find("</section>").map_or(dom.len(), |e| start + e);
    Some(&dom[start..end])
}

fn svgs(markup: &str) -> usize {
    markup.matches("<svg").count()
}

/// Screenshot of the page: (distinct colours, share of pixels that are not white).
fn screenshot(page: &Path, png: &Path) -> (usize, f64) {
    let (_, stderr) = headless(page, &["--window-size=1100,2400", &format!("--screenshot={}", png.display())]);
    assert!(console_lines(&stderr).is_empty(), "console messages: {:#?}", console_lines(&stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1100, 2400));
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).map(|p| &p[..3]).collect();
    let distinct: std::collections::HashSet<&[u8]> = pixels.iter().copied().collect();
    let coloured = pixels.iter().filter(|p| p.iter().any(|&c| c < 245)).count();
    (distinct.len(), coloured as f64 / pixels.len() as f64)
}

/// The report is free of anything that would reach out: no script, stylesheet link, source or URL.
fn assert_self_contained(html: &str) {
    for needle in ["<script", "<link", " src=", "url(", "@import", "href=\"http"] {
        assert!(!html.contains(needle), "the page holds {needle:?}: it must open with no network");
    }
}

#[test]
fn the_console_check_sees_what_a_page_logs() {
    // The check below means something only if a message would be seen.
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("canary.html");
    std::fs::write(&page, "<!DOCTYPE html><p>x</p><script>console.error('abprof-canary')</script>").unwrap();
    let (_, stderr) = headless(&page, &["--dump-dom"]);
    assert!(console_lines(&stderr).iter().any(|l| l.contains("abprof-canary")), "{stderr}");
}

#[test]
fn a_real_study_writes_a_page_that_chromium_renders_with_every_chart() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("kv");
    // This test is about the report: other builds on the host must not reject its samples.
    // Two samples a side, in a study file (the flags plan at least 3).
    let args = study_file_of(&ab_args(&root, 16, 2, &[variant("f16", "f16"), variant("q8_0", "q8_0")]));
    let out = abprof().args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // --json keeps stdout one document; the report's path goes to stderr.
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // --json: stdout stays one document and stderr names no report; the page is DIR/report.html.
    assert!(!stderr_lines(&out).iter().any(|l| l.contains("report")), "{:#?}", stderr_lines(&out));
    let html = root.join("report.html");
    assert!(root.join("report.md").is_file());
    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);

    let dom = dom(&html);
    // Every sample as dots per metric: decode TPS, prefill TPS, TTFT.
    assert_eq!(svgs(section(&dom, "samples").unwrap()), 3);
    // One timeline per sample: the CPU test bed records the server's CPU, and says what is absent.
    let samples = std::fs::read_dir(root.join("samples")).unwrap().count();
    assert_eq!(samples, 4);
    let timelines = section(&dom, "timelines").unwrap();
    assert_eq!(svgs(timelines), samples);
    assert_eq!(
        timelines
            .matches("absent from this telemetry: power (W), GPU busy (%), gfx clock (MHz), GPU temp (°C)")
            .count(),
        samples
    );
    assert!(timelines.contains("server CPU (% of a core)") && timelines.contains("prefill"));
    // Not traced: no kernel section. The verdict table and the evidence facts are there.
    assert!(section(&dom, "kernels").is_none());
    let verdict = section(&dom, "verdict").unwrap();
    assert_eq!(svgs(verdict), 0);
    // Each variant's decode row (the table's first rows, one per variant) holds its median as a
    // whole cell: a measured figure elsewhere on the page cannot stand in for it.
    let rows: Vec<&str> = verdict.split("<tr").filter(|r| r.contains("<td")).collect();
    for (v, row) in summary["variants"].as_array().unwrap().iter().zip(&rows) {
        let median = v["metrics"][0]["median"].as_f64().unwrap();
        let label = v["label"].as_str().unwrap();
        assert!(row.contains(&format!(">{label}<")), "the decode row of {label}: {row}");
        assert!(row.contains(&format!(">{median:.2}<")), "decode median {median:.2} of {label}: {row}");
    }
    let doc = read_json(&root.join("variants.json"));
    let facts = &doc["items"];
    let evidence = section(&dom, "evidence").unwrap();
    assert!(evidence.contains(facts[0]["binary"]["sha256"].as_str().unwrap()));
    assert!(evidence.contains("--cache-type-k q8_0"), "the argv of each variant");
    assert!(section(&dom, "rejected").is_some());

    // A real screenshot, not a blank page.
    let png = d.path().join("report.png");
    let (colours, coloured) = screenshot(&html, &png);
    assert!(colours > 200, "{colours} distinct colours");
    assert!(coloured > 0.05, "{:.1}% of the pixels are not white", coloured * 100.0);

    // `abprof report` rebuilds it anywhere, from the evidence alone.
    let (other_html, other_md) = (d.path().join("elsewhere.html"), d.path().join("elsewhere.md"));
    let out =
        abprof().arg("report").arg(&root).arg("--html").arg(&other_html).arg("--md").arg(&other_md).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("report: {}", other_html.display())));
    assert_eq!(std::fs::read_to_string(&other_md).unwrap(), std::fs::read_to_string(root.join("report.md")).unwrap());
}

#[test]
fn a_traced_study_reports_its_kernel_categories() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let tracer = stand_in_tracer(d.path());
    let root = d.path().join("tr");
    let out = trace_cmd(&root, &tracer, &[variant("f16", "f16"), variant("q8_0", "q8_0")], 16, 2)
        // About the report: trace_cmd's limit keeps other builds on the host from rejecting.
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = root.join("report.html");
    // In text, the paths follow the command's own output, and the one-line answer of each
    // candidate ends it (docs/commands.md; the summary.json the run wrote holds the line).
    let stdout = String::from_utf8_lossy(&out.stdout);
    let md = root.join("report.md");
    let answer = read_json(&root.join("summary.json"))["answer"][0]["line"].as_str().unwrap().to_string();
    let tail = format!("report: {}\nreport (Markdown): {}\n\n{answer}\n", html.display(), md.display());
    assert!(stdout.ends_with(&tail), "{stdout}");
    let dom = dom(&html);
    let kernels = section(&dom, "kernels").expect("a traced study has a kernel section");
    assert_eq!(svgs(kernels), 1, "the category bars");
    assert!(kernels.contains("top moved kernels") || kernels.contains("kernel categories"), "{kernels}");
    // The traced samples are drawn (△), never counted: 2 untraced + 1 traced per variant.
    assert_eq!(svgs(section(&dom, "timelines").unwrap()), 6);
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(md.contains("### kernel categories (ms/token)"), "{md}");
}

/// The cells of a Markdown table row, `\|` being a `|` inside a cell.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().strip_prefix('|').and_then(|l| l.strip_suffix('|')).expect("a table row");
    let mut out = vec![String::new()];
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.last_mut().unwrap().extend(chars.next()),
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

#[test]
fn the_markdown_tables_of_the_captured_evidence() {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
    let dir = d.path().join("study");
    assert!(Command::new("cp").arg("-r").arg(&src).arg(&dir).status().unwrap().success());
    let out = abprof().arg("report").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "report: {}\nreport (Markdown): {}\n",
            dir.join("report.html").display(),
            dir.join("report.md").display()
        )
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let table_after = |heading: &str| -> Vec<Vec<String>> {
        let at = md.find(heading).unwrap_or_else(|| panic!("no {heading:?} in\n{md}"));
        md[at..].lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')).map(cells).collect()
    };
    // The verdicts: what that release's own summary.json computed, one section per metric as in
    // `summarize`'s text.
    let old = read_json(&src.join("summary.json"));
    for (metric, title) in [
        ("server-decode-tps", "server decode TPS (tok/s)"),
        ("server-prefill-tps", "server prefill TPS (tok/s)"),
        ("ttft-ms", "TTFT (ms)"),
    ] {
        let verdicts = table_after(&format!("### {title}\n"));
        // The per-sample CV column (docs/methodology.md §8) stands between the median and the
        // change; the ratio of medians ("medians", the change of earlier releases) after the interval.
        assert_eq!(verdicts[0], ["variant", "runs", "mean", "median", "CV", "vs f16", "95% CI", "medians", "verdict"]);
        assert_eq!(verdicts[1], ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---"]);
        let mut rows = verdicts[2..].iter();
        for v in old["variants"].as_array().unwrap() {
            let m = v["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == metric).unwrap();
            let row = rows.next().unwrap();
            assert_eq!(row[0], v["label"].as_str().unwrap());
            let d = if metric == "server-prefill-tps" { 1 } else { 2 };
            assert_eq!(row[3], format!("{:.d$}", m["median"].as_f64().unwrap()), "{metric} {row:?}");
            let verdict = m["verdict"].as_str().map_or("baseline".to_string(), |v| v.replace('-', " "));
            let runs: Vec<f64> = m["runs"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
            let mean = runs.iter().sum::<f64>() / runs.len() as f64;
            let sd = (runs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (runs.len() - 1) as f64).sqrt();
            assert_eq!(row[4], format!("{:.2}%", 100.0 * sd / mean), "{metric} {row:?}: the sample CV");
            if let Some(c) = m["change_pct"].as_f64() {
                assert_eq!(
                    row[7],
                    format!("{c:+.2}%"),
                    "{metric} {row:?}: that release's change, the ratio of medians"
                );
            }
            assert_eq!(row[8], verdict, "{metric} {row:?}");
        }
        assert!(rows.next().is_none());
    }
    let per_variant = table_after("### per variant");
    assert_eq!(per_variant[2][0], "f16");
    assert_eq!(per_variant[2].last().unwrap(), "2/2", "accepted of planned");
    let phases = table_after("### per phase");
    assert_eq!(phases.len(), 2 + 4, "prefill and decode of each variant");
    assert_eq!(phases[2][4], format!("{:.1}", old["variants"][0]["prefill"]["mean_cpu_pct"].as_f64().unwrap()));
    assert!(md.contains("\nrejected samples: none"), "{md}");
    let run = table_after("### run");
    assert!(run.iter().any(|r| r[0] == "isolation" && r[1] == "restore and verify hooks succeeded"));
    let binaries = table_after("### binaries and models");
    let facts = read_json(&src.join("variants.json"));
    assert_eq!(binaries[2][2], facts[0]["binary"]["sha256"].as_str().unwrap());
    let launch = table_after("### launch");
    assert_eq!(launch[3][1], facts[1]["spec"].as_str().unwrap(), "a `|` inside a cell survives");
    assert!(launch[3][2].contains("--cache-type-v q8_0"), "{:?}", launch[3]);
}
