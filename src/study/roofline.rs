//! The decode-roofline inputs of a study (docs/methodology.md §18), recorded once, before its
//! first sample, in `roofline.json`: per variant what its model and KV cache weigh and the
//! bandwidth of the memory it decodes from. Nothing here can stop a study: a piece that cannot
//! be had is recorded with the reason, and the summary says why there is no floor.
use super::evidence::{write_json, Evidence};
use super::file::StudyFile;
use crate::roofline::bandwidth::probe_gpu;
use crate::roofline::bandwidth::target::{for_server, GpuVendor};
use crate::roofline::bandwidth::{self, Bandwidth, Target};
use crate::roofline::{model_inputs, server_args, RooflineRecord, VariantInputs};
use crate::telemetry::SourceKind;
use crate::variant::Variant;

/// The GPU a telemetry source watches.
fn vendor(kind: Option<SourceKind>) -> Option<GpuVendor> {
    match kind? {
        SourceKind::Nvml => Some(GpuVendor::Nvidia),
        SourceKind::AmdSmi | SourceKind::RocmSmi | SourceKind::AmdgpuSysfs => Some(GpuVendor::Amd),
        _ => None,
    }
}

/// Writes `roofline.json` unless the study has one (a resumed study keeps the one it started with).
pub(crate) fn record(
    ev: &Evidence,
    file: &StudyFile,
    variants: &[Variant],
    common: &[String],
    telemetry: Option<SourceKind>,
) -> Result<(), super::evidence::EvidenceError> {
    let path = ev.roofline_file();
    if path.exists() {
        return Ok(());
    }
    let gpu = vendor(telemetry);
    let mut probed: Option<Option<Target>> = None;
    let mut measured: Vec<(Target, Result<Bandwidth, String>)> = Vec::new();
    let mut out = Vec::new();
    for v in variants {
        let args = v.server_args(&file.model, common);
        let model = v.model_or(&file.model).to_path_buf();
        let mut problems = Vec::new();
        let (weights, kv) = match server_args::kv_types(&args).and_then(|kv| model_inputs(&model, kv)) {
            Ok((w, k)) => (Some(w), Some(k)),
            Err(e) => {
                problems.push(e.to_string());
                (None, None)
            }
        };
        let target = for_server(&args, gpu, || probed.get_or_insert_with(probe_gpu).clone());
        if !measured.iter().any(|(t, _)| *t == target) {
            // Printed nowhere: a study's output is its summary, which shows the figure or why
            // there is none, and its error lines stay one line each.
            let b = bandwidth::bandwidth(&target, false).map_err(|e| e.to_string());
            measured.push((target.clone(), b));
        }
        let bandwidth = match measured.iter().find(|(t, _)| *t == target).map(|(_, b)| b) {
            Some(Ok(b)) => Some(b.clone()),
            Some(Err(e)) => {
                problems.push(format!("no bandwidth for {}: {e}", target.describe()));
                None
            }
            None => None,
        };
        out.push(VariantInputs { label: v.label.clone(), model, weights, kv, target, bandwidth, problems });
    }
    write_json(&path, &RooflineRecord { variants: out })
}
