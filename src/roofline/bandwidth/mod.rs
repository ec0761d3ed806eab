//! The memory bandwidth a decode step's bytes are divided by (docs/methodology.md §18): a
//! streaming read on the host, or a device-to-device copy through the CUDA or HIP runtime (each
//! opened at run time, like the telemetry libraries), remembered per host and device for a day.
pub(crate) mod cache;
pub(crate) mod copy;
pub(crate) mod cpu;
pub(crate) mod cuda;
pub(crate) mod hip;
mod measure;
mod runtime;
pub(crate) mod target;
mod types;

pub(crate) use measure::{bandwidth, probe_gpu};
pub(crate) use target::Target;
pub(crate) use types::{human_bytes, Bandwidth};
