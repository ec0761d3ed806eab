//! Which GPUs a llama-server command line and environment start the server on
//! (docs/methodology.md §9.11), so the study meters each of them and no other.
//!
//! llama.cpp's rules, in the order it applies them: the runtime sees the devices its
//! `CUDA_VISIBLE_DEVICES`/`HIP_VISIBLE_DEVICES`/`ROCR_VISIBLE_DEVICES` list (every device without
//! one) and numbers them from 0 (`CUDA0`, `ROCm1`); `--device`/`-dev` picks some of those (`none`:
//! no GPU); `--tensor-split`/`-ts` gives each picked device a share and a zero share leaves it
//! out; `--split-mode none`/`-sm none` keeps the `--main-gpu`/`-mg` one (default 0) alone.
//! Otherwise the layers are split over every picked device.

/// The GPUs a server runs on, as the telemetry backend's indices (NVML and ROCm SMI index, n-th
/// amdgpu card), and what said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeviceUse {
    /// Never empty: a server that uses no GPU is metered on the first visible one, as a server
    /// was before devices were told apart.
    pub(crate) indices: Vec<u32>,
    pub(crate) from: String,
}

const VISIBLE_VARS: [&str; 3] = ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"];

/// What the command line picks, as positions among the visible devices.
struct Picked {
    /// `None`: every visible device.
    positions: Option<Vec<usize>>,
    /// The flags that picked them, in words; empty where none did.
    from: Vec<String>,
}

/// The last value of any of `names` in `argv` (llama.cpp's parser keeps the last).
pub(super) fn value<'a>(argv: &'a [String], names: &[&str]) -> Option<&'a str> {
    argv.windows(2).rev().find(|w| names.contains(&w[0].as_str())).map(|w| w[1].as_str())
}

pub(super) fn entries(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|x| !x.is_empty())
}

/// The position a device name stands for: its trailing number (`CUDA1` → 1, `ROCm0` → 0).
fn position(name: &str) -> Result<usize, String> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    name[name.len() - digits..].parse().map_err(|_| {
        format!("--device {name} names no numbered GPU (llama-server --list-devices prints the names, such as CUDA0)")
    })
}

fn picked(argv: &[String]) -> Result<Picked, String> {
    let mut from = Vec::new();
    let mut positions: Option<Vec<usize>> = None;
    if let Some(list) = value(argv, &["--device", "-dev"]) {
        from.push(format!("--device {list}"));
        positions =
            Some(if list == "none" { Vec::new() } else { entries(list).map(position).collect::<Result<_, _>>()? });
    }
    if value(argv, &["--split-mode", "-sm"]) == Some("none") {
        let main: usize = match value(argv, &["--main-gpu", "-mg"]) {
            Some(m) => m.parse().map_err(|_| format!("--main-gpu {m} is not a device number"))?,
            None => 0,
        };
        from.push(format!("--split-mode none (main GPU {main})"));
        // The main GPU is a position in the picked list, or among all visible devices.
        let chosen = match &positions {
            Some(list) => list.get(main).copied().into_iter().collect(),
            None => vec![main],
        };
        return Ok(Picked { positions: Some(chosen), from });
    }
    if let Some(ts) = value(argv, &["--tensor-split", "-ts"]) {
        from.push(format!("--tensor-split {ts}"));
        let shares: Vec<bool> = ts.split([',', '/']).map(|x| x.trim().parse::<f64>().is_ok_and(|v| v > 0.0)).collect();
        let base: Vec<usize> = positions.clone().unwrap_or_else(|| (0..shares.len()).collect());
        positions = Some(base.into_iter().zip(&shares).filter(|(_, &on)| on).map(|(p, _)| p).collect());
    }
    Ok(Picked { positions, from })
}

/// How many GPUs the command line and the variant's environment alone say the server runs on,
/// and what said it; `None` where they do not say (every device of the host, which a record
/// written before devices were metered does not hold). Reads the records of earlier releases,
/// whose telemetry metered one device.
pub(crate) fn devices_requested(argv: &[String], env: &[(String, String)]) -> Option<(usize, String)> {
    let picked = picked(argv).ok()?;
    let visible = VISIBLE_VARS.iter().find_map(|k| env.iter().rev().find(|(n, _)| n == k).map(|(_, v)| (k, v)));
    match (picked.positions, visible) {
        (Some(p), _) => Some((p.len(), picked.from.join(", "))),
        (None, Some((k, v))) => Some((entries(v).count(), format!("{k}={v}"))),
        (None, None) => None,
    }
}

/// The backend indices of the GPUs the server runs on. `env` is the variant's own environment;
/// `inherited` reads abprof's (the server inherits it under the variant's); `on_host` is how many
/// devices the telemetry backend sees. A visible-devices list of UUIDs, or a device the host does
/// not have, is refused in one line: metering the wrong GPU would be worse than none.
pub(crate) fn devices_used(
    argv: &[String],
    env: &[(String, String)],
    inherited: &dyn Fn(&str) -> Option<String>,
    on_host: u32,
) -> Result<DeviceUse, String> {
    let set = VISIBLE_VARS.iter().find_map(|k| {
        let own = env.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        own.or_else(|| inherited(k)).map(|v| (*k, v))
    });
    let visible: Vec<u32> = match &set {
        Some((k, v)) => entries(v)
            .map(|e| {
                e.parse::<u32>().map_err(|_| {
                    format!("{k}={v} names a device by {e:?}, which abprof cannot match to a telemetry index: list the devices by index (nvidia-smi -L or rocm-smi prints both), or pass --telemetry none")
                })
            })
            .collect::<Result<_, _>>()?,
        None => (0..on_host).collect(),
    };
    if let Some(bad) = visible.iter().find(|&&i| i >= on_host) {
        let (k, v) = set.as_ref().expect("only a listed device can be missing");
        return Err(format!(
            "{k}={v} names device {bad}, but the telemetry sees {on_host} device(s) on this host: fix the list"
        ));
    }
    let picked = picked(argv)?;
    let mut from = picked.from;
    if let Some((k, v)) = &set {
        from.insert(0, format!("{k}={v}"));
    }
    let positions = picked.positions.unwrap_or_else(|| (0..visible.len()).collect());
    let mut indices = Vec::with_capacity(positions.len());
    for p in positions {
        let i = *visible.get(p).ok_or_else(|| {
            format!("{} picks GPU {p}, but the server sees {} device(s): fix the flag", from.join(", "), visible.len())
        })?;
        if !indices.contains(&i) {
            indices.push(i);
        }
    }
    if indices.is_empty() {
        from.push("no GPU: the first visible device is metered".into());
        indices.extend(visible.first().copied().or(Some(0)));
    }
    let from = if from.is_empty() { format!("every visible device ({on_host})") } else { from.join(", ") };
    Ok(DeviceUse { indices, from })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn env(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.to_string(), v.to_string())]
    }

    const NONE: &[(String, String)] = &[];

    fn unset(_: &str) -> Option<String> {
        None
    }

    fn used(args: &str, env: &[(String, String)], on_host: u32) -> Result<Vec<u32>, String> {
        devices_used(&argv(args), env, &unset, on_host).map(|d| d.indices)
    }

    #[test]
    fn the_command_line_and_the_variants_environment_say_how_many_gpus() {
        assert_eq!(devices_requested(&argv("-m x -dev CUDA0,CUDA1"), NONE), Some((2, "--device CUDA0,CUDA1".into())));
        assert_eq!(devices_requested(&argv("--device none -ngl 0"), NONE).map(|d| d.0), Some(0));
        assert_eq!(devices_requested(&argv("-ts 3,1 -sm none"), NONE).map(|d| d.0), Some(1));
        assert_eq!(devices_requested(&argv("-dev CUDA0,CUDA1 -sm none"), NONE).map(|d| d.0), Some(1));
        assert_eq!(devices_requested(&argv("--tensor-split 3,1,0"), NONE).map(|d| d.0), Some(2));
        assert_eq!(devices_requested(&argv("-ts 1/1/1"), NONE).map(|d| d.0), Some(3));
        let cuda01 = env("CUDA_VISIBLE_DEVICES", "0,1");
        assert_eq!(devices_requested(&argv("-ngl 99"), &cuda01), Some((2, "CUDA_VISIBLE_DEVICES=0,1".into())));
        assert_eq!(devices_requested(&argv("-ngl 99 -dev CUDA1"), &cuda01).map(|d| d.0), Some(1), "the flag wins");
        assert_eq!(devices_requested(&argv("-ngl 99 -fa on"), NONE), None, "nothing says: unknown");
    }

    /// The indices follow llama.cpp: positions among the visible devices, narrowed by each flag.
    #[test]
    fn the_server_runs_on_the_visible_devices_its_flags_pick() {
        assert_eq!(used("-ngl 99", NONE, 1), Ok(vec![0]), "one GPU: the single-device path");
        assert_eq!(used("-ngl 99", NONE, 2), Ok(vec![0, 1]), "llama.cpp splits over every visible device");
        assert_eq!(used("-ngl 99", &env("CUDA_VISIBLE_DEVICES", "1"), 2), Ok(vec![1]));
        assert_eq!(used("-ngl 99", &env("HIP_VISIBLE_DEVICES", "3,1"), 4), Ok(vec![3, 1]));
        assert_eq!(
            used("-dev CUDA1", &env("CUDA_VISIBLE_DEVICES", "2,3"), 4),
            Ok(vec![3]),
            "CUDA1 is the second visible"
        );
        assert_eq!(used("-dev ROCm0,ROCm1", NONE, 2), Ok(vec![0, 1]));
        assert_eq!(used("-ts 0,1", NONE, 2), Ok(vec![1]), "a zero share leaves a device out");
        assert_eq!(used("-dev CUDA1,CUDA2 -ts 1,0", NONE, 3), Ok(vec![1]), "shares apply to the picked list");
        assert_eq!(used("-sm none -mg 1", NONE, 2), Ok(vec![1]));
        assert_eq!(used("-dev CUDA2,CUDA0 -sm none", NONE, 3), Ok(vec![2]), "the main GPU among the picked");
        assert_eq!(used("-dev none -ngl 0", NONE, 2), Ok(vec![0]), "no GPU: the first visible is metered");
        let d = devices_used(&argv("-ts 1,1"), &env("CUDA_VISIBLE_DEVICES", "0,1"), &unset, 2).unwrap();
        assert_eq!(d.from, "CUDA_VISIBLE_DEVICES=0,1, --tensor-split 1,1");
        assert_eq!(devices_used(&argv("-ngl 99"), NONE, &unset, 2).unwrap().from, "every visible device (2)");
    }

    #[test]
    fn the_variants_environment_wins_over_abprofs_own() {
        let inherited = |k: &str| (k == "CUDA_VISIBLE_DEVICES").then(|| "1".to_string());
        let d = devices_used(&argv("-ngl 99"), NONE, &inherited, 2).unwrap();
        assert_eq!(d.indices, [1]);
        let d = devices_used(&argv("-ngl 99"), &env("CUDA_VISIBLE_DEVICES", "0"), &inherited, 2).unwrap();
        assert_eq!(d.indices, [0]);
    }

    #[test]
    fn a_list_the_telemetry_cannot_match_is_refused_in_one_line() {
        let uuid = env("CUDA_VISIBLE_DEVICES", "GPU-5f3c1b7e-0000-0000-0000-000000000000");
        let e = used("-ngl 99", &uuid, 1).unwrap_err();
        assert!(e.contains("cannot match to a telemetry index") && e.contains("list the devices by index"), "{e}");
        let e = used("-ngl 99", &env("CUDA_VISIBLE_DEVICES", "0,2"), 2).unwrap_err();
        assert!(e.contains("names device 2, but the telemetry sees 2 device(s)"), "{e}");
        let e = used("-dev CUDA1", NONE, 1).unwrap_err();
        assert!(e.contains("picks GPU 1, but the server sees 1 device(s)"), "{e}");
        let e = used("-dev Metal", NONE, 1).unwrap_err();
        assert!(e.contains("names no numbered GPU"), "{e}");
        assert!(!e.contains('\n'));
    }
}
