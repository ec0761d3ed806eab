//! Measured bandwidth, remembered per host and device for a day under the abprof cache, so a
//! study does not pay for the measurement each time.
use super::target::Target;
use super::types::Bandwidth;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// How long a measurement stands for its device.
pub(crate) const MAX_AGE_S: i64 = 24 * 3600;

/// The cache file of one host, target and device.
pub(crate) struct Key {
    path: PathBuf,
}

impl Key {
    pub(crate) fn new(target: &Target, device: &str) -> Key {
        let host = nix::unistd::gethostname().map(|h| h.to_string_lossy().to_string()).unwrap_or_default();
        let target_json = serde_json::to_string(target).expect("a target serializes");
        let digest = hex::encode(Sha256::digest(format!("{host}\0{target_json}\0{device}")));
        let safe_host: String =
            host.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        Key {
            path: crate::cache_dir::cache_dir().join("bandwidth").join(format!(
                "{safe_host}-{}-{}.json",
                target.kind_name(),
                &digest[..16]
            )),
        }
    }
}

/// The remembered measurement, when it is younger than a day.
pub(crate) fn load(key: &Key) -> Option<Bandwidth> {
    let b: Bandwidth = serde_json::from_str(&std::fs::read_to_string(&key.path).ok()?).ok()?;
    let age = chrono::Local::now().timestamp() - b.measured_unix;
    ((0..MAX_AGE_S).contains(&age)).then_some(Bandwidth { cached: true, ..b })
}

/// Remembers a measurement; a cache that cannot be written only costs the next run a measurement.
pub(crate) fn store(key: &Key, b: &Bandwidth) {
    if let Some(dir) = key.path.parent() {
        if std::fs::create_dir_all(dir).is_ok() {
            let json = serde_json::to_string_pretty(b).expect("a measurement serializes");
            let _ = crate::atomic_file::write_atomic(&key.path, json.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(unix: i64) -> Bandwidth {
        Bandwidth {
            target: Target::Cpu { threads: 2 },
            gb_per_s: 10.0,
            median_gb_per_s: 9.5,
            passes: 8,
            buffer_bytes: 1 << 29,
            method: "m".into(),
            device: "d".into(),
            host: "h".into(),
            measured_at: "t".into(),
            measured_unix: unix,
            cached: false,
        }
    }

    #[test]
    fn a_measurement_is_reused_for_a_day_and_only_for_its_device() {
        let d = tempfile::tempdir().unwrap();
        let key = Key { path: d.path().join("bandwidth/k.json") };
        assert!(load(&key).is_none());
        let now = chrono::Local::now().timestamp();
        store(&key, &sample(now - 3600));
        let b = load(&key).unwrap();
        assert!(b.cached && b.gb_per_s == 10.0);
        store(&key, &sample(now - MAX_AGE_S - 1));
        assert!(load(&key).is_none(), "older than a day");
        let (a, b) = (Key::new(&Target::Cpu { threads: 2 }, "x"), Key::new(&Target::Cpu { threads: 4 }, "x"));
        assert_ne!(a.path, b.path);
        assert_ne!(a.path, Key::new(&Target::Cpu { threads: 2 }, "y").path);
    }
}
