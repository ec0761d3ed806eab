//! GPU (or, on GPU-less hosts, process CPU) telemetry: one `TelemetrySource` trait whose `read()`
//! returns a `Reading` of optional values, a backend per vendor interface, and a sampler thread
//! that reads a source on absolute deadlines and says how often each value really changes.
//!
//! Units are fixed per field (W, J, °C, MHz, bytes, %) whatever the backend, so the study and the
//! reports never convert. A field a backend cannot provide stays `None`: absent, never zero.
mod error;
mod one_smi;
mod reading;
mod source;
mod source_kind;

pub mod amd_smi;
pub mod amdgpu_sysfs;
pub(crate) mod csv;
pub(crate) mod foreign;
pub mod gpu_metrics;
pub(crate) mod idle;
pub(crate) mod monitor;
pub mod nvml;
pub(crate) mod phases;
pub mod power_field;
pub(crate) mod power_state;
pub(crate) mod proc_cpu;
pub(crate) mod record;
pub(crate) mod refresh;
pub mod rocm_smi;
pub mod sampler;
pub mod select;
mod sysfs_file;
pub(crate) mod task_cpu;
pub(crate) mod thermal;

pub use error::TelemetryError;
pub use reading::Field;
pub use reading::Reading;
pub use select::{open, OpenOptions};
pub use source::{DriverPowerSample, TelemetrySource};
pub use source_kind::SourceKind;
