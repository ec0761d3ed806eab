//! The trait every trace reader implements, and the dispatch records it streams. Readers sit
//! below [`super::detect`] (which only picks one) and the analysis above it
//! ([`super::window`], [`super::overlap`]).
use std::collections::HashMap;

use super::kernels::{Aggregate, Totals};
use super::phase::PhaseWindows;
use super::TraceError;

/// Which kernel a dispatch ran, as the trace names it: an id into the trace's name table, and
/// which table (a rocpd database merged from several processes has one per writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct KernelKey {
    pub(crate) set: u32,
    pub(crate) id: i64,
}

impl super::exclusive_sweep::SweepKey for KernelKey {
    #[inline]
    fn small(&self) -> Option<usize> {
        if self.set == 0 {
            self.id.small()
        } else {
            None
        }
    }
}

/// One kernel dispatch: GPU start and end (ns, the trace's clock) and its kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dispatch {
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) key: KernelKey,
    /// The in-order stream it ran on (device and stream folded into one number), 0 when the
    /// trace does not say; see [`super::overlap`] for why it matters.
    pub(crate) lane: i64,
}

/// A kernel trace file, opened. Readers stream their rows; none holds all dispatches in memory
/// except where noted.
pub(crate) trait KernelSource: Send + Sync {
    /// One line naming the format and its version, for the report.
    fn describe(&self) -> String;

    /// Per-kernel totals; with `windows`, each dispatch goes to the phase its start falls in,
    /// without, every dispatch counts as decode.
    fn aggregate(&self, windows: Option<&PhaseWindows>) -> Result<Aggregate, TraceError>;

    /// First start and last end of the kernels launched from CUDA/HIP graphs, if the trace
    /// records graph node ids and any are set.
    fn graph_span(&self) -> Result<Option<(i64, i64)>, TraceError>;

    /// Calls `f` for every dispatch in start order.
    fn for_each_by_start(&self, f: &mut dyn FnMut(Dispatch)) -> Result<(), TraceError>;

    /// The kernel names of keys that [`KernelSource::for_each_by_start`] gave.
    fn key_names(&self, keys: &[KernelKey]) -> Result<HashMap<KernelKey, String>, TraceError>;

    /// Per-kernel totals as [`KernelSource::aggregate`] gives them and, where the reader can
    /// sweep while it scans (its rows in start order), the busy time and exclusive time by key of
    /// the dispatches starting in `busy` `[lo, hi]` ([`super::sweep`]): one pass instead of two.
    /// `None` for the sweep otherwise, and the caller sweeps [`KernelSource::for_each_by_start`].
    /// Kernel calls and time per lane ([`Dispatch::lane`]) of the dispatches starting in `span`
    /// `[lo, hi]` (all when `None`), lanes ascending; empty where the reader cannot tell lanes
    /// apart.
    fn lane_totals(&self, span: Option<(i64, i64)>) -> Result<Vec<(i64, Totals)>, TraceError> {
        let _ = span;
        Ok(Vec::new())
    }

    /// [`KernelSource::aggregate`] of the dispatches on `lanes` only (empty where
    /// [`KernelSource::lane_totals`] is).
    fn aggregate_on_lanes(&self, windows: Option<&PhaseWindows>, lanes: &[i64]) -> Result<Aggregate, TraceError> {
        let _ = (windows, lanes);
        Ok(Aggregate::default())
    }

    fn aggregate_and_sweep(
        &self,
        windows: Option<&PhaseWindows>,
        busy: (i64, i64),
    ) -> Result<(Aggregate, Option<Swept>), TraceError> {
        let _ = busy;
        Ok((self.aggregate(windows)?, None))
    }
}

/// Busy ns and exclusive ns by key, as [`super::exclusive_sweep::ExclusiveSweep::finish`] gives them.
pub(crate) type Swept = (u64, HashMap<KernelKey, f64>);
