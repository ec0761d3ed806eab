//! One section of a study summary as every format shows it: a title, then tables and notes in
//! order. `summarize`'s text, the report's Markdown file and its HTML page render the same list
//! ([`super::sections::of`]), each through its one renderer here or in `html/`, so no table is
//! built twice and no format sets a width by hand (hyperfine's one-exporter-per-format idea).
use super::table::{Table, Text};
use std::fmt::Write;

/// What a section holds, in the order shown.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    Table(Table),
    /// A table whose rows come in groups (one variant's rows), each group with its notes: under
    /// its rows in text (`! variant: …`), after the table on the page.
    Grouped(Table, Vec<Group>),
    /// A line of prose under the title.
    Note(String),
    /// Lines whose alignment carries meaning (a breakdown in columns of its own): indented in
    /// text, a code block on the page.
    Pre(Vec<String>),
}

/// One group of a [`Part::Grouped`] table: its number of rows, and the notes that follow them.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) rows: usize,
    pub(crate) notes: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Section {
    /// An anchor on the page (`None`: none), so a reader can link to it and a chart can join it.
    pub(crate) id: Option<&'static str>,
    /// The caption; a section with no parts is one line of prose in every format.
    pub(crate) title: String,
    pub(crate) parts: Vec<Part>,
}

impl Section {
    pub(crate) fn new(title: impl Into<String>) -> Section {
        Section { id: None, title: title.into(), parts: Vec::new() }
    }

    /// A section of one line: its title.
    pub(crate) fn line(text: impl Into<String>) -> Section {
        Section::new(text)
    }

    pub(crate) fn id(mut self, id: &'static str) -> Section {
        self.id = Some(id);
        self
    }

    pub(crate) fn table(mut self, t: Table) -> Section {
        self.parts.push(Part::Table(t));
        self
    }

    pub(crate) fn grouped(mut self, t: Table, groups: Vec<Group>) -> Section {
        self.parts.push(Part::Grouped(t, groups));
        self
    }

    pub(crate) fn pre(mut self, lines: Vec<String>) -> Section {
        if !lines.is_empty() {
            self.parts.push(Part::Pre(lines));
        }
        self
    }

    pub(crate) fn notes(mut self, ns: impl IntoIterator<Item = String>) -> Section {
        self.parts.extend(ns.into_iter().map(Part::Note));
        self
    }

    /// Every note a grouped table's rows carry, in order: what the page prints after the table.
    pub(crate) fn group_notes(groups: &[Group]) -> impl Iterator<Item = &String> {
        groups.iter().flat_map(|g| &g.notes)
    }
}

/// The sections as aligned text for the terminal: a blank line, the title, then each part
/// indented by two spaces.
pub(crate) fn text(sections: &[Section]) -> String {
    let mut o = String::new();
    for s in sections {
        let _ = writeln!(o, "\n{}", s.title);
        for p in &s.parts {
            match p {
                Part::Table(t) => o.push_str(&t.render(&Text::of(t, "  ", true))),
                Part::Grouped(t, groups) => {
                    use super::table::Markup;
                    let m = Text::of(t, "  ", true);
                    o.push_str(&m.table_header(t));
                    let mut rows = t.rows.iter();
                    for g in groups {
                        for row in rows.by_ref().take(g.rows) {
                            o.push_str(&m.table_row(t, row));
                        }
                        for n in &g.notes {
                            let _ = writeln!(o, "  ! {n}");
                        }
                    }
                }
                Part::Note(n) => {
                    let _ = writeln!(o, "  {n}");
                }
                Part::Pre(lines) => {
                    for l in lines {
                        let _ = writeln!(o, "  {l}");
                    }
                }
            }
        }
    }
    o
}

/// The sections as GitHub-flavoured Markdown: a `###` heading and its tables, notes as
/// paragraphs; a section of one line is a paragraph.
pub(crate) fn markdown(sections: &[Section]) -> String {
    let mut o = String::new();
    for s in sections {
        if s.parts.is_empty() {
            let _ = writeln!(o, "\n{}", super::md_cell(&s.title));
            continue;
        }
        let _ = writeln!(o, "\n### {}", super::md_cell(&s.title));
        for p in &s.parts {
            match p {
                Part::Table(t) => {
                    let _ = writeln!(o);
                    o.push_str(&t.markdown());
                }
                Part::Grouped(t, groups) => {
                    let _ = writeln!(o);
                    o.push_str(&t.markdown());
                    for n in Section::group_notes(groups) {
                        let _ = writeln!(o, "\n{}", super::md_cell(n));
                    }
                }
                Part::Note(n) => {
                    let _ = writeln!(o, "\n{}", super::md_cell(n));
                }
                Part::Pre(lines) => {
                    let _ = writeln!(o, "\n```text\n{}\n```", lines.join("\n"));
                }
            }
        }
    }
    o
}
