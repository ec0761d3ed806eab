//! One-line sections that say what makes the study's numbers comparable: the thermal covariate
//! (docs/methodology.md §9.10), the host's power state, the noise hint, and why no energy was
//! measured (§9.6).
use crate::report::ci_pct;
use crate::report::section::Section;
use crate::summary::{Metric, Summary};

/// Whether the thermal covariate explains decode TPS within the variants, and where it does the
/// adjusted interval beside the plain one (docs/methodology.md §9.10).
pub(crate) fn covariate(s: &Summary) -> Vec<Section> {
    let Some(c) = &s.covariate else { return Vec::new() };
    let title = format!(
        "decode TPS against the {} within each variant: slope {:+.3}% per unit, R² {:.2}, p {:.3} — {}",
        c.covariate.name(),
        c.slope_pct_per_unit,
        c.r2_within,
        c.p_value,
        if c.explains {
            "it explains the spread; adjusted comparison (docs/methodology.md §9.10):"
        } else {
            "it does not explain the spread: no adjustment"
        }
    );
    let adjusted = c.adjusted.iter().map(|(label, adj)| {
        let plain = s.variants.iter().find(|v| v.label == *label).and_then(|v| v.metric(Metric::ServerDecodeTps)?.ci);
        format!("{label}: adjusted {:+.2}% {} beside the plain {}", adj.center_pct(), ci_pct(Some(*adj)), ci_pct(plain))
    });
    vec![Section::new(title).notes(adjusted)]
}

/// The runtime libraries the servers loaded (docs/methodology.md §2.2): one line where every
/// variant loaded the same, else one per variant.
fn runtime_line(s: &Summary) -> Option<String> {
    let first = s.runtimes.first()?;
    if s.runtimes.len() == s.variants.len() && s.runtimes.iter().all(|r| r.libraries == first.libraries) {
        return Some(format!("runtime (every variant's server loaded): {}", first.libraries.join(", ")));
    }
    let each: Vec<String> = s.runtimes.iter().map(|r| format!("{}: {}", r.label, r.libraries.join(", "))).collect();
    Some(format!("runtime (the servers loaded): {}", each.join("; ")))
}

/// The host's power state, the runtime the servers loaded, the noise hint, and why no energy was
/// measured: a line each.
pub(crate) fn lines(s: &Summary) -> Vec<Section> {
    let mut out = Vec::new();
    if let Some(p) = &s.power_state {
        out.push(Section::line(format!("power state (host.json): {p}")));
    }
    if let Some(line) = runtime_line(s) {
        out.push(Section::line(line));
    }
    if let Some(hint) = &s.noise_hint {
        out.push(Section::line(format!("noise: {hint}")));
    }
    if let Some(why) = &s.energy_not_measured {
        out.push(Section::line(format!("energy and power (J/token, J/prompt token, mean power, tokens/J): {why}")));
    }
    out
}
