//! The `[sweep]` section of a study file and the `--sweep AXIS=V1,V2,…` flag: the axes, their
//! points, and the study file of each point (docs/methodology.md §16).
use crate::study::file::{StudyFile, StudyFileError};
use crate::variant::{spec_has_key, KV_TYPES};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The axes of a sweep, each a list of values; every point is one combination, in this order
/// (prompt tokens outermost, extra innermost).
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
    /// Server arguments added to every variant's (after `server_args`, before a variant's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) extra: Vec<String>,
}

/// One axis of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum AxisName {
    PromptTokens,
    Tokens,
    Kv,
    Extra,
}

impl AxisName {
    const ALL: [AxisName; 4] = [AxisName::PromptTokens, AxisName::Tokens, AxisName::Kv, AxisName::Extra];

    pub(crate) fn key(self) -> &'static str {
        match self {
            AxisName::PromptTokens => "prompt-tokens",
            AxisName::Tokens => "tokens",
            AxisName::Kv => "kv",
            AxisName::Extra => "extra",
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
    Extra(String),
}

impl AxisValue {
    pub(crate) fn axis(&self) -> AxisName {
        match self {
            AxisValue::PromptTokens(_) => AxisName::PromptTokens,
            AxisValue::Tokens(_) => AxisName::Tokens,
            AxisValue::Kv(_) => AxisName::Kv,
            AxisValue::Extra(_) => AxisName::Extra,
        }
    }

    /// The value alone, as the flag wrote it.
    pub(crate) fn value(&self) -> String {
        match self {
            AxisValue::PromptTokens(n) => n.to_string(),
            AxisValue::Tokens(n) => n.to_string(),
            AxisValue::Kv(s) | AxisValue::Extra(s) => s.clone(),
        }
    }

    fn parse(axis: AxisName, v: &str) -> Result<AxisValue, String> {
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
        let axis = AxisName::ALL.into_iter().find(|a| a.key() == name.trim()).ok_or_else(|| {
            format!("unknown sweep axis {name:?}: use prompt-tokens, tokens, kv or extra (as AXIS=V1,V2,…)")
        })?;
        let values = list.split(',').map(|v| AxisValue::parse(axis, v)).collect::<Result<Vec<_>, _>>()?;
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

    /// The study this point runs: the sweep's study with this point's values, and no sweep.
    pub(crate) fn study_file(&self, sweep: &StudyFile) -> StudyFile {
        let mut f = StudyFile { sweep: None, ..sweep.clone() };
        for v in &self.values {
            match v {
                AxisValue::PromptTokens(n) => {
                    f.prompt = None;
                    f.prompt_tokens = Some(*n);
                }
                AxisValue::Tokens(n) => {
                    f.tokens = *n;
                    f.workload = None;
                }
                AxisValue::Kv(kv) => f.variants = f.variants.iter().map(|s| format!("{s}|kv={kv}")).collect(),
                AxisValue::Extra(e) if e.trim().is_empty() => {}
                AxisValue::Extra(e) if f.server_args.trim().is_empty() => f.server_args = e.clone(),
                AxisValue::Extra(e) => f.server_args = format!("{} {e}", f.server_args),
            }
        }
        f.name = Some(match &sweep.name {
            Some(n) => format!("{n} · {}", self.name()),
            None => self.name(),
        });
        f
    }
}

impl SweepSection {
    /// The section the `--sweep` flags describe; an axis given twice is refused.
    pub(crate) fn from_axes(axes: &[SweepAxis]) -> Result<SweepSection, String> {
        let mut s = SweepSection::default();
        for axis in axes {
            let Some(first) = axis.values.first() else { continue };
            let name = first.axis();
            if !s.values(name).is_empty() {
                return Err(format!("--sweep {}=… is given twice: put all its values in one flag", name.key()));
            }
            for v in &axis.values {
                match v {
                    AxisValue::PromptTokens(n) => s.prompt_tokens.push(*n),
                    AxisValue::Tokens(n) => s.tokens.push(*n),
                    AxisValue::Kv(k) => s.kv.push(k.clone()),
                    AxisValue::Extra(e) => s.extra.push(e.clone()),
                }
            }
        }
        Ok(s)
    }

    fn values(&self, axis: AxisName) -> Vec<AxisValue> {
        match axis {
            AxisName::PromptTokens => self.prompt_tokens.iter().map(|n| AxisValue::PromptTokens(*n)).collect(),
            AxisName::Tokens => self.tokens.iter().map(|n| AxisValue::Tokens(*n)).collect(),
            AxisName::Kv => self.kv.iter().map(|k| AxisValue::Kv(k.clone())).collect(),
            AxisName::Extra => self.extra.iter().map(|e| AxisValue::Extra(e.clone())).collect(),
        }
    }

    /// The axes that have values, in point order.
    pub(crate) fn axes(&self) -> Vec<(AxisName, Vec<AxisValue>)> {
        AxisName::ALL.into_iter().map(|a| (a, self.values(a))).filter(|(_, v)| !v.is_empty()).collect()
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

    /// The section is whole and agrees with the rest of the study file.
    pub(crate) fn check(&self, file: &StudyFile) -> Result<(), StudyFileError> {
        let bad = |m: String| Err(StudyFileError::Contradiction(m));
        if self.axes().is_empty() {
            return Err(StudyFileError::Missing("at least one axis in [sweep] (prompt_tokens, tokens, kv, extra)"));
        }
        for (axis, values) in self.axes() {
            if let Some(p) = values.iter().find_map(AxisValue::problem) {
                return bad(p);
            }
            if let Some(v) = values.iter().enumerate().find_map(|(i, v)| values[..i].contains(v).then_some(v)) {
                return bad(format!("sweep axis {} lists {:?} twice", axis.key(), v.value()));
            }
        }
        if file.pi.is_some() || file.trace.is_some() {
            return bad("a sweep runs A/B studies: a Pi or trace study cannot be swept".into());
        }
        if !self.tokens.is_empty() && (file.tokens != 0 || file.workload.is_some()) {
            return bad("tokens are swept in [sweep]: drop the top-level tokens and workload".into());
        }
        if !self.prompt_tokens.is_empty() && (file.prompt.is_some() || file.prompt_tokens.is_some()) {
            return bad("prompt_tokens are swept in [sweep]: drop the top-level prompt and prompt_tokens".into());
        }
        if !self.kv.is_empty() {
            if let Some(spec) = file.variants.iter().find(|s| spec_has_key(s, "kv")) {
                return bad(format!(
                    "the kv axis gives every variant its KV type, but variant {spec:?} sets kv= itself: drop one"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> StudyFile {
        toml::from_str(
            "model='/m.gguf'\nserver_args='-c 4096'\nsamples=2\nvariants=['f16=/b|kv=f16','q8_0=/b|kv=q8_0']\n[sweep]\nprompt_tokens=[500,2000]\ntokens=[8,16]\n",
        )
        .unwrap()
    }

    #[test]
    fn points_are_every_combination_first_axis_outermost() {
        let f = base();
        f.check().unwrap();
        let points = f.sweep.as_ref().unwrap().points();
        let names: Vec<String> = points.iter().map(Point::name).collect();
        assert_eq!(
            names,
            [
                "prompt-tokens=500,tokens=8",
                "prompt-tokens=500,tokens=16",
                "prompt-tokens=2000,tokens=8",
                "prompt-tokens=2000,tokens=16"
            ]
        );
        assert_eq!(points[3].dir_name(), "04-prompt-tokens=2000,tokens=16");
        let p = points[2].study_file(&f);
        p.check().unwrap();
        assert_eq!((p.prompt_tokens, p.tokens, p.sweep.is_none()), (Some(2000), 8, true));
        assert_eq!(p.name.as_deref(), Some("prompt-tokens=2000,tokens=8"));
        // The point's study file stands alone: it round-trips and re-runs without the sweep.
        let again: StudyFile = toml::from_str(&p.to_toml()).unwrap();
        assert_eq!(again, p);
        let whole: StudyFile = toml::from_str(&f.to_toml()).unwrap();
        assert_eq!(whole, f, "the sweep's own file round-trips, its tokens absent");
        assert!(!f.to_toml().contains("\ntokens = 0"));
    }

    #[test]
    fn kv_and_extra_reach_every_variant() {
        let mut f = base();
        f.sweep = Some(SweepSection::from_axes(&["extra=,-fa on".parse().unwrap()]).unwrap());
        f.prompt_tokens = Some(300);
        f.tokens = 8;
        let points = f.sweep.as_ref().unwrap().points();
        assert_eq!(points[0].study_file(&f).server_args, "-c 4096");
        assert_eq!(points[1].study_file(&f).server_args, "-c 4096 -fa on");
        assert_eq!(points[1].dir_name(), "02-extra=-fa_on");
        f.sweep = Some(SweepSection::from_axes(&["kv=q8_0,q4_0".parse().unwrap()]).unwrap());
        let e = f.check().unwrap_err().to_string();
        assert!(e.contains("sets kv= itself"), "{e}");
        f.variants = vec!["a=/b".into(), "b=/c|extra=-t 1".into()];
        f.check().unwrap();
        let p = f.sweep.as_ref().unwrap().points()[1].study_file(&f);
        assert_eq!(p.variants, ["a=/b|kv=q4_0", "b=/c|extra=-t 1|kv=q4_0"]);
    }

    #[test]
    fn bad_axes_and_contradictions_are_named() {
        let err = |s: &str| s.parse::<SweepAxis>().unwrap_err();
        assert!(err("depth=1,2").contains("unknown sweep axis \"depth\""));
        assert!(err("tokens=1").contains("whole number >= 2"));
        assert!(err("kv=f17").contains("not one of"));
        assert!(err("prompt-tokens").contains("AXIS=V1,V2"));
        let twice = ["tokens=8".parse().unwrap(), "tokens=16".parse().unwrap()];
        assert!(SweepSection::from_axes(&twice).unwrap_err().contains("given twice"));
        let mut f = base();
        f.tokens = 128;
        assert!(f.check().unwrap_err().to_string().contains("drop the top-level tokens"));
        let mut f = base();
        f.prompt_tokens = Some(300);
        assert!(f.check().unwrap_err().to_string().contains("drop the top-level prompt"));
        let mut f = base();
        f.sweep.as_mut().unwrap().tokens = vec![8, 8];
        assert!(f.check().unwrap_err().to_string().contains("lists \"8\" twice"));
        assert!(toml::from_str::<StudyFile>(
            "model='m'\nsamples=1\nvariants=['a=b']\nprompt_tokens=5\n[sweep]\ntokens=[8]\ndepth=[1]"
        )
        .is_err());
    }
}
