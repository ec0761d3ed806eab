//! The study summary's sections, one file each, in the one order every format shows them:
//! `summarize`'s text, the report's Markdown and its HTML page iterate [`of`] through their
//! renderers (`report/section.rs`, `report/html/sections.rs`). A feature that adds to the summary
//! adds its file and its place in [`ORDER`].
pub(crate) mod answer;
mod context;
pub(crate) mod devices;
mod floor;
mod per_variant;
mod phases;
pub(crate) mod soak;
pub(crate) mod speculation;
mod speed_bench;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod verdicts;
mod windows;

use super::section::Section;
use crate::summary::Summary;

type Sections = fn(&Summary) -> Vec<Section>;

/// The order the sections are shown in.
const ORDER: [Sections; 14] = [
    verdicts::sections,
    speculation::yardstick_sections,
    speed_bench::sections,
    soak::sections,
    context::covariate,
    context::lines,
    verdicts::paired_line,
    per_variant::sections,
    speculation::acceptance_sections,
    speculation::memory_sections,
    phases::sections,
    devices::sections,
    windows::sections,
    floor::sections,
];

/// Every section the summary has, in [`ORDER`].
pub(crate) fn of(s: &Summary) -> Vec<Section> {
    ORDER.iter().flat_map(|f| f(s)).collect()
}
