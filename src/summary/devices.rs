//! A server started on several GPUs, metered on one (docs/methodology.md §9.11): abprof's
//! telemetry follows one device, so a variant whose command line or environment spreads the model
//! over more says that its power, energy, temperature and clock are one device's.

/// How many GPUs the server is started on where its command line or its variant's environment
/// says so, and what said it: `--split-mode none`/`-sm none` one (the main GPU, whatever else
/// is given), `--device`/`-dev` a list of N (`none`: 0), `--tensor-split`/`-ts` N non-zero parts, else a variant's
/// `CUDA_VISIBLE_DEVICES`/`HIP_VISIBLE_DEVICES`/`ROCR_VISIBLE_DEVICES` list of N (llama.cpp splits
/// the layers over every visible device by default). `None` where nothing says: the server then
/// uses every device of the host, which the record does not hold.
pub(crate) fn devices_requested(argv: &[String], env: &[(String, String)]) -> Option<(usize, String)> {
    let value = |names: &[&str]| argv.windows(2).rev().find(|w| names.contains(&w[0].as_str())).map(|w| w[1].clone());
    let entries = |v: &str| v.split(',').map(str::trim).filter(|x| !x.is_empty()).count();
    // Split mode none runs on the main GPU alone, whatever the device list (llama.cpp's `-sm`).
    if value(&["--split-mode", "-sm"]).as_deref() == Some("none") {
        return Some((1, "--split-mode none".into()));
    }
    if let Some(d) = value(&["--device", "-dev"]) {
        return Some((if d == "none" { 0 } else { entries(&d) }, format!("--device {d}")));
    }
    if let Some(ts) = value(&["--tensor-split", "-ts"]) {
        let parts = ts.split([',', '/']).filter(|x| x.trim().parse::<f64>().is_ok_and(|v| v > 0.0)).count();
        return Some((parts, format!("--tensor-split {ts}")));
    }
    ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"].iter().find_map(|k| {
        let (_, v) = env.iter().rev().find(|(n, _)| n == k)?;
        Some((entries(v), format!("{k}={v}")))
    })
}

/// The caveat of a variant whose server runs on two GPUs or more while one was metered (`metered`:
/// some accepted sample's telemetry measured power).
pub(crate) fn one_device_caveat(argv: &[String], env: &[(String, String)], metered: bool) -> Option<String> {
    let (n, from) = devices_requested(argv, env).filter(|(n, _)| *n >= 2 && metered)?;
    Some(format!(
        "the server is started on {n} GPUs ({from}) but the telemetry meters one: its power, energy, temperature and clock are that device's alone (docs/methodology.md §9.11)"
    ))
}

/// [`one_device_caveat`] of a variant from its spec (its `env=`) and a sample's server argv.
pub(crate) fn variant_caveat(spec: Option<&str>, argv: &[String], metered: bool) -> Option<String> {
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
    fn the_command_line_and_the_variants_environment_say_how_many_gpus() {
        let none: &[(String, String)] = &[];
        assert_eq!(devices_requested(&argv("-m x -dev CUDA0,CUDA1"), none), Some((2, "--device CUDA0,CUDA1".into())));
        assert_eq!(devices_requested(&argv("--device none -ngl 0"), none).map(|d| d.0), Some(0));
        assert_eq!(devices_requested(&argv("-ts 3,1 -sm none"), none), Some((1, "--split-mode none".into())));
        assert_eq!(devices_requested(&argv("-dev CUDA0,CUDA1 -sm none"), none).map(|d| d.0), Some(1));
        assert_eq!(devices_requested(&argv("--tensor-split 3,1,0"), none).map(|d| d.0), Some(2));
        assert_eq!(devices_requested(&argv("-ts 1/1/1"), none).map(|d| d.0), Some(3));
        let env = vec![("CUDA_VISIBLE_DEVICES".to_string(), "0,1".to_string())];
        assert_eq!(devices_requested(&argv("-ngl 99"), &env), Some((2, "CUDA_VISIBLE_DEVICES=0,1".into())));
        assert_eq!(devices_requested(&argv("-ngl 99 -dev CUDA1"), &env).map(|d| d.0), Some(1), "the flag wins");
        assert_eq!(devices_requested(&argv("-ngl 99 -fa on"), none), None, "nothing says: unknown");
        let caveat = one_device_caveat(&argv("-ts 1,1"), none, true).unwrap();
        assert!(caveat.contains("started on 2 GPUs (--tensor-split 1,1)"), "{caveat}");
        assert!(one_device_caveat(&argv("-ts 1,1"), none, false).is_none(), "nothing metered: nothing to caveat");
        assert!(one_device_caveat(&argv("-dev CUDA0"), none, true).is_none());
    }
}
