//! The page's one stylesheet, inline: the report opens from a file with no network.
pub(crate) const CSS: &str = r#"
:root { --fg: #24292f; --muted: #57606a; --line: #d0d7de; --bg: #ffffff; --band: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif;
       color: var(--fg); background: var(--bg); }
header { padding: 22px 32px 14px; border-bottom: 1px solid var(--line); background: var(--band); }
header h1 { margin: 0 0 4px; font-size: 24px; }
header p { margin: 0; color: var(--muted); }
nav { margin-top: 10px; font-size: 14px; }
nav a { margin-right: 14px; color: #0969da; text-decoration: none; }
main { max-width: 1040px; padding: 8px 32px 40px; }
section { margin-top: 26px; }
h2 { font-size: 19px; border-bottom: 1px solid var(--line); padding-bottom: 4px; margin: 0 0 10px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
p.note { color: var(--muted); margin: 4px 0 10px; font-size: 14px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13.5px; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 4px 9px; text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td { word-break: break-word; max-width: 420px; }
td.verdict { font-weight: 600; white-space: nowrap; }
td.faster { color: #1a7f37; background: #dafbe1; }
td.slower { color: #cf222e; background: #ffebe9; }
td.unclear { color: #57606a; }
td.base { color: var(--muted); font-weight: normal; }
figure { margin: 8px 0 18px; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 4px; }
.key span { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin: 0 4px 0 12px; }
.key span:first-child { margin-left: 0; }
.absent { color: #9a6700; }
.problem { color: #cf222e; font-weight: 600; }
code { font: 13px "DejaVu Sans Mono", monospace; background: var(--band); padding: 1px 4px; border-radius: 4px; }
"#;
