//! Where the study ran and what ran: the host, each variant's exact binary and model, how each
//! server was launched, every isolation hook, and evidence that could not be read. Drawn where the
//! whole folder was read (the page, report.md, `summarize --format md`).
use super::source::Source;
use crate::report::section::Section;
use crate::report::table::{Column, Table};
use crate::report::NONE;
use crate::summary::view::StudyView;

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let Some(v) = src.view else { return Vec::new() };
    let mut out = vec![
        Section::new("host").id("host").table(host(v)),
        Section::new("binaries and models").id("binaries").table(binaries(v)),
        Section::new("launch").id("launch").table(launch(v)),
    ];
    out.extend(hooks(v).map(|t| Section::new("isolation hooks").id("hooks").table(t)));
    out.extend(v.unreadable.iter().map(|u| Section::line(format!("unreadable evidence: {u}"))));
    out
}

fn facts() -> Table {
    Table::new(vec![Column::text("fact"), Column::text("value")])
}

/// Where the study ran.
pub(crate) fn host(v: &StudyView) -> Table {
    let mut t = facts();
    t.push_text(vec!["study folder".into(), v.summary.root.clone()]);
    if let Some(h) = &v.host {
        t.push_text(vec!["host".into(), h.hostname.clone()]);
        t.push_text(vec!["kernel".into(), h.kernel.clone()]);
        t.push_text(vec!["CPU".into(), format!("{} ({} cores)", h.cpu, h.cores)]);
        t.push_text(vec![
            "memory".into(),
            h.memory_kib.map_or(NONE.into(), |k| format!("{:.1} GiB", k as f64 / 1048576.0)),
        ]);
        t.push_text(vec!["abprof".into(), h.abprof.clone()]);
        t.push_text(vec!["started".into(), h.started_at.clone()]);
    } else {
        t.push_text(vec!["host".into(), "host.json absent".into()]);
    }
    t
}

/// Each variant's exact binary and model, by sha256, and what `--version` printed.
pub(crate) fn binaries(v: &StudyView) -> Table {
    let mut t = Table::new(
        ["variant", "binary", "sha256", "version", "model", "model sha256"].iter().map(|h| Column::text(h)).collect(),
    );
    for f in &v.variants {
        t.push_text(vec![
            f.label.clone(),
            f.binary.real_path.display().to_string(),
            f.binary.sha256.clone(),
            f.artifact_version.clone().map_or_else(|| f.version.clone(), |a| format!("{} (artifact {a})", f.version)),
            f.model.real_path.display().to_string(),
            f.model.sha256.clone(),
        ]);
    }
    t
}

/// How each variant's server was launched.
pub(crate) fn launch(v: &StudyView) -> Table {
    let mut t =
        Table::new(["variant", "spec", "server argv", "env", "expect="].iter().map(|h| Column::text(h)).collect());
    for f in &v.variants {
        t.push_text(vec![
            f.label.clone(),
            f.spec.clone(),
            shlex::try_join(f.server_args.iter().map(String::as_str)).unwrap_or_else(|_| f.server_args.join(" ")),
            if f.env.is_empty() {
                NONE.into()
            } else {
                f.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
            },
            f.expect.clone().unwrap_or_else(|| NONE.into()),
        ]);
    }
    t
}

/// Every isolation hook that ran.
pub(crate) fn hooks(v: &StudyView) -> Option<Table> {
    let iso = v.isolation.as_ref()?;
    let mut t = Table::new(vec![
        Column::text("phase"),
        Column::text("argv"),
        Column::text("status"),
        Column::number("ms"),
        Column::text("output"),
    ]);
    for r in &iso.runs {
        t.push_text(vec![
            r.phase.clone(),
            shlex::try_join(r.argv.iter().map(String::as_str)).unwrap_or_else(|_| r.argv.join(" ")),
            r.status.clone(),
            format!("{:.0}", r.ms),
            r.output.clone(),
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}
