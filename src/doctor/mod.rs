//! `abprof doctor`: whether this host is ready to measure and what would add noise, each a
//! [`Finding`] with its fix (docs/methodology.md §21). It reads and probes; it changes nothing.
mod apu;
mod finding;
mod gpu_processes;
mod host_cpu;
mod last_aa;
mod room;
mod server_binary;
mod telemetry;

pub(crate) use finding::{Finding, Status};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

use crate::history::HistoryLocation;
use crate::telemetry::OpenOptions;

/// The whole checkup of one host.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Checkup {
    pub(crate) host: String,
    /// No finding warns.
    pub(crate) ready: bool,
    pub(crate) findings: Vec<Finding>,
    /// The text shows each finding's detail (`--verbose`); the JSON always carries it.
    #[serde(skip)]
    pub(crate) verbose: bool,
}

/// The exit status of a checkup with a warning: as `ab --fail-on` exits 3 when its check said
/// no, doctor exits 3 when a finding says measurements would be noisy (1 stays "an error").
pub(crate) const EXIT_NOT_READY: i32 = 3;

impl Checkup {
    pub(crate) fn of(host: String, findings: Vec<Finding>) -> Checkup {
        let ready = findings.iter().all(|f| f.status != Status::Warn);
        Checkup { host, ready, findings, verbose: false }
    }

    pub(crate) fn exit_code(&self) -> i32 {
        if self.ready {
            0
        } else {
            EXIT_NOT_READY
        }
    }
}

/// What `abprof doctor` was asked to look at.
pub(crate) struct DoctorPlan {
    pub(crate) telemetry: OpenOptions,
    /// What stands for `/sys` (fixture trees).
    pub(crate) sysfs: PathBuf,
    /// The llama-server binary (or artifact folder) a study would run.
    pub(crate) server: Option<PathBuf>,
    /// Where a study's evidence would go.
    pub(crate) root: PathBuf,
    /// A fixed port a study would use; `None`: the OS picks one.
    pub(crate) port: Option<u16>,
    /// The results history to read the last A/A study from; `None`: not read.
    pub(crate) history: Option<HistoryLocation>,
    /// How long the CPU load is measured.
    pub(crate) cpu_window: Duration,
    /// The model a study would load: on an APU, checked against what the GPU may map.
    pub(crate) model: Option<PathBuf>,
}

/// Every finding about this host, in a fixed order.
pub(crate) fn examine(plan: &DoctorPlan) -> Checkup {
    let host = nix::unistd::gethostname().map(|h| h.to_string_lossy().to_string()).unwrap_or_default();
    let sys = plan.sysfs.as_path();
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let findings = vec![
        telemetry::finding(&plan.telemetry),
        host_cpu::power_state(&crate::telemetry::power_state::PowerState::of_host()),
        host_cpu::governor(sys),
        host_cpu::boost(sys),
        gpu_processes::finding(sys, &crate::telemetry::power_state::run_probe, std::process::id()),
        host_cpu::load_now(plan.cpu_window, host_cpu::foreign_cpu_max_pct()),
        room::port(plan.port),
        room::disk(&plan.root),
        server_binary::finding(plan.server.as_deref()),
        apu::memory(sys, &cmdline, plan.model.as_deref()),
        apu::platform_profile(sys),
        apu::iommu(sys, &cmdline),
        last_aa::finding(plan.history.as_ref(), &host),
    ];
    Checkup::of(host, findings)
}
