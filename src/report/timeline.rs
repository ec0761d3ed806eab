//! What `abprof timeline` prints: where the trace file went and what it holds.
use super::Render;
use crate::timeline::TimelineFacts;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

#[derive(Serialize)]
pub(crate) struct TimelineWritten<'a> {
    pub(crate) out: &'a Path,
    #[serde(flatten)]
    pub(crate) facts: &'a TimelineFacts,
}

impl Render for TimelineWritten<'_> {
    fn text(&self) -> String {
        let f = self.facts;
        let mut o = String::new();
        let _ = writeln!(o, "timeline of {} → {}", f.sample.display(), self.out.display());
        let _ = writeln!(o, "  {} events on one clock ({})", f.events, f.clock);
        let _ = writeln!(o, "  {} streamed tokens", f.tokens);
        if f.counters.is_empty() {
            let _ = writeln!(o, "  no counter tracks");
        } else {
            let _ = writeln!(o, "  counter tracks: {}", f.counters.join(", "));
        }
        if f.kernel_launches > 0 {
            let _ = writeln!(
                o,
                "  {} kernel launches on {} ({} tracks: a launch that overlaps an earlier one on its stream gets a row below)",
                f.kernel_launches,
                f.kernel_streams.join(", "),
                f.kernel_tracks
            );
        }
        if let Some(a) = &f.kernel_alignment {
            let _ = writeln!(o, "  kernels placed by {}", a.description);
        }
        for n in &f.notes {
            let _ = writeln!(o, "  note: {n}");
        }
        let _ = writeln!(o, "open it in ui.perfetto.dev (Open trace file) or chrome://tracing (Load)");
        o
    }
}
