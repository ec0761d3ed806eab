//! The house's module layering, checked from the source text (no binary runs).
//!
//! The floors listed in `src/lib.rs` hold only while something checks them. This does:
//! - the import graph between top-level modules has no cycle (a cycle means two rooms share one
//!   concern, and neither can be read or changed alone);
//! - every import points down the floors of `FLOORS` (the floors `src/lib.rs` lists): a module
//!   uses only modules on lower floors, and a new module must be given a floor;
//! - `trace/` is pure analysis of trace files: it imports no driver or presentation layer;
//! - renderers live in `report/`: no `render.rs` and no `fn render_text` anywhere else;
//! - inside a folder, its files and sub-folders import one another in no ring: a folder's shared
//!   types sit in a bottom file, its orchestration in a named file, and `mod.rs` is a face (nine
//!   folders still had rings when this check was added, issue 19; none has since issue 32).
//!
//! The scan is textual and deliberately simple: every `crate::X` outside a `//` comment counts,
//! test modules included, because a test that needs a higher floor is a sign too.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One `crate::X` reference: the module it names and where.
#[derive(Debug, Clone)]
struct Use {
    target: String,
    file: String,
    line: usize,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Top-level modules: each `src/X/` folder and `src/X.rs` file. `lib.rs` and `main.rs` are the
/// crate roots that declare the modules, not floors of their own.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let src = root().join("src");
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            let mut files = Vec::new();
            rs_files(&p, &mut files);
            out.entry(name).or_insert_with(Vec::new).extend(files);
        } else if p.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            out.entry(name).or_insert_with(Vec::new).push(p);
        }
    }
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The top-level names of a `{a::b, c, d::{e, f}}` group; `s` starts just after the `{`.
/// Returns them with their byte offsets in `s`.
fn group_heads(s: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    let mut i = 0;
    let bytes = s.as_bytes();
    while i < bytes.len() {
        let c = bytes[i] as char;
        match c {
            '{' => {
                depth += 1;
                expect_head = false;
            }
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => expect_head = true,
            c if expect_head && (c.is_alphabetic() || c == '_') => {
                let id = ident_at(&s[i..]);
                out.push((i, id.to_string()));
                expect_head = false;
                i += id.len();
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Every `crate::X` (and `crate::{X, Y}`) in a file, skipping `//` comment lines (doc links are
/// not imports). The text is scanned whole so that a group may span lines.
fn crate_uses(path: &Path) -> Vec<Use> {
    let text = std::fs::read_to_string(path).unwrap();
    // Blank out comment lines, keeping byte offsets and line numbers.
    let code: String = text
        .split_inclusive('\n')
        .map(|l| if l.trim_start().starts_with("//") { " ".repeat(l.len() - 1) + "\n" } else { l.to_string() })
        .collect();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        // `abprof_crate::…` or `$crate::` are not this crate's paths.
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let base = at + "crate::{".len();
            for (off, name) in group_heads(group) {
                out.push(Use { target: name, file: rel(path), line: line_of(base + off) });
            }
        } else {
            let name = ident_at(rest);
            if !name.is_empty() {
                out.push(Use { target: name.to_string(), file: rel(path), line: line_of(at) });
            }
        }
    }
    out
}

/// Module → (module it uses → every place it does).
type Graph = BTreeMap<String, BTreeMap<String, Vec<Use>>>;

fn import_graph() -> Graph {
    let mods = modules();
    let mut g: Graph = mods.keys().map(|m| (m.clone(), BTreeMap::new())).collect();
    for (m, files) in &mods {
        for f in files {
            for u in crate_uses(f) {
                if &u.target != m && mods.contains_key(&u.target) {
                    g.get_mut(m).unwrap().entry(u.target.clone()).or_default().push(u);
                }
            }
        }
    }
    g
}

/// Every elementary cycle, each reported once, starting at its smallest module name. The graph
/// has under twenty nodes, so a plain search is enough.
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    fn walk(g: &Graph, start: &str, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        let last = path.last().unwrap().clone();
        for next in g[&last].keys() {
            if next == start {
                out.push(path.clone());
            } else if next.as_str() > start && !path.contains(next) {
                path.push(next.clone());
                walk(g, start, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for start in g.keys() {
        walk(g, start, &mut vec![start.clone()], &mut out);
    }
    out
}

fn show_edge(g: &Graph, from: &str, to: &str) -> String {
    let places: Vec<String> = g[from][to].iter().map(|u| format!("{}:{}", u.file, u.line)).collect();
    format!("  {from} → {to}: {}", places.join(", "))
}

#[test]
fn the_module_graph_has_no_cycle() {
    let g = import_graph();
    let found = cycles(&g);
    if found.is_empty() {
        return;
    }
    let mut msg = format!("{} import cycle(s) between top-level modules of src/:\n", found.len());
    for c in &found {
        let ring: Vec<&str> = c.iter().map(String::as_str).chain([c[0].as_str()]).collect();
        msg += &format!("\n{}\n", ring.join(" → "));
        for w in ring.windows(2) {
            msg += &show_edge(&g, w[0], w[1]);
            msg += "\n";
        }
    }
    panic!("{msg}");
}

/// The floors, top first: a module may use only modules on floors below its own. `fuzzing` is a
/// harness over the parsers (benches/fuzz.rs), an entry point like `cli`.
const FLOORS: &[&[&str]] = &[
    &["cli", "fuzzing"],
    &["app"],
    &["report"],
    &["doctor"],
    &["history", "bisect", "timeline"],
    &["summary"],
    &["exactness"],
    &["study"],
    &["measure"],
    &["roofline"],
    &["trace", "telemetry", "server", "artifact", "llama_bench"],
    &["client", "child", "atomic_file", "cache_dir", "runtime_libraries"],
    &["variant", "schedule", "clock", "stats", "schema", "dylib", "bounds", "stop_signal", "refusal"],
];

/// `src/lib.rs` states the floors in its opening comment for the reader; it must say what
/// `FLOORS` checks: the same modules, floor by floor (segments between arrows, each module in
/// backticks).
#[test]
fn the_floor_list_in_lib_rs_is_the_one_checked_here() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let comment: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .skip_while(|l| !l.contains("Floors"))
        .map(|l| format!("{} ", l.trim()))
        .collect();
    let list = comment.split_once(':').map_or("", |(_, rest)| rest);
    let list = &list[..list.find(". ").unwrap_or(list.len())];
    let stated: Vec<Vec<String>> =
        list.split('→').map(|floor| floor.split('`').skip(1).step_by(2).map(str::to_string).collect()).collect();
    let checked: Vec<Vec<String>> = FLOORS.iter().map(|f| f.iter().map(|m| m.to_string()).collect()).collect();
    assert_eq!(stated, checked, "src/lib.rs's floor comment and FLOORS in tests/layers.rs differ");
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

#[test]
fn every_import_points_down_the_floors() {
    let g = import_graph();
    let mut bad = Vec::new();
    for (from, uses) in &g {
        let Some(f) = floor_of(from) else {
            bad.push(format!("  src/{from} has no floor: add it to FLOORS in tests/layers.rs"));
            continue;
        };
        for to in uses.keys() {
            if floor_of(to).is_some_and(|t| t <= f) {
                bad.push(show_edge(&g, from, to));
            }
        }
    }
    assert!(bad.is_empty(), "imports that do not point down the floors:\n{}", bad.join("\n"));
}

/// Modules `trace/` must not import: the driver layers above it and the presentation layer.
const ABOVE_TRACE: [&str; 7] = ["measure", "server", "study", "summary", "cli", "report", "client"];

#[test]
fn trace_imports_no_driver_or_presentation_layer() {
    let mut files = Vec::new();
    rs_files(&root().join("src/trace"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        for u in crate_uses(f) {
            if ABOVE_TRACE.contains(&u.target.as_str()) {
                bad.push(format!("  {}:{} uses crate::{}", u.file, u.line, u.target));
            }
        }
    }
    assert!(bad.is_empty(), "src/trace/ is pure trace analysis, yet:\n{}", bad.join("\n"));
}

#[test]
fn renderers_live_in_report() {
    let report = root().join("src/report");
    let mut files = Vec::new();
    rs_files(&root().join("src"), &mut files);
    let fn_render_text = regex::Regex::new(r"\bfn\s+render_text\b").unwrap();
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&report)) {
        if f.file_name().is_some_and(|n| n == "render.rs") {
            bad.push(format!("  {}: a render.rs outside src/report/", rel(f)));
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if !line.trim_start().starts_with("//") && fn_render_text.is_match(line) {
                bad.push(format!("  {}:{}: defines render_text outside src/report/", rel(f), i + 1));
            }
        }
    }
    assert!(bad.is_empty(), "renderers belong in src/report/:\n{}", bad.join("\n"));
}

#[test]
fn the_scanner_reads_paths_and_groups() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.rs");
    std::fs::write(
        &f,
        "use crate::a::B;\n// crate::ignored\nuse crate::{b, c::{D, E},\n    d};\nfn f() { crate::e::g(); $crate::h; }\n",
    )
    .unwrap();
    let got: Vec<(String, usize)> = crate_uses(&f).into_iter().map(|u| (u.target, u.line)).collect();
    let want = [("a", 1), ("b", 3), ("c", 3), ("d", 4), ("e", 5)];
    assert_eq!(got, want.map(|(m, l)| (m.to_string(), l)));
}

#[test]
fn the_cycle_search_finds_every_ring_once() {
    let mut g: Graph = BTreeMap::new();
    for (from, to) in [("a", "b"), ("b", "a"), ("b", "c"), ("c", "a"), ("c", "d")] {
        g.entry(from.into()).or_default().insert(to.into(), Vec::new());
        g.entry(to.into()).or_default();
    }
    assert_eq!(cycles(&g), [vec!["a", "b"], vec!["a", "b", "c"]]);
}

/// The Rust module path of a source file: `src/study/drive.rs` → `[study, drive]`,
/// `src/study/sweep/mod.rs` → `[study, sweep]`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().to_string()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !["mod", "lib", "main"].contains(&stem) {
        parts.push(stem.to_string());
    }
    parts
}

/// Every module path a file names: `crate::a::b`, `super::x`, `self::y` (and each head of a
/// `{…}` group after them), resolved against the file's own module; in a `mod.rs`, also a bare
/// `child::…` of one of the folder's own modules. Comment lines are skipped, as in [`crate_uses`].
fn module_refs(path: &Path, children: &[String]) -> Vec<(Vec<String>, usize)> {
    let text = std::fs::read_to_string(path).unwrap();
    let code: String = text
        .split_inclusive('\n')
        .map(|l| if l.trim_start().starts_with("//") { " ".repeat(l.len() - 1) + "\n" } else { l.to_string() })
        .collect();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let own = module_path(path);
    let is_mod_rs = path.file_name().is_some_and(|n| n == "mod.rs");
    // The module `super` and `self` are relative to: a mod.rs is its folder's module.
    let here = own.clone();
    let re = regex::Regex::new(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{)?").unwrap();
    let mut out = Vec::new();
    for c in re.captures_iter(&code) {
        let m = c.get(0).unwrap();
        let before = code[..m.start()].chars().next_back();
        if before.is_some_and(|b| b == '$' || b == ':' || b.is_alphanumeric() || b == '_') {
            continue;
        }
        let mut p: Vec<String> = match &c[1] {
            "crate" => Vec::new(),
            "super" => here[..here.len().saturating_sub(1)].to_vec(),
            _ => here.clone(),
        };
        for seg in c[2].split("::").filter(|s| !s.is_empty()) {
            if seg == "super" {
                p.pop();
            } else {
                p.push(seg.to_string());
            }
        }
        if c.get(3).is_some() {
            for (off, head) in group_heads(&code[m.end()..]) {
                let mut q = p.clone();
                if head != "self" {
                    q.push(head);
                }
                out.push((q, line_of(m.end() + off)));
            }
        } else if c[2].is_empty() && c.get(3).is_none() {
            continue; // a bare `self`/`super`/`crate` names no module of its own
        } else {
            out.push((p, line_of(m.start())));
        }
    }
    if is_mod_rs {
        let bare = regex::Regex::new(r"\b([a-z_][a-z0-9_]*)::").unwrap();
        for c in bare.captures_iter(&code) {
            let m = c.get(1).unwrap();
            let before = code[..m.start()].chars().next_back();
            let decl = code[..m.start()].trim_end().ends_with("mod");
            if before.is_some_and(|b| b == ':' || b == '$') || decl || !children.contains(&c[1].to_string()) {
                continue;
            }
            let mut p = own.clone();
            p.push(c[1].to_string());
            out.push((p, line_of(m.start())));
        }
    }
    out
}

/// The folders of src/ (the crate root included), each with the names of its own modules.
fn folders() -> Vec<(PathBuf, Vec<String>)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<String>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        let mut children = Vec::new();
        for p in &entries {
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                walk(p, out);
                children.push(name);
            } else if p.extension().is_some_and(|e| e == "rs") && !["mod", "lib", "main"].contains(&name.as_str()) {
                children.push(name);
            }
        }
        out.push((dir.to_path_buf(), children));
    }
    let mut out = Vec::new();
    walk(&root().join("src"), &mut out);
    out
}

/// Within one folder: each of its files and sub-folders → the siblings it uses. A name its
/// `mod.rs` re-exports (`pub(crate) use chat::ChatStudy`) counts as the file it comes from; a
/// name the `mod.rs` defines itself counts as `mod`, a node like the others.
fn folder_graph(dir: &Path, children: &[String]) -> Graph {
    let folder = module_path(&dir.join("mod.rs"));
    let mod_rs = dir.join("mod.rs");
    // item → the child it is re-exported from
    let mut reexports = BTreeMap::new();
    if mod_rs.is_file() {
        let text = std::fs::read_to_string(&mod_rs).unwrap();
        let re = regex::Regex::new(
            r"(?m)^\s*pub(?:\([a-z]+\))?\s+use\s+(?:self::)?([a-z_][a-z0-9_]*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)",
        )
        .unwrap();
        for c in re.captures_iter(&text) {
            for item in c[2].trim_matches(|ch| ch == '{' || ch == '}').split(',') {
                let item = item.split(" as ").last().unwrap().trim();
                if !item.is_empty() {
                    reexports.insert(item.to_string(), c[1].to_string());
                }
            }
        }
    }
    let mut g: Graph = children.iter().map(|c| (c.clone(), BTreeMap::new())).collect();
    g.insert("mod".into(), BTreeMap::new());
    let mut files = Vec::new();
    rs_files(dir, &mut files);
    for f in files {
        let own = module_path(&f);
        let from = if own.len() > folder.len() { own[folder.len()].clone() } else { "mod".to_string() };
        let is_mod_rs = f == mod_rs;
        for (p, line) in module_refs(&f, if is_mod_rs { children } else { &[] }) {
            if p.len() <= folder.len() || p[..folder.len()] != folder[..] {
                continue;
            }
            let name = &p[folder.len()];
            let to = if children.contains(name) {
                name.clone()
            } else if let Some(c) = reexports.get(name) {
                c.clone()
            } else {
                "mod".to_string()
            };
            if to != from {
                let u = Use { target: to.clone(), file: rel(&f), line };
                g.get_mut(&from).unwrap().entry(to).or_default().push(u);
            }
        }
    }
    g
}

#[test]
fn the_files_inside_each_folder_import_no_cycle() {
    let mut msg = String::new();
    let mut n = 0;
    for (dir, children) in folders() {
        let g = folder_graph(&dir, &children);
        let found = cycles(&g);
        let name = rel(&dir);
        if name == "src/study" {
            // The check sees the study driver's imports, so an empty ring list means something.
            assert!(g["drive"].contains_key("evidence") && g["drive"].contains_key("file"), "{:?}", g["drive"]);
        }
        let mut rings = String::new();
        for c in &found {
            let ring: Vec<&str> = c.iter().map(String::as_str).chain([c[0].as_str()]).collect();
            rings += &format!("\n{name}: {}\n", ring.join(" → "));
            for w in ring.windows(2) {
                rings += &show_edge(&g, w[0], w[1]);
                rings += "\n";
            }
        }
        n += found.len();
        msg += &rings;
    }
    assert!(n == 0, "{n} import cycle(s) between the files of a folder:\n{msg}");
}

#[test]
fn the_folder_scan_resolves_super_self_and_reexports() {
    let study = root().join("src/study");
    let drive = module_refs(&study.join("drive.rs"), &[]);
    assert!(drive.iter().any(|(p, _)| p == &["study", "evidence", "Evidence"]), "super:: resolves: {drive:?}");
    let m = module_refs(&study.join("mod.rs"), &["ab".to_string()]);
    assert!(m.iter().any(|(p, _)| p.starts_with(&["study".to_string(), "ab".to_string()])), "{m:?}");
}

/// The table of every name of an evidence folder (issue #46): a study's, a sample's, a sweep's, a
/// trace capture's, an exactness check's, a bench's and a bisect's.
const LAYOUT: &str = "src/study/layout.rs";

/// The names `LAYOUT` holds, read from its text: the value of each `const NAME: &str = "…";`.
fn layout_names() -> Vec<String> {
    let text = std::fs::read_to_string(root().join(LAYOUT)).unwrap();
    let re = regex::Regex::new(r#"(?m)^\s*pub\(super\) const [A-Z_0-9]+: &str = "([^"]+)";"#).unwrap();
    re.captures_iter(&text).map(|c| c[1].to_string()).collect()
}

/// The files of src/ that only tests compile: a module declared under `#[cfg(test)]` (`mod
/// run_tests;`), its own file then being test code through and through.
fn test_only_files() -> Vec<PathBuf> {
    let decl =
        regex::Regex::new(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_0-9]+)\s*;")
            .unwrap();
    let mut files = Vec::new();
    rs_files(&root().join("src"), &mut files);
    let mut out = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        // A `mod x;` of `a/mod.rs` (or of the crate root) is `a/x.rs`; of `a/b.rs`, `a/b/x.rs`.
        let dir = if ["mod", "lib", "main"].contains(&stem.as_str()) {
            f.parent().unwrap().to_path_buf()
        } else {
            f.parent().unwrap().join(&stem)
        };
        for c in decl.captures_iter(&text) {
            out.push(dir.join(format!("{}.rs", &c[1])));
            out.push(dir.join(&c[1]).join("mod.rs"));
        }
    }
    out
}

/// One string literal of a file: its text between the quotes, and the code just before it.
struct Literal {
    text: String,
    before: String,
    line: usize,
}

/// Every string literal of `code` (plain and raw), skipping `//` comments and character literals.
fn string_literals(code: &str) -> Vec<Literal> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 3,
            b'\'' if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') => i += 4,
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let start = i + 2 + hashes;
                let close = format!("\"{}", "#".repeat(hashes));
                let end = code[start..].find(&close).map_or(b.len(), |e| start + e);
                let before = code[..i].chars().rev().take(16).collect::<Vec<_>>().into_iter().rev().collect();
                out.push(Literal { text: code[start..end].to_string(), before, line: line_of(i) });
                i = end + close.len();
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let before = code[..i].chars().rev().take(16).collect::<Vec<_>>().into_iter().rev().collect();
                out.push(Literal { text: code[start..j.min(b.len())].to_string(), before, line: line_of(i) });
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether `lit` spells the evidence name `name` (`file`: a file's name, else a folder's): the name
/// alone (a folder's only as the argument of a `.join(`), a path that holds it (`samples/001-a`,
/// `{dir}/trace.json`), or a formatted path inside a sentence (`log: {}/bisect-log.txt`).
fn spells(lit: &Literal, name: &str, file: bool) -> bool {
    let t = lit.text.as_str();
    let joined = lit.before.trim_end().ends_with(".join(");
    if t == name {
        return file || joined;
    }
    let path_like = !t.is_empty() && !t.contains(char::is_whitespace) && t.contains('/');
    if path_like {
        let segments: Vec<&str> = t.split('/').collect();
        return if file { segments.last() == Some(&name) } else { segments.contains(&name) };
    }
    let formatted_path = |w: &str| {
        let w = w.trim_end_matches(|c: char| ",.;:)`'\"".contains(c));
        w.starts_with('{') && w.ends_with(&format!("/{name}"))
    };
    file && t.split_whitespace().any(formatted_path)
}

/// Names of the table that another folder, not an evidence folder, also has for its own file; the
/// file that spells it there, and why.
const OTHER_OWNERS: &[(&str, &str, &str)] = &[
    ("source.patch", "src/artifact/mod.rs", "a build artifact's copy of its patch, in the artifact store's layout"),
    ("traces", "src/fuzzing.rs", "the fuzz seeds among the repository's committed traces/"),
];

#[test]
fn no_evidence_name_is_spelled_outside_study() {
    let names = layout_names();
    for must in ["study.toml", "summary.json", "server.log", "telemetry.csv", "trace.json", "bisect.json", "steps"] {
        assert!(names.iter().any(|n| n == must), "{LAYOUT} lost {must} (or this test reads it wrong): {names:?}");
    }
    let mut files = Vec::new();
    rs_files(&root().join("src"), &mut files);
    let study = root().join("src/study");
    let tests_only = test_only_files();
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&study) && !tests_only.contains(f)) {
        // Unit tests may name the files they fake: every item under `#[cfg(test)]` is left out,
        // and the product code after it is still read.
        let code = product_code(&std::fs::read_to_string(f).unwrap());
        for lit in string_literals(&code) {
            for name in &names {
                let file = name.contains('.') || name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
                // A committed fixture's path names a fixture, not the layout.
                let other_owner = OTHER_OWNERS.iter().any(|(n, path, _)| n == name && rel(f) == *path);
                if spells(&lit, name, file) && !lit.text.starts_with("tests/fixtures/") && !other_owner {
                    bad.push(format!("  {}:{}: {name} in {:?}", rel(f), lit.line, lit.text));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "evidence names belong to {LAYOUT}; ask a typed folder (Evidence, SampleFolder, TraceFolder, \
         ExactnessFolder, BenchFolder, BisectFolder) for the path:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_evidence_name_check_sees_paths_and_joins_and_leaves_prose() {
    let lits = string_literals(
        "a.join(\"steps\"); f(\"steps\"); g(\"server.log\"); h(\"{root}/bisect-log.txt\");\n\
         // \"server.log\"\nlet c = '\"'; i(\"samples/001-a\"); j(\"see trace.json there\"); \
         k(\"log: {}/bisect-log.txt\"); l(r#\"x/sample.json\"#);",
    );
    let hit = |name: &str, file: bool| {
        lits.iter().filter(|l| spells(l, name, file)).map(|l| l.text.clone()).collect::<Vec<_>>()
    };
    assert_eq!(hit("steps", false), ["steps"], "a folder only where it is joined");
    assert_eq!(hit("server.log", true), ["server.log"], "not in a comment");
    assert_eq!(hit("bisect-log.txt", true), ["{root}/bisect-log.txt", "log: {}/bisect-log.txt"]);
    assert_eq!(hit("samples", false), ["samples/001-a"]);
    assert_eq!(hit("trace.json", true), Vec::<String>::new(), "prose names a file, it builds no path");
    assert_eq!(hit("sample.json", true), ["x/sample.json"]);
    assert!(test_only_files().contains(&root().join("src/measure/run_tests.rs")));
}

/// What `study/` keeps to itself: the generic JSON readers and writers, and every way of
/// naming a path by file name. Outside `study/`, a file is reached through a typed method of
/// `Evidence`, `SampleFolder`, `TraceFolder`, `ExactnessFolder`, `BenchFolder` or `BisectFolder`
/// (the compiler holds most of this too: these are `pub(super)` or private there; the list keeps
/// them so).
const STUDY_ONLY: &[&str] = &[
    "read_json",
    "write_json",
    "study_toml_in",
    "prompt_in",
    "summary_in",
    "isolation_in",
    "exactness_report_in",
    "exactness_facts_in",
    "exactness_prompt_in",
    "pi_sample_in",
    "sweep_record",
    "HTML_FILE",
    "MARKDOWN_FILE",
];

#[test]
fn evidence_is_reached_only_through_its_typed_methods() {
    let mut files = Vec::new();
    rs_files(&root().join("src"), &mut files);
    let study = root().join("src/study");
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&study)) {
        let code = product_code(&std::fs::read_to_string(f).unwrap());
        // A `use crate::study::evidence::{…}` may span lines: a `use` is read whole, to its `;`.
        let mut statement = String::new();
        for (i, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            statement += line;
            let head = statement.trim_start().trim_start_matches("pub(crate) ");
            if head.starts_with("use ") && !line.contains(';') {
                continue;
            }
            if statement.contains("study::evidence::") {
                for name in STUDY_ONLY.iter().filter(|n| has_word(&statement, n)) {
                    bad.push(format!("  {}:{}: {name}", rel(f), i + 1));
                }
            }
            statement.clear();
        }
    }
    assert!(bad.is_empty(), "outside src/study/, evidence is reached by its typed methods:\n{}", bad.join("\n"));
}

/// Whether `name` stands in `text` as a whole identifier.
fn has_word(text: &str, name: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(name)
        .any(|(at, _)| !ident(text[..at].chars().next_back()) && !ident(text[at + name.len()..].chars().next()))
}

#[test]
fn the_evidence_guard_reads_a_use_whole() {
    assert!(has_word("use crate::study::evidence::{\n    read_json, Evidence};", "read_json"));
    assert!(!has_word("crate::study::evidence::read_json_lines", "read_json"));
    assert!(!has_word("ev.read_sweep_record()", "sweep_record"));
}

/// `text` with every item under `#[cfg(test)]` blanked (a test module, a test-only function or
/// `use`), its lines kept so that line numbers still point into the file. An item ends at its
/// matching `}` (strings, character literals and comments skipped) or at a `;` before any `{`.
fn product_code(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]").map(|i| i + from) {
        let end = item_end(bytes, at + "#[cfg(test)]".len());
        for b in &mut out[at..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        from = end;
    }
    String::from_utf8(out).expect("blanking keeps UTF-8: only ASCII bytes are replaced, whole characters")
}

/// The byte after the item that starts at or after `i`: its matching `}`, or a `;` before any `{`.
fn item_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') => i += 3,
            b';' if depth == 0 => return i + 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

#[test]
fn product_code_leaves_out_test_items_and_keeps_what_follows() {
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn f() { let s = \"}\"; let c = '{'; }\n}\nfn b() { \"plan.json\" }\n#[cfg(test)]\nuse x::y;\nfn c() {}\n";
    let code = product_code(text);
    assert_eq!(code.lines().count(), text.lines().count(), "{code}");
    assert!(!code.contains("mod tests") && !code.contains("use x::y") && !code.contains("fn f"), "{code}");
    assert!(code.contains("fn a()") && code.contains("fn b() { \"plan.json\" }") && code.contains("fn c()"), "{code}");
}

/// One stop-signal listener (issue 19): every command that must outlive SIGINT, SIGTERM and
/// SIGHUP installs `src/stop_signal.rs`'s, so none of them forgets one or treats one differently.
#[test]
fn one_module_listens_for_stop_signals() {
    let mut files = Vec::new();
    rs_files(&root().join("src"), &mut files);
    let bad: Vec<String> = files
        .iter()
        .filter(|f| rel(f) != "src/stop_signal.rs")
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("SignalKind::"))
        .map(|f| format!("  {}", rel(f)))
        .collect();
    assert!(bad.is_empty(), "stop signals are heard by src/stop_signal.rs alone; use StopSignal:\n{}", bad.join("\n"));
}

/// No width is set by hand in `src/report/` (issue #46): every column a person reads is aligned by
/// the table model (`src/report/table.rs`: each column as wide as its widest cell), so a longer
/// label or a larger figure cannot push a row out of line. A zero-padded number (`{i:02}`, a
/// folder name) is not a width.
#[test]
fn no_width_is_set_by_hand_in_the_report() {
    let mut files = Vec::new();
    rs_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report"), &mut files);
    let mut found = Vec::new();
    for f in files {
        for (n, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let b = line.as_bytes();
            for (i, _) in line.match_indices(':') {
                // Inside a format spec `{…:SPEC}`: an optional fill-free alignment, then a width.
                let Some(open) = line[..i].rfind('{') else { continue };
                if line[open..i].contains('}')
                    || line[open + 1..i].contains(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                {
                    continue;
                }
                let mut j = i + 1;
                if j < b.len() && matches!(b[j], b'<' | b'>' | b'^') {
                    j += 1;
                }
                let width = j < b.len() && (b[j].is_ascii_digit() && b[j] != b'0')
                    || line[j..].split('}').next().is_some_and(|s| s.ends_with('$') && !s.starts_with('.'));
                if width {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "{} width(s) set by hand in src/report/:\n{}", found.len(), found.join("\n"));
}
