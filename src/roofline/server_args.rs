//! What a llama-server launch line says about its decode: KV cache types, threads, offload.
//! llama-server, like most parsers, keeps the last value of a repeated flag, and so does this.
use super::gguf::{GgmlType, ModelError};

/// The last value given to any of `flags`, as `-f V` or `--flag=V`.
fn last_value<'a>(args: &'a [String], flags: &[&str]) -> Option<&'a str> {
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        if let Some((flag, value)) = a.split_once('=') {
            if flags.contains(&flag) {
                found = Some(value);
            }
        } else if flags.contains(&a.as_str()) {
            found = args.get(i + 1).map(String::as_str);
        }
    }
    found
}

/// The K and V cache types: `-ctk`/`-ctv`, else llama-server's default, f16.
pub(crate) fn kv_types(args: &[String]) -> Result<(GgmlType, GgmlType), ModelError> {
    let k = last_value(args, &["-ctk", "--cache-type-k"]).unwrap_or("f16");
    let v = last_value(args, &["-ctv", "--cache-type-v"]).unwrap_or("f16");
    Ok((GgmlType::from_name(k)?, GgmlType::from_name(v)?))
}

/// The threads decode runs on: `-t`, else llama-server's default, the physical cores.
pub(crate) fn threads(args: &[String]) -> u32 {
    last_value(args, &["-t", "--threads"])
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|&n| n > 0)
        .map_or_else(physical_cores, |n| n as u32)
}

/// llama-server's default thread count: the physical cores (one per set of SMT siblings).
pub(crate) fn physical_cores() -> u32 {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu") else { return logical };
    let mut siblings = std::collections::BTreeSet::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.strip_prefix("cpu").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        if let Ok(s) = std::fs::read_to_string(e.path().join("topology/thread_siblings_list")) {
            siblings.insert(s.trim().to_string());
        }
    }
    if siblings.is_empty() {
        logical
    } else {
        (siblings.len() as u32).min(logical)
    }
}

/// Whether every layer stays on the host: `-ngl 0` or `--device none`.
pub(crate) fn offloads_nothing(args: &[String]) -> bool {
    last_value(args, &["-ngl", "--gpu-layers", "--n-gpu-layers"]).is_some_and(|v| v.trim() == "0")
        || last_value(args, &["-dev", "--device"]).is_some_and(|v| v.trim() == "none")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        shlex::split(s).unwrap()
    }

    #[test]
    fn kv_types_take_the_last_flag_and_default_to_f16() {
        let name = |a: &str| {
            let (k, v) = kv_types(&args(a)).unwrap();
            (k.name(), v.name())
        };
        assert_eq!(name("-c 4096"), ("f16".into(), "f16".into()));
        assert_eq!(name("--cache-type-k q8_0 --cache-type-v q8_0"), ("q8_0".into(), "q8_0".into()));
        assert_eq!(name("-ctk q4_0 -ctv=f16 --cache-type-k=q5_1"), ("q5_1".into(), "f16".into()));
        assert!(kv_types(&args("-ctk q9_9")).is_err());
        assert_eq!(threads(&args("-t 3 --threads 2")), 2);
        assert!(physical_cores() >= 1 && threads(&[]) == physical_cores());
        assert!(offloads_nothing(&args("-ngl 99 --n-gpu-layers=0")) && !offloads_nothing(&args("-ngl 0 -ngl 99")));
    }
}
