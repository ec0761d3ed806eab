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
        .map_or_else(super::bandwidth::cpu::physical_cores, |n| n as u32)
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
        assert!(offloads_nothing(&args("-ngl 99 --n-gpu-layers=0")) && !offloads_nothing(&args("-ngl 0 -ngl 99")));
    }
}
