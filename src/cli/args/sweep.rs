//! `--sweep AXIS=V1,V2,…` (repeatable): a sweep of whole studies, one per combination
//! (docs/methodology.md §16).
use crate::study::file::{SweepAxis, SweepSection};
use clap::Args;

/// Sweep: the axes of `abprof ab --sweep`.
#[derive(Args, Debug, Clone)]
pub(crate) struct SweepArgs {
    /// A sweep axis and its values: prompt-tokens=N,…, tokens=N,…, kv=TYPE,…, env=NAME=V,… (an
    /// environment variable given to every variant; one flag per variable, crossed) or extra=ARGS,…
    /// (server arguments added to every variant; "" for none). Repeat for more axes: every
    /// combination is one whole interleaved study of every variant, in DIR/points/.
    #[arg(long = "sweep", value_name = "AXIS=V1,V2", value_parser = clap::value_parser!(SweepAxis))]
    pub(crate) axes: Vec<SweepAxis>,
}

impl SweepArgs {
    /// The `[sweep]` section the flags describe (None without --sweep).
    pub(crate) fn section(&self) -> anyhow::Result<Option<SweepSection>> {
        if self.axes.is_empty() {
            return Ok(None);
        }
        SweepSection::from_axes(&self.axes).map(Some).map_err(anyhow::Error::msg)
    }
}
