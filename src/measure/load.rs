//! The measured work of a sample is pluggable: the lifecycle in `run.rs` is written once and
//! every workload (a streamed chat request, the Pi agent, a request under a tracer) is a `Load`.
use super::files::SampleFiles;
use super::record::Sample;
use crate::client::{Client, StreamRecord};
use crate::server::log::TimingBlock;

/// What a load's timed run produced.
#[derive(Debug, Default)]
pub(crate) struct LoadRun {
    /// What the client saw on the wire; `None` for a load that is not one streamed request.
    pub(crate) stream: Option<StreamRecord>,
    /// Why the run is incomplete, when it is (a broken stream, a load that could not start).
    pub(crate) error: Option<String>,
    /// Stopped because abprof was told to stop: the sample is discarded, not recorded.
    pub(crate) interrupted: bool,
}

#[allow(async_fn_in_trait)] // Used with static dispatch only; no Send bound is needed.
pub(crate) trait Load {
    /// Before the server starts: write what the load will send, so a failure keeps it.
    fn prepare(&mut self, files: &SampleFiles, base_url: &str) -> std::io::Result<()>;
    /// Right after the server's process started: its pid.
    fn server_started(&mut self, _pid: u32) {}
    /// After /health, before the idle gate: work that must not be timed.
    async fn warm_up(&mut self, _client: &Client) -> Result<(), String> {
        Ok(())
    }
    /// The timed work.
    async fn run(&mut self, client: &Client, files: &SampleFiles) -> LoadRun;
    /// After the timed work, before the server stops (an attached tracer detaches here).
    async fn before_stop(&mut self) {}
    /// Request timing blocks a clean run leaves in the server log.
    fn timing_blocks(&self) -> usize {
        1
    }
    /// The blocks the sample's server figures come from, combined when several
    /// ([`TimingBlock::combined`]): the last one by default (a warm-up's block before it is not
    /// timed).
    fn timed_blocks<'b>(&self, blocks: &'b [TimingBlock]) -> &'b [TimingBlock] {
        &blocks[blocks.len().saturating_sub(1)..]
    }
    /// The process ends by itself once its work is done (llama-bench), so its exit during the
    /// load is no failure.
    fn ends_itself(&self) -> bool {
        false
    }
    /// After the stop and the log parse: the load's own facts into the record.
    fn finish(&mut self, sample: &mut Sample, files: &SampleFiles);
}
