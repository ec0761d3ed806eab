//! A server started on more GPUs than were metered (docs/methodology.md §9.11): a record of a
//! release whose telemetry followed one device, where the variant's command line or environment
//! spread the model over more, says that its power, energy, temperature and clock are one
//! device's.
use crate::server::devices::devices_requested;

/// The caveat of a variant whose server runs on two GPUs or more while fewer were metered
/// (`metered`: how many devices an accepted sample's telemetry measured power on; 0 for none).
pub(crate) fn one_device_caveat(argv: &[String], env: &[(String, String)], metered: usize) -> Option<String> {
    let (n, from) = devices_requested(argv, env).filter(|(n, _)| *n >= 2 && metered >= 1 && metered < *n)?;
    Some(format!(
        "the server is started on {n} GPUs ({from}) but the telemetry metered {metered}: its power, energy, temperature and clock leave the other {} out (docs/methodology.md §9.11)",
        n - metered
    ))
}

/// How many devices an accepted sample's telemetry measured decode power on (0 for none): a
/// record of a server on several GPUs lists each of them.
pub(crate) fn metered_devices(samples: &[&crate::measure::Sample]) -> usize {
    samples
        .iter()
        .filter_map(|s| s.extra.telemetry.as_ref())
        .filter(|t| t.phases.as_ref().is_some_and(|p| p[1].mean_power_w.is_some()))
        .map(|t| t.devices.len().max(1))
        .max()
        .unwrap_or(0)
}

/// One device's phase figures over a variant's accepted samples.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct DeviceFigures {
    /// The telemetry backend's index.
    pub(crate) index: u32,
    pub(crate) prefill: Option<super::phases::PhaseFigures>,
    pub(crate) decode: Option<super::phases::PhaseFigures>,
}

/// Each device's figures, where accepted samples recorded several devices; in the devices' order
/// of the first such sample.
pub(crate) fn device_figures(samples: &[&crate::measure::Sample]) -> Vec<DeviceFigures> {
    let per_sample: Vec<&[crate::telemetry::record::DeviceTelemetry]> =
        samples.iter().filter_map(|s| s.extra.telemetry.as_ref()).map(|t| t.devices.as_slice()).collect();
    let Some(order) = per_sample.iter().find(|d| !d.is_empty()) else { return Vec::new() };
    order
        .iter()
        .map(|d| {
            let phases: Vec<&[crate::telemetry::phases::PhaseStats; 2]> =
                per_sample.iter().filter_map(|all| all.iter().find(|x| x.index == d.index)?.phases.as_ref()).collect();
            DeviceFigures {
                index: d.index,
                prefill: super::phases::figures(&phases.iter().map(|p| &p[0]).collect::<Vec<_>>()),
                decode: super::phases::figures(&phases.iter().map(|p| &p[1]).collect::<Vec<_>>()),
            }
        })
        .collect()
}

/// [`one_device_caveat`] of a variant from its spec (its `env=`) and a sample's server argv.
pub(crate) fn variant_caveat(spec: Option<&str>, argv: &[String], metered: usize) -> Option<String> {
    let env = spec.and_then(|s| crate::variant::Variant::parse(s).ok()).map(|v| v.env).unwrap_or_default();
    one_device_caveat(argv, &env, metered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_server_on_more_gpus_than_were_metered_is_caveated() {
        let none: &[(String, String)] = &[];
        let caveat = one_device_caveat(&argv("-ts 1,1"), none, 1).unwrap();
        assert!(caveat.contains("started on 2 GPUs (--tensor-split 1,1) but the telemetry metered 1"), "{caveat}");
        assert!(one_device_caveat(&argv("-ts 1,1"), none, 0).is_none(), "nothing metered: nothing to caveat");
        assert!(one_device_caveat(&argv("-ts 1,1"), none, 2).is_none(), "every device metered");
        assert!(one_device_caveat(&argv("-dev CUDA0"), none, 1).is_none());
    }
}
