//! The `[sweep]` section of a study file and the `--sweep AXIS=V1,V2,…` flag: the axes, their
//! points, and the study file of each point (docs/methodology.md §16).
use super::error::StudyFileError;
use crate::variant::KV_TYPES;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The axes of a sweep, each a list of values; every point is one combination, in this order
/// (prompt tokens outermost, then tokens, kv, each environment variable by name, extra innermost).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    /// Calibrated prompt lengths (each point calibrates on the baseline, or reuses an earlier
    /// point's prompt of that length).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) prompt_tokens: Vec<u64>,
    /// Output tokens per request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tokens: Vec<u32>,
    /// KV cache types, given to every variant as `kv=`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) kv: Vec<String>,
    /// Environment variables, each an axis of its own (`[sweep.env] NAME = ["0", "1"]`), given to
    /// every variant as `env=NAME=VALUE`: llama.cpp's and the runtimes' switches
    /// (`GGML_CUDA_DISABLE_GRAPHS`, `ROCBLAS_USE_HIPBLASLT`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) env: BTreeMap<String, Vec<String>>,
    /// Server arguments added to every variant's (after `server_args`, before a variant's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) extra: Vec<String>,
}

/// One axis of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum AxisName {
    PromptTokens,
    Tokens,
    Kv,
    /// One environment variable, by name.
    Env(String),
    Extra,
}

impl AxisName {
    /// The axes whose name is their own (an env axis is named by its variable).
    const FIXED: [AxisName; 4] = [AxisName::PromptTokens, AxisName::Tokens, AxisName::Kv, AxisName::Extra];

    /// The axis as `--sweep` names it and as tables head its column: `kv`, `env.NAME`.
    pub(crate) fn key(&self) -> String {
        match self {
            AxisName::PromptTokens => "prompt-tokens".into(),
            AxisName::Tokens => "tokens".into(),
            AxisName::Kv => "kv".into(),
            AxisName::Env(name) => format!("env.{name}"),
            AxisName::Extra => "extra".into(),
        }
    }
}

/// One value of one axis, typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "axis", content = "value")]
pub(crate) enum AxisValue {
    PromptTokens(u64),
    Tokens(u32),
    Kv(String),
    Env { name: String, value: String },
    Extra(String),
}

impl AxisValue {
    pub(crate) fn axis(&self) -> AxisName {
        match self {
            AxisValue::PromptTokens(_) => AxisName::PromptTokens,
            AxisValue::Tokens(_) => AxisName::Tokens,
            AxisValue::Kv(_) => AxisName::Kv,
            AxisValue::Env { name, .. } => AxisName::Env(name.clone()),
            AxisValue::Extra(_) => AxisName::Extra,
        }
    }

    /// The value alone, as the flag wrote it.
    pub(crate) fn value(&self) -> String {
        match self {
            AxisValue::PromptTokens(n) => n.to_string(),
            AxisValue::Tokens(n) => n.to_string(),
            AxisValue::Kv(s) | AxisValue::Extra(s) | AxisValue::Env { value: s, .. } => s.clone(),
        }
    }

    fn parse(axis: &AxisName, v: &str) -> Result<AxisValue, String> {
        let number = |min: u64| -> Result<u64, String> {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n >= min)
                .ok_or_else(|| format!("sweep axis {}: {v:?} is not a whole number >= {min}", axis.key()))
        };
        Ok(match axis {
            AxisName::PromptTokens => AxisValue::PromptTokens(number(1)?),
            AxisName::Tokens => AxisValue::Tokens(
                u32::try_from(number(2)?).map_err(|_| format!("sweep axis tokens: {v:?} is too large"))?,
            ),
            AxisName::Kv => AxisValue::Kv(v.trim().to_string()),
            AxisName::Env(name) => AxisValue::Env { name: name.clone(), value: v.to_string() },
            AxisName::Extra => AxisValue::Extra(v.to_string()),
        })
    }

    /// Why this value cannot run, checked before anything is created.
    fn problem(&self) -> Option<String> {
        match self {
            AxisValue::PromptTokens(0) => Some("sweep prompt_tokens must be >= 1".into()),
            AxisValue::Tokens(n) if *n < 2 => {
                Some("sweep tokens must be >= 2 (decode TPS needs two output tokens)".into())
            }
            AxisValue::Kv(kv) if !KV_TYPES.contains(&kv.as_str()) => {
                Some(format!("sweep kv {kv:?} is not one of {}", KV_TYPES.join(", ")))
            }
            AxisValue::Extra(e) if crate::variant::split_args(e).is_none() => {
                Some(format!("sweep extra {e:?} cannot be split like a shell would (unbalanced quotes?)"))
            }
            AxisValue::Env { name, .. } if !crate::variant::is_env_name(name) => Some(format!(
                "sweep env axis {name:?} is not an environment variable's name (letters, digits, _; not a digit first)"
            )),
            AxisValue::Env { name, value } if value.contains('\0') || value.contains('|') => {
                Some(format!("sweep env {name}: {value:?} holds a '|' or a NUL, which a variant's env= cannot carry"))
            }
            _ => None,
        }
    }
}

impl fmt::Display for AxisValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.axis().key(), self.value())
    }
}

/// One `--sweep AXIS=V1,V2,…` flag: an axis and its values, checked when the flag is parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SweepAxis {
    pub(crate) values: Vec<AxisValue>,
}

impl FromStr for SweepAxis {
    type Err = String;

    fn from_str(s: &str) -> Result<SweepAxis, String> {
        let (name, list) =
            s.split_once('=').ok_or_else(|| format!("{s:?} is not AXIS=V1,V2,… (e.g. prompt-tokens=500,2000)"))?;
        let (axis, list) = if name.trim() == "env" {
            let (var, list) = list.split_once('=').ok_or_else(|| {
                format!("{s:?}: an env axis is env=NAME=V1,V2,… (e.g. env=GGML_CUDA_DISABLE_GRAPHS=0,1)")
            })?;
            (AxisName::Env(var.trim().to_string()), list)
        } else {
            let axis = AxisName::FIXED.into_iter().find(|a| a.key() == name.trim()).ok_or_else(|| {
                format!(
                    "unknown sweep axis {name:?}: use prompt-tokens, tokens, kv, env=NAME or extra (as AXIS=V1,V2,…)"
                )
            })?;
            (axis, list)
        };
        let values = list.split(',').map(|v| AxisValue::parse(&axis, v)).collect::<Result<Vec<_>, _>>()?;
        if let Some(p) = values.iter().find_map(AxisValue::problem) {
            return Err(p);
        }
        Ok(SweepAxis { values })
    }
}

/// One combination of axis values: one whole study in the sweep.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    pub(crate) index: usize,
    pub(crate) values: Vec<AxisValue>,
}

impl Point {
    /// `prompt-tokens=500,tokens=128`.
    pub(crate) fn name(&self) -> String {
        self.values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
    }

    /// The point's folder under `points/`: its number, then its name with anything that is not
    /// safe in a path component replaced by `_` (sweep.json keeps the exact values).
    pub(crate) fn dir_name(&self) -> String {
        let safe: String = self
            .name()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || "=,.+_-".contains(c) { c } else { '_' })
            .collect();
        format!("{:02}-{safe}", self.index + 1)
    }
}

impl SweepSection {
    /// The section the `--sweep` flags describe; an axis given twice is refused.
    pub(crate) fn from_axes(axes: &[SweepAxis]) -> Result<SweepSection, String> {
        let mut s = SweepSection::default();
        for axis in axes {
            let Some(first) = axis.values.first() else { continue };
            let name = first.axis();
            if !s.values(&name).is_empty() {
                let flag = match &name {
                    AxisName::Env(var) => format!("env={var}"),
                    other => other.key(),
                };
                return Err(format!("--sweep {flag}=… is given twice: put all its values in one flag"));
            }
            for v in &axis.values {
                match v {
                    AxisValue::PromptTokens(n) => s.prompt_tokens.push(*n),
                    AxisValue::Tokens(n) => s.tokens.push(*n),
                    AxisValue::Kv(k) => s.kv.push(k.clone()),
                    AxisValue::Env { name, value } => s.env.entry(name.clone()).or_default().push(value.clone()),
                    AxisValue::Extra(e) => s.extra.push(e.clone()),
                }
            }
        }
        Ok(s)
    }

    fn values(&self, axis: &AxisName) -> Vec<AxisValue> {
        match axis {
            AxisName::PromptTokens => self.prompt_tokens.iter().map(|n| AxisValue::PromptTokens(*n)).collect(),
            AxisName::Tokens => self.tokens.iter().map(|n| AxisValue::Tokens(*n)).collect(),
            AxisName::Kv => self.kv.iter().map(|k| AxisValue::Kv(k.clone())).collect(),
            AxisName::Env(name) => self.env.get(name).map_or_else(Vec::new, |values| {
                values.iter().map(|v| AxisValue::Env { name: name.clone(), value: v.clone() }).collect()
            }),
            AxisName::Extra => self.extra.iter().map(|e| AxisValue::Extra(e.clone())).collect(),
        }
    }

    /// The axes that have values, in point order: the environment variables (by name) before
    /// extra, which stays innermost.
    pub(crate) fn axes(&self) -> Vec<(AxisName, Vec<AxisValue>)> {
        let [prompt, tokens, kv, extra] = AxisName::FIXED;
        let env = self.env.keys().map(|name| AxisName::Env(name.clone()));
        [prompt, tokens, kv]
            .into_iter()
            .chain(env)
            .chain([extra])
            .map(|a| {
                let values = self.values(&a);
                (a, values)
            })
            .filter(|(_, v)| !v.is_empty())
            .collect()
    }

    /// Every combination, the first axis outermost.
    pub(crate) fn points(&self) -> Vec<Point> {
        let mut combos: Vec<Vec<AxisValue>> = vec![Vec::new()];
        for (_, values) in self.axes() {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(v.clone());
                        c
                    })
                })
                .collect();
        }
        combos.into_iter().enumerate().map(|(index, values)| Point { index, values }).collect()
    }

    /// The section is whole: every axis has values, each valid and listed once. Whether it agrees
    /// with the rest of the study file is [`super::StudyFile::check`]'s to say.
    pub(crate) fn check_axes(&self) -> Result<(), StudyFileError> {
        let bad = |m: String| Err(StudyFileError::Contradiction(m));
        if self.axes().is_empty() {
            return Err(StudyFileError::Missing(
                "at least one axis in [sweep] (prompt_tokens, tokens, kv, env, extra)",
            ));
        }
        for (axis, values) in self.axes() {
            if let Some(p) = values.iter().find_map(AxisValue::problem) {
                return bad(p);
            }
            if let Some(v) = values.iter().enumerate().find_map(|(i, v)| values[..i].contains(v).then_some(v)) {
                return bad(format!("sweep axis {} lists {:?} twice", axis.key(), v.value()));
            }
        }
        Ok(())
    }
}
