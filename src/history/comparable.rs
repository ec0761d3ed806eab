//! When two recorded studies of a variant compare (docs/methodology.md §15 "comparable"): the
//! same load, model bytes, prompt and output lengths, host, GPU and common server arguments. The
//! variant's own fields (binary, commit, `--version`, KV type, `extra=`, env, `expect=`) may
//! differ: they are what moved.
use super::query::HistoryRow;
use serde::Serialize;

/// The setup a series shares: two rows with equal keys compare.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub(crate) struct SeriesKey {
    pub(crate) load: &'static str,
    pub(crate) model_sha256: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) output_tokens: Option<u32>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) host: Option<String>,
    pub(crate) cpu: Option<String>,
    pub(crate) gpu: Option<String>,
    /// The power state (docs/methodology.md §9.7): limits, profile, driver and runtime versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) power_state: Option<String>,
    pub(crate) server_args: Vec<String>,
    pub(crate) pure_decode: bool,
    pub(crate) ignore_eos: bool,
}

impl SeriesKey {
    pub(crate) fn of(r: &HistoryRow) -> SeriesKey {
        SeriesKey {
            load: r.kind.load(),
            model_sha256: r.model_sha256.clone(),
            model: r.model_name(),
            output_tokens: r.output_tokens,
            prompt_tokens: r.prompt_tokens,
            host: r.host.clone(),
            cpu: r.cpu.clone(),
            gpu: r.gpu.clone(),
            power_state: r.power_state.clone(),
            server_args: r.server_args.clone(),
            pure_decode: r.pure_decode,
            ignore_eos: r.ignore_eos,
        }
    }

    /// Equal in everything that decides comparability (the model's file name is for people):
    /// every field [`differences`] names, compared without writing its reasons, since
    /// `--regressions` asks this of a label's studies pair by pair.
    pub(crate) fn same(&self, other: &SeriesKey) -> bool {
        self.load == other.load
            && self.model_sha256 == other.model_sha256
            && self.output_tokens == other.output_tokens
            && self.prompt_tokens == other.prompt_tokens
            && self.host == other.host
            && self.cpu == other.cpu
            && self.gpu == other.gpu
            && self.power_state == other.power_state
            && self.server_args == other.server_args
            && self.pure_decode == other.pure_decode
            && self.ignore_eos == other.ignore_eos
    }

    /// One line for people: the model, lengths, host and arguments.
    pub(crate) fn line(&self) -> String {
        format!(
            "model {} ({}) · {} · prompt {} · output {} · host {} · args \"{}\"",
            short(self.model_sha256.as_deref()),
            self.model.as_deref().unwrap_or("?"),
            self.load,
            opt(self.prompt_tokens),
            opt(self.output_tokens),
            self.host.as_deref().unwrap_or("?"),
            self.server_args.join(" "),
        )
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "unknown".into(), |v| v.to_string())
}

/// The first 12 hex digits of a hash.
pub(crate) fn short(sha: Option<&str>) -> String {
    sha.map_or_else(|| "unknown".into(), |s| s.chars().take(12).collect())
}

fn text(v: Option<&str>) -> String {
    v.map_or_else(|| "unknown".into(), String::from)
}

/// Why `a` and `b` are not comparable, one reason per field that differs; empty: comparable.
pub(crate) fn differences(a: &SeriesKey, b: &SeriesKey) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |same: bool, why: String| {
        if !same {
            out.push(why)
        }
    };
    check(a.load == b.load, format!("measured differently ({} vs {})", a.load, b.load));
    check(
        a.model_sha256 == b.model_sha256,
        format!(
            "model sha256 differs ({} {} vs {} {})",
            short(a.model_sha256.as_deref()),
            text(a.model.as_deref()),
            short(b.model_sha256.as_deref()),
            text(b.model.as_deref())
        ),
    );
    check(
        a.output_tokens == b.output_tokens,
        format!("output tokens differ ({} vs {})", opt(a.output_tokens), opt(b.output_tokens)),
    );
    check(
        a.prompt_tokens == b.prompt_tokens,
        format!("prompt tokens differ ({} vs {})", opt(a.prompt_tokens), opt(b.prompt_tokens)),
    );
    check(a.host == b.host, format!("host differs ({} vs {})", text(a.host.as_deref()), text(b.host.as_deref())));
    check(a.cpu == b.cpu, format!("CPU differs ({} vs {})", text(a.cpu.as_deref()), text(b.cpu.as_deref())));
    check(a.gpu == b.gpu, format!("GPU differs ({} vs {})", text(a.gpu.as_deref()), text(b.gpu.as_deref())));
    check(
        a.power_state == b.power_state,
        format!("power state differs ({} vs {})", text(a.power_state.as_deref()), text(b.power_state.as_deref())),
    );
    check(
        a.server_args == b.server_args,
        format!("server args differ (\"{}\" vs \"{}\")", a.server_args.join(" "), b.server_args.join(" ")),
    );
    check(a.pure_decode == b.pure_decode, format!("pure decode differs ({} vs {})", a.pure_decode, b.pure_decode));
    check(a.ignore_eos == b.ignore_eos, format!("ignore_eos differs ({} vs {})", a.ignore_eos, b.ignore_eos));
    out
}

/// What changed in the variant itself from `a` to `b`: the moves' suspects.
pub(crate) fn variant_changes(a: &HistoryRow, b: &HistoryRow) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |name: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{name} {x} → {y}"))
        }
    };
    field("binary", short(a.binary_sha256.as_deref()), short(b.binary_sha256.as_deref()));
    field("commit", text(a.commit.as_deref()), text(b.commit.as_deref()));
    if a.commit == b.commit {
        let first = |v: &Option<String>| text(v.as_deref().and_then(|v| v.lines().next()));
        field("version", first(&a.version), first(&b.version));
    }
    field("kv", text(a.kv.as_deref()), text(b.kv.as_deref()));
    field("args", format!("\"{}\"", a.own_args.join(" ")), format!("\"{}\"", b.own_args.join(" ")));
    let env = |r: &HistoryRow| r.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    field("env", format!("\"{}\"", env(a)), format!("\"{}\"", env(b)));
    field("expect", text(a.expect.as_deref()), text(b.expect.as_deref()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SeriesKey {
        SeriesKey {
            load: "chat request",
            model_sha256: Some("a".repeat(64)),
            model: Some("t.gguf".into()),
            output_tokens: Some(8),
            prompt_tokens: Some(300),
            host: Some("vm".into()),
            cpu: Some("EPYC".into()),
            gpu: None,
            power_state: Some("nvidia-smi gpu0 enforced.power.limit 700.0 W · driver 580.95.05".into()),
            server_args: vec!["-c".into(), "4096".into()],
            pure_decode: false,
            ignore_eos: true,
        }
    }

    #[test]
    fn every_setup_field_that_differs_is_named_and_the_file_name_alone_is_not_one() {
        let a = key();
        assert!(differences(&a, &key()).is_empty());
        let renamed = SeriesKey { model: Some("copy.gguf".into()), ..key() };
        assert!(a.same(&renamed), "the same bytes under another name");
        let b = SeriesKey {
            output_tokens: Some(16),
            host: Some("gpu-box".into()),
            server_args: vec!["-c".into(), "8192".into()],
            ..key()
        };
        assert_eq!(
            differences(&a, &b),
            [
                "output tokens differ (8 vs 16)",
                "host differs (vm vs gpu-box)",
                "server args differ (\"-c 4096\" vs \"-c 8192\")"
            ]
        );
        assert!(!a.same(&b));
        for one in [
            SeriesKey { load: "Pi agent run", ..key() },
            SeriesKey { model_sha256: None, ..key() },
            SeriesKey { prompt_tokens: Some(301), ..key() },
            SeriesKey { cpu: None, ..key() },
            SeriesKey { gpu: Some("MI300X".into()), ..key() },
            SeriesKey { pure_decode: true, ..key() },
            SeriesKey { ignore_eos: false, ..key() },
        ] {
            assert_eq!(differences(&a, &one).len(), 1, "{one:?}");
            assert!(!a.same(&one), "same() and differences() judge alike: {one:?}");
        }
    }

    /// docs/methodology.md §9.7: a study at another power limit (or driver) is another setup.
    #[test]
    fn a_study_under_another_power_limit_is_not_compared_and_the_reason_names_both() {
        let capped = SeriesKey {
            power_state: Some("nvidia-smi gpu0 enforced.power.limit 340.0 W · driver 580.95.05".into()),
            ..key()
        };
        assert_eq!(
            differences(&key(), &capped),
            ["power state differs (nvidia-smi gpu0 enforced.power.limit 700.0 W · driver 580.95.05 vs nvidia-smi gpu0 enforced.power.limit 340.0 W · driver 580.95.05)"]
        );
        assert!(!key().same(&capped));
        let unrecorded = SeriesKey { power_state: None, ..key() };
        assert!(!key().same(&unrecorded), "a study that recorded no power state is not assumed to match");
    }
}
