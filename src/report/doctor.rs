//! `abprof doctor` for people: one line per finding, its fix indented below it, and the verdict
//! with the exit status it ends on. JSON is the same list (src/doctor/).
use super::table::{Column, Text};
use super::{Render, Table};
use crate::doctor::{Checkup, EXIT_NOT_READY};
use std::fmt::Write;

impl Render for Checkup {
    fn text(&self) -> String {
        // Status, name and value in aligned columns; a fix on the line below its finding.
        let mut t = Table::new(vec![Column::text("status"), Column::text("name"), Column::text("value")]);
        for f in &self.findings {
            t.push_text(vec![f.status.word().to_string(), f.name.to_string(), f.value.clone()]);
            if let Some(fix) = &f.fix {
                t.push_text(vec![String::new(), String::new(), format!("fix: {fix}")]);
            }
            if let Some(detail) = f.detail.as_ref().filter(|_| self.verbose) {
                t.push_text(vec![String::new(), String::new(), format!("detail: {detail}")]);
            }
        }
        let mut o = t.render(&Text::rows(&t, ""));
        let warned = self.findings.iter().filter(|f| f.status == crate::doctor::Status::Warn).count();
        if self.ready {
            let _ = writeln!(o, "{}: ready to measure (no finding warns)", self.host);
        } else {
            let _ = writeln!(
                o,
                "{}: {warned} finding(s) would add noise or stop a study: fix them first (exit {EXIT_NOT_READY})",
                self.host
            );
        }
        o
    }

    fn table(&self) -> Table {
        let mut t = Table::named(&["name", "status", "value", "fix"]);
        for f in &self.findings {
            t.push_text(vec![
                f.name.to_string(),
                f.status.word().to_string(),
                f.value.clone(),
                f.fix.clone().unwrap_or_default(),
            ]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use crate::doctor::{Checkup, Finding};
    use crate::report::{render, Format};

    #[test]
    fn text_and_json_are_the_same_findings() {
        let c = Checkup::of(
            "vm".into(),
            vec![
                Finding::ok("port", "127.0.0.1:8080 is free"),
                Finding::warn("cpu load", "other processes used 90% of a core over 1.0 s", "stop it"),
                Finding::not_present("cpu governor", "no cpufreq", None),
            ],
        );
        assert_eq!(c.exit_code(), 3);
        let text = render(&c, Format::Text);
        assert_eq!(
            text,
            "ok           port          127.0.0.1:8080 is free\n\
             warn         cpu load      other processes used 90% of a core over 1.0 s\n\
             \x20                          fix: stop it\n\
             not present  cpu governor  no cpufreq\n\
             vm: 1 finding(s) would add noise or stop a study: fix them first (exit 3)\n"
        );
        let json: serde_json::Value = serde_json::from_str(&render(&c, Format::Json)).unwrap();
        assert_eq!(json["ready"], false);
        assert_eq!(json["findings"][1]["status"], "warn");
        assert_eq!(json["findings"][1]["fix"], "stop it");
        assert_eq!(json["findings"][2]["status"], "not-present");
        assert!(json["findings"][0].get("fix").is_none());
        assert!(render(&c, Format::Csv).starts_with("name,status,value,fix\n"));
    }
}
