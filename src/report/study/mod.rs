//! The study report's parts: its tables (`tables.rs`), its Markdown (`markdown.rs`) and its title,
//! each rendered from a [`StudyView`](crate::summary::view::StudyView); the HTML page that shows
//! them is `report/html/`, and `report/pages.rs` writes both files.
pub(crate) mod markdown;
pub(crate) mod tables;
mod title;

pub(crate) use title::StudyTitle;
