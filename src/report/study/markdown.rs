//! The study report as GitHub-flavoured Markdown, ready to paste into a pull request: the answer
//! first (docs/formats.md "The report"), the title, then every section of the report's one list
//! ([`crate::report::sections::of`]). `report.md` and `summarize --format md` are this document.
use super::title::StudyTitle;
use crate::report::section::markdown;
use crate::report::sections::{answer, of, Source};
use crate::report::Render;
use crate::summary::view::StudyView;
use serde::Serialize;
use std::fmt::Write;

pub(crate) fn document(v: &StudyView) -> String {
    let (answers, rest): (Vec<_>, Vec<_>) = of(&Source::view(v)).into_iter().partition(|s| s.id == Some(answer::ID));
    let mut o = markdown(&answers).trim_start_matches('\n').to_string();
    if !o.is_empty() {
        o.push('\n');
    }
    let title = StudyTitle::of(&v.summary);
    let _ = writeln!(o, "## {}\n\n{}", title.heading, title.detail);
    o.push_str(&markdown(&rest));
    o
}

/// The document as a result `summarize --format md` prints; its JSON is the summary's.
pub(crate) struct Document<'a>(pub(crate) &'a StudyView);

impl Serialize for Document<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.summary.serialize(serializer)
    }
}

impl Render for Document<'_> {
    fn text(&self) -> String {
        document(self.0)
    }

    fn markdown(&self) -> String {
        document(self.0)
    }
}
