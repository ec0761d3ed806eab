//! The server's memory as its log states it while loading: each `… buffer size = X MiB` line
//! (model weights per device, each context's KV cache, recurrent state, output and compute
//! buffers), attributed to the model or context it was printed for. The pinned build prints them
//! from libllama at verbosity 4 only (`-lv 4`; tests/fixtures/llama-server-mtp/README.md), so a log
//! at the default verbosity has none (docs/methodology.md §7.11 "memory").
use super::line::message;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// Which model or context a buffer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum MemoryRole {
    /// The target model and its context.
    Target,
    /// The MTP draft context created on the target model (`--spec-type draft-mtp`).
    Mtp,
    /// A separate draft model and its context (`-md`).
    Draft,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum BufferKind {
    Model,
    Kv,
    /// A recurrent model's state (`llama_memory_recurrent: … RS buffer`: the gated delta net's).
    Recurrent,
    Output,
    Compute,
}

/// One buffer: the last size the log printed for its role, kind and device (a context reserves
/// its compute buffer again when speculation is added, and the later size is the one kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MemoryBuffer {
    pub(crate) role: MemoryRole,
    pub(crate) kind: BufferKind,
    /// The buffer type as printed: `CPU_Mapped`, `CPU`, `CUDA0`, `CUDA_Host`, `ROCm0`…
    pub(crate) device: String,
    pub(crate) mib: f64,
}

impl MemoryBuffer {
    /// On the host rather than the accelerator: the CPU's buffers and the pinned host ones.
    pub(crate) fn on_host(&self) -> bool {
        self.device.starts_with("CPU") || self.device.ends_with("_Host")
    }
}

/// Every buffer a server's log sized, in the order first printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ServerMemory {
    pub(crate) buffers: Vec<MemoryBuffer>,
}

impl ServerMemory {
    /// MiB of the buffers of `role` (any when None) and `kind` (any when None); a fold from +0, as
    /// an empty `sum` of floats is -0 and would print as "-0.00".
    pub(crate) fn mib(&self, role: Option<MemoryRole>, kind: Option<BufferKind>) -> f64 {
        self.buffers
            .iter()
            .filter(|b| role.is_none_or(|r| b.role == r) && kind.is_none_or(|k| b.kind == k))
            .fold(0.0, |sum, b| sum + b.mib)
    }

    /// MiB on the accelerator (every buffer not on the host).
    pub(crate) fn device_mib(&self) -> f64 {
        self.buffers.iter().filter(|b| !b.on_host()).fold(0.0, |sum, b| sum + b.mib)
    }
}

// `load_tensors:   CPU_Mapped model buffer size =    98.54 MiB`, `llama_kv_cache:        CPU KV
// buffer size = …`, `sched_reserve:      CUDA0 compute buffer size = …`; older builds print
// `llm_load_tensors:        CPU buffer size = …` for the weights.
static BUFFER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\w+):\s+(\S+)\s+(?:(model|KV|RS|output|compute) )?buffer size\s*=\s*([0-9.]+) MiB").unwrap()
});

/// The buffers of a server log, or None when it printed none (the default verbosity).
pub(crate) fn server_memory(log: &str) -> Option<ServerMemory> {
    let mut role = MemoryRole::Target;
    let mut out = ServerMemory::default();
    for line in log.lines() {
        let Some(msg) = message(line) else { continue };
        if msg.contains("creating MTP draft context") {
            role = MemoryRole::Mtp;
            continue;
        }
        if msg.contains("loading draft model") {
            role = MemoryRole::Draft;
            continue;
        }
        let Some(c) = BUFFER.captures(&msg) else { continue };
        let kind = match c.get(3).map(|m| m.as_str()) {
            Some("model") => BufferKind::Model,
            Some("KV") => BufferKind::Kv,
            Some("RS") => BufferKind::Recurrent,
            Some("output") => BufferKind::Output,
            Some("compute") => BufferKind::Compute,
            _ if c[1].contains("load_tensors") => BufferKind::Model,
            _ => continue,
        };
        let Ok(mib) = c[4].parse::<f64>() else { continue };
        let device = c[2].to_string();
        match out.buffers.iter_mut().find(|b| b.role == role && b.kind == kind && b.device == device) {
            Some(b) => b.mib = mib,
            None => out.buffers.push(MemoryBuffer { role, kind, device, mib }),
        }
    }
    (!out.buffers.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! fixture {
        ($dir:literal, $name:literal) => {
            include_str!(concat!("../../../tests/fixtures/", $dir, "/", $name))
        };
    }

    fn mib(m: &ServerMemory, role: MemoryRole, kind: BufferKind) -> f64 {
        (m.mib(Some(role), Some(kind)) * 100.0).round() / 100.0
    }

    /// The qwen35moe twin at -lv 4 with draft-mtp: the trunk's and the MTP context's buffers apart,
    /// the MTP context's compute buffer the later of its two reservations.
    #[test]
    fn draft_mtp_memory_of_the_target_and_the_mtp_context() {
        let m = server_memory(fixture!("llama-server-mtp", "predictable-mtp-lv4-memory.log")).unwrap();
        use BufferKind::*;
        use MemoryRole::*;
        assert_eq!(mib(&m, Target, Model), 98.54);
        assert_eq!((mib(&m, Target, Kv), mib(&m, Target, Recurrent)), (2.0, 0.82));
        assert_eq!((mib(&m, Target, Output), mib(&m, Target, Compute)), (0.58, 9.05));
        assert_eq!((mib(&m, Mtp, Kv), mib(&m, Mtp, Output), mib(&m, Mtp, Compute)), (2.0, 0.58, 7.02));
        assert_eq!(mib(&m, Mtp, Model), 0.0, "the MTP block's weights load with the target's");
        assert_eq!(m.buffers.len(), 8, "{m:#?}");
        assert_eq!(m.device_mib(), 0.0, "a CPU build: everything on the host");
        // MTP off: the MTP block is skipped (4.14 MiB less of weights), one recurrent state
        // instead of the three a speculative rollback keeps, no MTP context.
        let plain = server_memory(fixture!("llama-server-mtp", "predictable-plain-lv4-memory.log")).unwrap();
        assert_eq!((mib(&plain, Target, Model), mib(&plain, Target, Recurrent)), (94.4, 0.21));
        assert_eq!(plain.mib(Some(Mtp), None), 0.0);
    }

    #[test]
    fn a_draft_model_has_its_own_role_and_default_verbosity_prints_none() {
        let m = server_memory(fixture!("llama-server", "draft-lv4-300x32.log")).unwrap();
        assert_eq!(mib(&m, MemoryRole::Target, BufferKind::Kv), 8.0);
        assert_eq!(mib(&m, MemoryRole::Draft, BufferKind::Kv), 2.0);
        assert_eq!(mib(&m, MemoryRole::Draft, BufferKind::Compute), 6.51);
        assert_eq!(server_memory(fixture!("llama-server-mtp", "predictable-mtp-300x32.log")), None);
        assert_eq!(server_memory(fixture!("llama-server", "target-300x32.log")), None);
    }

    #[test]
    fn device_buffers_are_told_from_host_ones() {
        let log = "0.00.100.000 I load_tensors:        CUDA0 model buffer size = 17000.50 MiB\n\
                   0.00.100.000 I load_tensors:   CPU_Mapped model buffer size =   500.00 MiB\n\
                   0.00.100.000 I llama_kv_cache:      CUDA0 KV buffer size =   400.00 MiB\n\
                   0.00.100.000 I sched_reserve:  CUDA_Host compute buffer size =    20.00 MiB\n\
                   0.00.100.000 I sched_reserve:      ROCm0 compute buffer size =   300.00 MiB\n\
                   llm_load_tensors:        CPU buffer size =   100.00 MiB\n";
        let m = server_memory(log).unwrap();
        assert_eq!(m.device_mib(), 17700.5);
        assert_eq!(m.mib(None, Some(BufferKind::Model)), 17600.5);
    }
}
