//! The variant spec grammar: `label=binary[|kv=TYPE][|env=VAR=VAL]...[|extra=ARGS][|model=PATH][|expect=REGEX]`.
//! The first variant of a study is the baseline.
//!
//! Fields are separated by `|` followed by `key=`; a `|` inside a value that is followed by
//! something else (a regex alternation such as `expect=FlashHead|flash head`) stays in the value,
//! and `\|` is always a literal `|`.
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use thiserror::Error;

/// KV cache types llama-server accepts for `-ctk/-ctv`.
pub(crate) const KV_TYPES: &[&str] = &["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub(crate) label: String,
    /// The llama-server executable (resolved from an artifact folder when one was named).
    pub binary: PathBuf,
    /// The `abprof build` artifact folder the binary came from, if any.
    pub artifact: Option<PathBuf>,
    pub(crate) kv: Option<String>,
    /// Environment overrides for this variant only; the baseline has them absent, not "0".
    pub(crate) env: Vec<(String, String)>,
    pub(crate) extra: Vec<String>,
    pub(crate) model: Option<PathBuf>,
    /// A regex that must appear in each run's server log to prove the feature engaged.
    pub(crate) expect: Option<String>,
    /// The spec as written.
    pub(crate) spec: String,
}

#[derive(Debug, Error, PartialEq)]
pub enum VariantError {
    #[error("variant spec {0:?} has no '=': write it as label=/path/to/llama-server[|key=value...]")]
    NoEquals(String),
    #[error(
        "variant spec {spec:?}: label {label:?} must be 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' (it names a folder of the evidence): rename it"
    )]
    BadLabel { spec: String, label: String },
    #[error("variant {label}: unknown key {key:?}; known keys are kv, env, extra, model, expect")]
    UnknownKey { label: String, key: String },
    #[error("variant {label}: field {field:?} is not key=value")]
    BadField { label: String, field: String },
    #[error("variant {label}: binary {path} does not exist: give the path of a built llama-server or an `abprof build` artifact folder")]
    MissingBinary { label: String, path: PathBuf },
    #[error("variant {label}: {path} is not an executable file: give the llama-server binary itself, with its execute bit set")]
    NotExecutable { label: String, path: PathBuf },
    #[error("variant {label}: env name {name:?} is not a valid environment variable name (letters, digits, '_', not starting with a digit)")]
    BadEnvName { label: String, name: String },
    #[error("variant {label}: env= needs VAR=VAL, got {0:?}", .field)]
    BadEnv { label: String, field: String },
    #[error("variant {label}: kv type {kv:?} is not one of {}", KV_TYPES.join(", "))]
    BadKv { label: String, kv: String },
    #[error("variant {label}: cannot split extra= {extra:?} like a shell would (unbalanced quotes?)")]
    BadExtra { label: String, extra: String },
    #[error("variant {label}: model {path} does not exist: pass a GGUF file")]
    MissingModel { label: String, path: PathBuf },
    #[error("variant {label}: model {path} is a directory: pass the GGUF file in it")]
    ModelIsFolder { label: String, path: PathBuf },
    #[error("variant {label}: a field follows a '|' with spaces around it, which makes it part of the value before: write the spec without them, as {fixed:?}")]
    SpacedBar { label: String, fixed: String },
    #[error("variant {label}: expect= is not a valid regex: {error}")]
    BadExpect { label: String, error: String },
    #[error("variant label {0:?} is used twice: labels must be unique")]
    DuplicateLabel(String),
    #[error("variant {label}: {key}= given twice")]
    Repeated { label: String, key: String },
    #[error("variant {label}: binary {binary:?} given where each build's binary goes: write the spec as {label}=|key=value... (the fields every build runs with)")]
    TemplateBinary { label: String, binary: String },
    #[error("no variants given: pass --variant label=/path/to/llama-server at least once")]
    None,
}

static FIELD_START: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_-]*=").unwrap());
/// A label names a folder of the evidence (`trace`, `exactness`): it must be one safe path
/// component, so `..` (the parent of --root) and hidden names are refused.
static LABEL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$").unwrap());
static ENV_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").unwrap());

/// Whether `name` can name an environment variable (`env=NAME=VALUE`, a sweep's env axis).
pub(crate) fn is_env_name(name: &str) -> bool {
    ENV_NAME.is_match(name)
}
/// A `|` with spaces around it before a known key (`BIN | kv=q8_0`): not a field separator, so
/// the field would silently become part of the value before it. An escaped `\|` is a literal.
static SPACED_BAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^\\])(\s+\|\s*|\|\s+)(kv|env|extra|model|expect)=").unwrap());

/// Splits on `|` that begins a `key=` field; `\|` is a literal bar.
fn split_fields(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if s[i + 1..].starts_with('|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' if FIELD_START.is_match(&s[i + 1..]) => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// Whether a spec sets `key=` (read without checking the rest, so before anything is on disk).
pub(crate) fn spec_has_key(spec: &str, key: &str) -> bool {
    split_fields(spec).iter().skip(1).any(|f| f.split_once('=').is_some_and(|(k, _)| k == key))
}

/// Whether the spec sets the environment variable `name` (an `env=NAME=…` field).
pub(crate) fn spec_sets_env(spec: &str, name: &str) -> bool {
    split_fields(spec).iter().skip(1).any(|f| {
        f.split_once('=').is_some_and(|(k, v)| k == "env" && v.split_once('=').is_some_and(|(n, _)| n == name))
    })
}

/// The executable a variant names: a binary, or an artifact folder holding `bin/llama-server`
/// or `llama-server`.
pub(crate) fn resolve_binary(path: &Path) -> (PathBuf, Option<PathBuf>) {
    if path.is_dir() {
        for rel in ["bin/llama-server", "llama-server"] {
            let p = path.join(rel);
            if p.is_file() {
                return (p, Some(path.to_path_buf()));
            }
        }
    }
    (path.to_path_buf(), None)
}

fn check_executable(label: &str, path: &Path) -> Result<(), VariantError> {
    let meta =
        std::fs::metadata(path).map_err(|_| VariantError::MissingBinary { label: label.into(), path: path.into() })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(VariantError::NotExecutable { label: label.into(), path: path.into() });
    }
    Ok(())
}

impl Variant {
    /// The `expect=` regex, compiled; `parse` refused any that does not compile.
    pub(crate) fn expect_regex(&self) -> Option<Regex> {
        self.expect.as_deref().map(|r| Regex::new(r).expect("parse checked expect="))
    }

    /// A variant that is its binary alone (no KV type, env, extra args, model or expect=), as
    /// `spec` wrote it.
    pub(crate) fn binary_only(label: &str, bin: &Path, spec: &str) -> Variant {
        let (binary, artifact) = resolve_binary(bin);
        Variant {
            label: label.into(),
            binary,
            artifact,
            kv: None,
            env: vec![],
            extra: vec![],
            model: None,
            expect: None,
            spec: spec.into(),
        }
    }

    pub fn parse(spec: &str) -> Result<Variant, VariantError> {
        if SPACED_BAR.is_match(spec) {
            let label = spec.split_once('=').map_or(spec, |(l, _)| l).trim().to_string();
            return Err(VariantError::SpacedBar { label, fixed: SPACED_BAR.replace_all(spec, "$1|$3=").into_owned() });
        }
        let fields = split_fields(spec);
        let (label, bin) = fields[0].split_once('=').ok_or_else(|| VariantError::NoEquals(spec.into()))?;
        let label = label.trim().to_string();
        if !LABEL.is_match(&label) {
            return Err(VariantError::BadLabel { spec: spec.into(), label });
        }
        let mut v = Variant::binary_only(&label, Path::new(bin.trim()), spec);
        let once = |slot_is_some: bool, key: &str| {
            if slot_is_some {
                Err(VariantError::Repeated { label: label.clone(), key: key.into() })
            } else {
                Ok(())
            }
        };
        for field in &fields[1..] {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| VariantError::BadField { label: label.clone(), field: field.clone() })?;
            match key {
                "kv" => {
                    once(v.kv.is_some(), key)?;
                    if !KV_TYPES.contains(&value) {
                        return Err(VariantError::BadKv { label, kv: value.into() });
                    }
                    v.kv = Some(value.into());
                }
                "env" => {
                    let (name, val) = value
                        .split_once('=')
                        .ok_or_else(|| VariantError::BadEnv { label: label.clone(), field: value.into() })?;
                    if !ENV_NAME.is_match(name) {
                        return Err(VariantError::BadEnvName { label, name: name.into() });
                    }
                    v.env.push((name.into(), val.into()));
                }
                "extra" => {
                    once(!v.extra.is_empty(), key)?;
                    v.extra = shlex::split(value)
                        .ok_or_else(|| VariantError::BadExtra { label: label.clone(), extra: value.into() })?;
                }
                "model" => {
                    once(v.model.is_some(), key)?;
                    let p = PathBuf::from(value);
                    if p.is_dir() {
                        return Err(VariantError::ModelIsFolder { label, path: p });
                    }
                    if !p.is_file() {
                        return Err(VariantError::MissingModel { label, path: p });
                    }
                    v.model = Some(p);
                }
                "expect" => {
                    once(v.expect.is_some(), key)?;
                    Regex::new(value).map_err(|e| VariantError::BadExpect {
                        label: label.clone(),
                        // The regex crate draws a caret diagram over several lines; keep one.
                        error: e
                            .to_string()
                            .lines()
                            .map(str::trim)
                            .filter(|l| !l.is_empty())
                            .collect::<Vec<_>>()
                            .join(" "),
                    })?;
                    v.expect = Some(value.into());
                }
                other => return Err(VariantError::UnknownKey { label, key: other.into() }),
            }
        }
        check_executable(&v.label, &v.binary)?;
        Ok(v)
    }

    /// The server arguments of this variant: model, the study's common args, then the variant's
    /// own (KV type, extra), so a variant's flag wins over a common one.
    pub(crate) fn server_args(&self, default_model: &Path, common: &[String]) -> Vec<String> {
        let model = self.model.as_deref().unwrap_or(default_model);
        let mut a = vec!["-m".to_string(), model.display().to_string()];
        a.extend(common.iter().cloned());
        if let Some(kv) = &self.kv {
            a.extend(["--cache-type-k".into(), kv.clone(), "--cache-type-v".into(), kv.clone()]);
        }
        a.extend(self.extra.iter().cloned());
        a
    }

    /// The llama-bench a variant names: its binary when that is a llama-bench, else the llama-bench
    /// built beside its llama-server; one line naming both places where there is none.
    pub(crate) fn llama_bench(&self) -> Result<PathBuf, String> {
        let named = self.binary.file_name().is_some_and(|n| n.to_string_lossy().starts_with("llama-bench"));
        if named {
            return Ok(self.binary.clone());
        }
        let beside = self.binary.with_file_name("llama-bench");
        if beside.is_file() {
            return Ok(beside);
        }
        Err(format!(
            "variant {}: a llama-bench study runs the llama-bench of the variant's build, and there is none at {}: build it beside llama-server (cmake --build build --target llama-bench), or give its path as the variant's binary",
            self.label,
            beside.display()
        ))
    }

    /// The model this variant runs.
    pub(crate) fn model_or<'a>(&'a self, default_model: &'a Path) -> &'a Path {
        self.model.as_deref().unwrap_or(default_model)
    }
}

/// Where the first `|key=` field of a spec begins (its byte offset), if it has one.
fn first_field(s: &str) -> Option<usize> {
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if s[i + 1..].starts_with('|') => {
                chars.next();
            }
            '|' if FIELD_START.is_match(&s[i + 1..]) => return Some(i),
            _ => {}
        }
    }
    None
}

/// A spec whose binary is filled in later (`abprof bisect` runs every build with the same
/// fields): `LABEL=` with nothing after the `=` but its fields, e.g. `build=|kv=q8_0`. Returns the
/// fields as written (`|kv=q8_0`, or empty), checked by parsing them with a stand-in binary.
pub(crate) fn template_fields(spec: &str) -> Result<String, VariantError> {
    let head_end = first_field(spec).unwrap_or(spec.len());
    let (label, bin) = spec[..head_end].split_once('=').ok_or_else(|| VariantError::NoEquals(spec.into()))?;
    if !bin.trim().is_empty() {
        return Err(VariantError::TemplateBinary { label: label.trim().into(), binary: bin.trim().into() });
    }
    let fields = spec[head_end..].to_string();
    // Any executable stands in for the binary: only the fields are being checked.
    Variant::parse(&format!("{}=/proc/self/exe{fields}", label.trim()))?;
    Ok(fields)
}

/// The spec of `label` running `binary` with `fields` (from [`template_fields`]).
pub(crate) fn spec_with_fields(label: &str, binary: &Path, fields: &str) -> String {
    format!("{label}={}{fields}", binary.display().to_string().replace('|', "\\|"))
}

/// The copy an A/A study (`abprof ab --aa`) runs against `spec`: the same spec labelled
/// `LABEL-again`; `None` when `spec` has no label.
pub(crate) fn aa_copy(spec: &str) -> Option<String> {
    spec.split_once('=').map(|(label, rest)| format!("{label}-again={rest}"))
}

/// Parses every spec; labels must be unique. The first is the baseline.
pub(crate) fn parse_variants<S: AsRef<str>>(specs: &[S]) -> Result<Vec<Variant>, VariantError> {
    if specs.is_empty() {
        return Err(VariantError::None);
    }
    let mut out: Vec<Variant> = Vec::new();
    for s in specs {
        let v = Variant::parse(s.as_ref())?;
        if out.iter().any(|o| o.label == v.label) {
            return Err(VariantError::DuplicateLabel(v.label));
        }
        out.push(v);
    }
    Ok(out)
}

/// Splits a `--server-args "..."` string the way a shell splits words (no shell runs it).
pub(crate) fn split_args(s: &str) -> Option<Vec<String>> {
    shlex::split(s)
}

/// The server's command line asks for speculation with a draft context of its own — a draft
/// model or `--spec-type draft-*` (`draft-mtp`, `draft-simple`) — as [`speculation_requested`]
/// says it; not the n-gram kinds, which draft on the CPU from the text (docs/methodology.md §10.2).
pub(crate) fn draft_context_requested(argv: &[String]) -> Option<String> {
    speculation_requested(argv).filter(|how| !how.starts_with("--spec-type") || how.starts_with("--spec-type draft"))
}

/// The server's command line asks for speculative decoding: a draft model (`-md`, `--model-draft`,
/// `--spec-draft-model`) or a `--spec-type` other than `none` (`draft-mtp`, the n-gram kinds).
pub(crate) fn speculation_requested(argv: &[String]) -> Option<String> {
    argv.windows(2).find_map(|w| match w[0].as_str() {
        "-md" | "--model-draft" | "--spec-draft-model" => Some(format!("{} {}", w[0], w[1])),
        "--spec-type" if w[1] != "none" => Some(format!("--spec-type {}", w[1])),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_context_is_asked_for_by_a_draft_model_or_a_draft_kind_not_by_n_grams() {
        let argv = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            draft_context_requested(&argv("-t 2 --spec-type draft-mtp")).as_deref(),
            Some("--spec-type draft-mtp")
        );
        assert_eq!(draft_context_requested(&argv("-md d.gguf")).as_deref(), Some("-md d.gguf"));
        assert!(draft_context_requested(&argv("--spec-type ngram-simple")).is_none());
        assert!(speculation_requested(&argv("--spec-type ngram-simple")).is_some(), "speculation all the same");
        assert!(draft_context_requested(&argv("--spec-type none -t 2")).is_none());
    }

    fn exe(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn parses_every_field() {
        let d = tempfile::tempdir().unwrap();
        let bin = exe(d.path(), "llama-server");
        let model = d.path().join("m.gguf");
        std::fs::write(&model, "").unwrap();
        let spec = format!(
            "q4={}|kv=q4_0|env=GGML_X=1|env=B=two=2|extra=-fa on --spec-draft-n-max '3'|model={}|expect=FlashHead|tables found",
            bin.display(),
            model.display()
        );
        let v = Variant::parse(&spec).unwrap();
        assert_eq!(v.label, "q4");
        assert_eq!(v.kv.as_deref(), Some("q4_0"));
        assert_eq!(v.env, vec![("GGML_X".into(), "1".into()), ("B".into(), "two=2".into())]);
        assert_eq!(v.extra, vec!["-fa", "on", "--spec-draft-n-max", "3"]);
        assert_eq!(v.expect.as_deref(), Some("FlashHead|tables found"));
        let args = v.server_args(Path::new("/default.gguf"), &["-c".into(), "4096".into()]);
        assert_eq!(args[..2], ["-m".to_string(), model.display().to_string()]);
        assert!(args.windows(2).any(|w| w == ["--cache-type-v", "q4_0"]));
        assert_eq!(args.last().unwrap(), "3");
    }

    #[test]
    fn a_template_spec_gives_its_fields_to_every_build() {
        assert_eq!(template_fields("build=").unwrap(), "");
        let fields = template_fields("build=|kv=q8_0|extra=-fa on|expect=a|b").unwrap();
        assert_eq!(fields, "|kv=q8_0|extra=-fa on|expect=a|b");
        let d = tempfile::tempdir().unwrap();
        let bin = exe(d.path(), "llama-server");
        let v = Variant::parse(&spec_with_fields("good", &bin, &fields)).unwrap();
        assert_eq!((v.label.as_str(), v.binary.as_path(), v.kv.as_deref()), ("good", bin.as_path(), Some("q8_0")));
        assert_eq!(v.expect.as_deref(), Some("a|b"));
        assert!(matches!(template_fields("build=/bin/true|kv=q8_0"), Err(VariantError::TemplateBinary { .. })));
        assert!(matches!(template_fields("build=|kv=q3_z"), Err(VariantError::BadKv { .. })));
    }

    #[test]
    fn artifact_folders_resolve_to_their_binary() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("bin")).unwrap();
        let bin = exe(&d.path().join("bin"), "llama-server");
        let v = Variant::parse(&format!("a={}", d.path().display())).unwrap();
        assert_eq!(v.binary, bin);
        assert_eq!(v.artifact.as_deref(), Some(d.path()));
    }

    #[test]
    fn bad_specs_each_name_their_problem() {
        let d = tempfile::tempdir().unwrap();
        let bin = exe(d.path(), "srv");
        let b = bin.display();
        type Judge = fn(&VariantError) -> bool;
        let cases: Vec<(String, Judge)> = vec![
            ("no-equals-here".into(), |e| matches!(e, VariantError::NoEquals(_))),
            (format!("a={b}|color=red"), |e| matches!(e, VariantError::UnknownKey { .. })),
            ("a=/no/such/llama-server".into(), |e| matches!(e, VariantError::MissingBinary { .. })),
            (format!("a={}", d.path().join("x").display()), |e| matches!(e, VariantError::MissingBinary { .. })),
            (format!("a={b}|env=1BAD=x"), |e| matches!(e, VariantError::BadEnvName { .. })),
            (format!("a={b}|env=NOVALUE"), |e| matches!(e, VariantError::BadEnv { .. })),
            (format!("a={b}|extra=-x 'unclosed"), |e| matches!(e, VariantError::BadExtra { .. })),
            (format!("a={b}|kv=q3_z"), |e| matches!(e, VariantError::BadKv { .. })),
            (format!("a={b}|expect=(unclosed"), |e| matches!(e, VariantError::BadExpect { .. })),
            (format!("a b={b}"), |e| matches!(e, VariantError::BadLabel { .. })),
        ];
        for (spec, is) in cases {
            let err = Variant::parse(&spec).unwrap_err();
            assert!(is(&err), "{spec}: {err}");
            assert!(!err.to_string().contains('\n'), "{spec}: {err}");
        }
        let not_exec = d.path().join("plain");
        std::fs::write(&not_exec, "").unwrap();
        assert!(matches!(
            Variant::parse(&format!("a={}", not_exec.display())).unwrap_err(),
            VariantError::NotExecutable { .. }
        ));
        let dup = parse_variants(&[format!("a={b}"), format!("a={b}|kv=q8_0")]).unwrap_err();
        assert_eq!(dup, VariantError::DuplicateLabel("a".into()));
        let e = Variant::parse(&format!("a={}|model={}", b, d.path().display())).unwrap_err();
        assert!(e.to_string().ends_with("is a directory: pass the GGUF file in it"), "{e}");
    }

    /// Spaces around a `|` make the field after it part of the value before (the binary's path,
    /// an extra= argument): refused with the spec as it should read.
    #[test]
    fn a_spaced_bar_is_refused_with_the_spec_written_right() {
        let e = Variant::parse("q8=/b/llama-server | kv=q8_0").unwrap_err();
        assert_eq!(e, VariantError::SpacedBar { label: "q8".into(), fixed: "q8=/b/llama-server|kv=q8_0".into() });
        assert!(e.to_string().contains(r#"as "q8=/b/llama-server|kv=q8_0""#), "{e}");
        let e = Variant::parse("a=/b/s|extra=-t 2 |model=m.gguf").unwrap_err();
        assert!(matches!(e, VariantError::SpacedBar { fixed, .. } if fixed == "a=/b/s|extra=-t 2|model=m.gguf"));
        // A regex alternation with spaces, and an escaped bar, are values.
        assert!(!SPACED_BAR.is_match("a=/b/s|expect=flash | head"));
        assert!(!SPACED_BAR.is_match(r"a=/b/s|expect=x\| kv=y"));
    }

    #[test]
    fn escaped_bar_is_literal() {
        assert_eq!(split_fields(r"a=b|expect=x\|kv=y"), vec!["a=b", "expect=x|kv=y"]);
        assert_eq!(split_fields("a=b|kv=f16|expect=a|b"), vec!["a=b", "kv=f16", "expect=a|b"]);
    }

    #[test]
    fn labels_are_one_safe_path_component() {
        let d = tempfile::tempdir().unwrap();
        let bin = exe(d.path(), "srv");
        let spec = |label: &str| format!("{label}={}", bin.display());
        for good in ["a", "f16", "q8_0", "B-2", "v1.2", "_x", "-x", &"a".repeat(64)] {
            assert_eq!(Variant::parse(&spec(good)).unwrap().label, good);
        }
        for bad in ["..", ".", ".hidden", "a/b", "../x", "a b", "é", &"a".repeat(65), ""] {
            let err = Variant::parse(&spec(bad)).unwrap_err();
            assert!(matches!(err, VariantError::BadLabel { .. }), "{bad:?}: {err}");
            let text = err.to_string();
            assert!(text.contains("not starting with '.'") && text.contains("64") && !text.contains('\n'), "{text}");
        }
    }
}
