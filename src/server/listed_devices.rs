//! The devices a llama-server binary itself sees (`llama-server --list-devices`), so that a
//! variant whose `--device` names one it does not see is refused before a study folder exists
//! (docs/methodology.md §9.11), instead of failing its first sample with llama.cpp's
//! "invalid device".
use std::time::Duration;

/// How long a binary may take to list its devices (it loads its backends, no model).
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// The device names of `llama-server --list-devices` output (`Available devices:`, then one
/// `  NAME: description (N MiB, M MiB free)` line per device, or `  (none)`); None where the
/// output is not such a list (a binary without the flag).
pub(crate) fn parse(out: &str) -> Option<Vec<String>> {
    let mut lines = out.lines().skip_while(|l| l.trim() != "Available devices:");
    lines.next()?;
    let mut names = Vec::new();
    for line in lines {
        let Some(entry) = line.strip_prefix("  ") else { break };
        if entry.trim() == "(none)" {
            break;
        }
        match entry.split_once(": ") {
            Some((name, _)) if !name.is_empty() && !name.contains(' ') => names.push(name.to_string()),
            _ => break,
        }
    }
    Some(names)
}

/// The devices a variant names, and where: its `--device`/`-dev` (the last, as llama.cpp keeps),
/// else its `LLAMA_ARG_DEVICE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamedDevices {
    pub(crate) names: Vec<String>,
    from_env: bool,
}

impl NamedDevices {
    /// `name` as the variant gave it: `--device CUDA3`, or `LLAMA_ARG_DEVICE=CUDA3`.
    fn given(&self, name: &str) -> String {
        if self.from_env {
            format!("{ENV}={name}")
        } else {
            format!("--device {name}")
        }
    }
}

/// The variable llama.cpp reads a `--device` from.
pub(crate) const ENV: &str = "LLAMA_ARG_DEVICE";

/// The devices `argv`, else the variant's environment `env`, names; None where neither names one
/// (`none` names none).
pub(crate) fn named(argv: &[String], env: &[(String, String)]) -> Option<NamedDevices> {
    let flag = super::devices::value(argv, &["--device", "-dev"]).map(String::from);
    let from_env = flag.is_none();
    let list = flag.or_else(|| env.iter().rev().find(|(k, _)| k == ENV).map(|(_, v)| v.clone()))?;
    let names: Vec<String> = super::devices::entries(&list).filter(|x| *x != "none").map(String::from).collect();
    (!names.is_empty()).then_some(NamedDevices { names, from_env })
}

/// The first device `named` gives that `listed` does not hold, in one line naming the fix.
/// llama.cpp matches device names without regard to case.
pub(crate) fn missing(named: &NamedDevices, listed: &[String]) -> Option<String> {
    let unknown = named.names.iter().find(|n| !listed.iter().any(|l| l.eq_ignore_ascii_case(n)))?;
    let seen =
        if listed.is_empty() { "none: a CPU-only build or no visible GPU".to_string() } else { listed.join(", ") };
    let leave_out = if named.from_env { ENV } else { "--device" };
    Some(format!(
        "{} is not a device this llama-server sees (`llama-server --list-devices` lists {seen}): pass one it lists, or leave out {leave_out}",
        named.given(unknown)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test bed's CPU build, as it printed (`llama-server --list-devices`, pinned tree).
    const CPU_BUILD: &str = "Available devices:\n  (none)\n";
    /// Two GPUs in the format of common/arg.cpp (`"  %s: %s (%zu MiB, %zu MiB free)\n"`).
    const TWO_GPUS: &str = "ggml_cuda_init: found 2 CUDA devices:\nAvailable devices:\n  CUDA0: NVIDIA H200 (143166 MiB, 142586 MiB free)\n  CUDA1: NVIDIA H200 (143166 MiB, 142586 MiB free)\n";

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_list_is_read_from_the_binarys_own_output() {
        assert_eq!(parse(CPU_BUILD), Some(vec![]));
        assert_eq!(parse(TWO_GPUS), Some(v(&["CUDA0", "CUDA1"])));
        assert_eq!(parse("error: invalid argument: --list-devices\n"), None);
    }

    #[test]
    fn a_device_the_binary_does_not_list_is_named_with_the_fix() {
        let argv = v(&["-m", "x.gguf", "-dev", "CUDA3"]);
        let names = named(&argv, &[]).unwrap();
        let line = missing(&names, &parse(TWO_GPUS).unwrap()).unwrap();
        assert!(line.contains("--device CUDA3") && line.contains("lists CUDA0, CUDA1"), "{line}");
        let line = missing(&names, &[]).unwrap();
        assert!(line.contains("lists none: a CPU-only build"), "{line}");
        let cuda1 = named(&v(&["--device", "cuda1"]), &[]).unwrap();
        assert_eq!(missing(&cuda1, &parse(TWO_GPUS).unwrap()), None, "case does not matter");
        assert_eq!(named(&v(&["--device", "none"]), &[]), None);
        let env = named(&[], &[("LLAMA_ARG_DEVICE".into(), "ROCm0".into())]).unwrap();
        assert_eq!(env.names, v(&["ROCm0"]));
        let line = missing(&env, &parse(TWO_GPUS).unwrap()).unwrap();
        assert!(
            line.starts_with("LLAMA_ARG_DEVICE=ROCm0 is not a device") && line.ends_with("leave out LLAMA_ARG_DEVICE"),
            "{line}"
        );
        assert_eq!(
            named(&v(&["-dev", "CUDA0", "--device", "CUDA1,CUDA2"]), &[]).unwrap().names,
            v(&["CUDA1", "CUDA2"])
        );
    }
}
