//! The study report's document-level parts: its Markdown (`markdown.rs`) and its title, each
//! rendered from a [`StudyView`](crate::summary::view::StudyView); its sections are
//! `report/sections/`, the HTML page that shows them `report/html/`, and `report/pages.rs` writes
//! both files.
pub(crate) mod markdown;
mod title;

pub(crate) use title::StudyTitle;
