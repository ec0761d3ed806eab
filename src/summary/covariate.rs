//! Does a thermal covariate explain decode speed within a variant (docs/methodology.md §9.10)?
//! The samples' log decode TPS is regressed on the sample's start temperature (the thermal gate's
//! record) or, without one, its median decode gfx clock, with one intercept per variant and one
//! pooled slope. Where the slope is significant, the covariate-adjusted (CUPED-style) comparison
//! stands beside the plain one: each value moved along the slope to the study's mean covariate,
//! then the same interval as speed's (§8).
use super::stats::{change_ci, ChangeCi, Measured};
use super::t_test;
use serde::{Deserialize, Serialize};

/// The covariate's significance level: the slope must differ from 0 at this two-sided p.
pub(crate) const EXPLAINS_ALPHA: f64 = 0.05;

/// Which covariate the model used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Covariate {
    /// The temperature the sample started at (the thermal gate, §9.9), °C.
    StartTemperature,
    /// The sample's median gfx clock during decode, MHz.
    DecodeClock,
}

impl Covariate {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Covariate::StartTemperature => "start temperature (°C)",
            Covariate::DecodeClock => "median decode gfx clock (MHz)",
        }
    }
}

/// One accepted sample's decode TPS, its covariate and block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Observation {
    pub(crate) variant: usize,
    pub(crate) block: usize,
    pub(crate) tps: f64,
    pub(crate) x: f64,
}

/// The model's fit and, where it explains, each candidate's adjusted interval.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct CovariateFit {
    pub(crate) covariate: Covariate,
    /// The pooled within-variant slope, % decode TPS per unit of the covariate.
    pub(crate) slope_pct_per_unit: f64,
    /// The share of the within-variant variance of log decode TPS the covariate explains.
    pub(crate) r2_within: f64,
    /// Two-sided p of slope 0 (t with N − V − 1 degrees of freedom).
    pub(crate) p_value: f64,
    /// `p_value < 0.05`: the adjusted comparison is shown.
    pub(crate) explains: bool,
    /// Per candidate (label): the adjusted 95% interval of the decode TPS change, when explained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) adjusted: Vec<(String, ChangeCi)>,
}

/// Fits the model to `obs` (variant 0 the baseline); None with fewer than V + 2 usable
/// observations or no spread of the covariate within any variant.
pub(crate) fn fit(covariate: Covariate, obs: &[Observation], labels: &[String]) -> Option<CovariateFit> {
    let obs: Vec<Observation> =
        obs.iter().copied().filter(|o| o.tps > 0.0 && o.tps.is_finite() && o.x.is_finite()).collect();
    let groups = labels.len();
    if obs.len() < groups + 3 {
        return None;
    }
    let mean_of = |v: usize, f: fn(&Observation) -> f64| -> f64 {
        let xs: Vec<f64> = obs.iter().filter(|o| o.variant == v).map(f).collect();
        xs.iter().sum::<f64>() / xs.len().max(1) as f64
    };
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for o in &obs {
        let dx = o.x - mean_of(o.variant, |o| o.x);
        let dy = o.tps.ln() - mean_of(o.variant, |o| o.tps.ln());
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let residual = (syy - slope * sxy).max(0.0);
    let df = (obs.len() - groups - 1) as f64;
    let se = (residual / df / sxx).sqrt();
    let p_value = if se > 0.0 { t_test::two_sided_p(slope / se, df) } else { 0.0 };
    let explains = p_value < EXPLAINS_ALPHA;
    let x_mean = obs.iter().map(|o| o.x).sum::<f64>() / obs.len() as f64;
    let adjusted_side = |v: usize| -> Vec<Measured> {
        obs.iter()
            .filter(|o| o.variant == v)
            .map(|o| Measured { block: o.block, value: (o.tps.ln() - slope * (o.x - x_mean)).exp() })
            .collect()
    };
    let adjusted = if explains {
        (1..groups)
            .filter_map(|v| Some((labels[v].clone(), change_ci(&adjusted_side(0), &adjusted_side(v), 0.95, None)?)))
            .collect()
    } else {
        Vec::new()
    };
    Some(CovariateFit {
        covariate,
        slope_pct_per_unit: 100.0 * (slope.exp() - 1.0),
        r2_within: sxy * slope / syy,
        p_value,
        explains,
        adjusted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Vec<String> {
        vec!["a".into(), "b".into()]
    }

    /// Decode TPS that falls 1% per °C of start temperature, the start temperature alternating
    /// hot and cool across blocks, b 5% faster: the plain interval carries the thermal spread, the
    /// adjusted one does not.
    #[test]
    fn a_covariate_that_explains_the_spread_narrows_the_interval_around_the_same_change() {
        let mut obs = Vec::new();
        for block in 0..5 {
            for variant in 0..2 {
                let x = 45.0 + if (block + variant) % 2 == 0 { 0.0 } else { 15.0 } + block as f64 * 0.5;
                let base = if variant == 1 { 105.0 } else { 100.0 };
                let noise = 1.0 + 0.002 * ((block * 7 + variant * 3) % 5) as f64;
                obs.push(Observation { variant, block, tps: base * (-(0.01) * (x - 45.0)).exp() * noise, x });
            }
        }
        let f = fit(Covariate::StartTemperature, &obs, &labels()).unwrap();
        assert!(f.explains && f.p_value < 1e-6, "{f:?}");
        assert!((f.slope_pct_per_unit + 1.0).abs() < 0.1, "{f:?}");
        assert!(f.r2_within > 0.95, "{f:?}");
        let adjusted = f.adjusted[0].1;
        let side = |v: usize| -> Vec<Measured> {
            obs.iter().filter(|o| o.variant == v).map(|o| Measured { block: o.block, value: o.tps }).collect()
        };
        let plain = change_ci(&side(0), &side(1), 0.95, None).unwrap();
        assert!(adjusted.half_width_pct() < plain.half_width_pct() / 3.0, "{plain:?} {adjusted:?}");
        assert!((adjusted.center_pct() - 5.0).abs() < 0.5, "{adjusted:?}");
    }

    #[test]
    fn a_covariate_unrelated_to_speed_explains_nothing_and_adjusts_nothing() {
        let xs = [50.0, 52.0, 49.0, 51.0, 50.5, 48.5, 51.5, 49.5];
        let tps = [100.0, 99.0, 101.0, 100.5, 105.0, 106.0, 104.0, 105.5];
        let obs: Vec<Observation> =
            (0..8).map(|i| Observation { variant: i / 4, block: i % 4, tps: tps[i], x: xs[(i * 3) % 8] }).collect();
        let f = fit(Covariate::DecodeClock, &obs, &labels()).unwrap();
        assert!(!f.explains && f.adjusted.is_empty(), "{f:?}");
        assert!(fit(Covariate::DecodeClock, &obs[..4], &labels()).is_none(), "too few samples");
        let flat: Vec<Observation> = obs.iter().map(|o| Observation { x: 1800.0, ..*o }).collect();
        assert!(fit(Covariate::DecodeClock, &flat, &labels()).is_none(), "a covariate without spread");
    }
}
