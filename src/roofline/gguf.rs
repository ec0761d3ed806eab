//! A model's GGUF header — tensor names, ggml types, shapes, byte sizes, and the architecture's
//! integer metadata — read through gguf-rs-lib without reading a byte of the weights.
use gguf_rs_lib::format::metadata::MetadataValue;
use gguf_rs_lib::format::types::GGUFTensorType;
use gguf_rs_lib::reader::file_reader::{GGUFFileReader, GGUFReaderConfig};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum ModelError {
    #[error("cannot open model {path}: {source}")]
    Open { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a GGUF file abprof can read: {detail}")]
    Parse { path: PathBuf, detail: String },
    #[error("{path}: metadata key {key} is missing or not an integer: is it a llama.cpp GGUF model?")]
    MissingKey { path: PathBuf, key: String },
    #[error("{path}: {detail}")]
    Shape { path: PathBuf, detail: String },
    #[error("KV cache type {0:?} is not a ggml type llama-server accepts: pass one of {list}", list = crate::variant::KV_TYPES.join(", "))]
    UnknownKvType(String),
    #[error("model {path} is not a GGUF file: {found}, where a GGUF model begins \"GGUF\": pass a .gguf model")]
    NotGguf { path: PathBuf, found: String },
    #[error("model {path} is {bytes} bytes, too short for a GGUF header: pass a whole .gguf model")]
    Short { path: PathBuf, bytes: usize },
    #[error("model {path} is GGUF version {version}, which llama.cpp does not read (it reads versions 2 and 3): convert it again with a current llama.cpp")]
    Version { path: PathBuf, version: u32 },
}

/// The newest GGUF version llama.cpp reads (ggml/include/gguf.h `GGUF_VERSION`).
const GGUF_VERSION: u32 = 3;

/// Whether `path` starts as a model llama.cpp loads: the magic `GGUF`, then a little-endian
/// version from 2 to 3 (ggml/src/gguf.cpp refuses other magics, version 1 and versions above its
/// own). Eight bytes read: a model whose later bytes are corrupt fails at its first load, with
/// llama.cpp's own line.
pub(crate) fn check_magic(path: &Path) -> Result<(), ModelError> {
    use std::io::Read;
    let mut head = Vec::with_capacity(8);
    std::fs::File::open(path)
        .and_then(|f| f.take(8).read_to_end(&mut head))
        .map_err(|source| ModelError::Open { path: path.into(), source })?;
    if head.len() < 4 || &head[..4] != b"GGUF" {
        let found = match head.len() {
            0 => "it is empty".to_string(),
            n => format!("it begins {:?}", String::from_utf8_lossy(&head[..n.min(4)])),
        };
        return Err(ModelError::NotGguf { path: path.into(), found });
    }
    let Some(version) = head.get(4..8).map(|v| u32::from_le_bytes(v.try_into().expect("four bytes"))) else {
        return Err(ModelError::Short { path: path.into(), bytes: head.len() });
    };
    if !(2..=GGUF_VERSION).contains(&version) {
        return Err(ModelError::Version { path: path.into(), version });
    }
    Ok(())
}

/// A ggml tensor type with the block geometry of ggml's type table (elements per block, bytes
/// per block), as gguf-rs-lib carries it. Written by its ggml name (`q8_0`), as llama-server's
/// `--cache-type-k` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub(crate) struct GgmlType(GGUFTensorType);

impl GgmlType {
    /// ggml's own lower-case name.
    pub(crate) fn name(self) -> String {
        self.0.name().to_ascii_lowercase()
    }

    /// The type a KV cache flag names (`f16`, `q8_0`, …).
    pub(crate) fn from_name(name: &str) -> Result<GgmlType, ModelError> {
        (0..64u32)
            .filter_map(|id| GGUFTensorType::from_u32(id).ok())
            .find(|t| t.name().eq_ignore_ascii_case(name))
            .filter(|t| t.block_size_bytes().is_some())
            .map(GgmlType)
            .ok_or_else(|| ModelError::UnknownKvType(name.into()))
    }

    /// (elements per block, bytes per block); scalar types are blocks of one element.
    pub(crate) fn block(self) -> Option<(u64, u64)> {
        let bytes = self.0.block_size_bytes()? as u64;
        let elements = self.0.block_size() as u64;
        (elements > 0).then_some((elements, bytes))
    }

    /// Bytes of `n` consecutive elements of one row; none when `n` is not whole blocks.
    pub(crate) fn row_bytes(self, n: u64) -> Option<u64> {
        let (elements, bytes) = self.block()?;
        n.is_multiple_of(elements).then(|| n / elements * bytes)
    }
}

impl From<GgmlType> for String {
    fn from(t: GgmlType) -> String {
        t.name()
    }
}

impl TryFrom<String> for GgmlType {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        GgmlType::from_name(&s).map_err(|e| e.to_string())
    }
}

/// One tensor as the header describes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tensor {
    pub(crate) name: String,
    pub(crate) ggml_type: GgmlType,
    /// ggml's `ne` order: `dims[0]` is the row length.
    pub(crate) dims: Vec<u64>,
    /// Bytes of its data in the file.
    pub(crate) n_bytes: u64,
}

/// What the roofline needs of a GGUF header. Metadata is kept only for integer keys of the
/// model's architecture (`<arch>.block_count`, `<arch>.attention.head_count_kv`, …), a scalar
/// as one value and a per-layer array as its values; the vocabulary is read past and dropped.
#[derive(Debug, Clone)]
pub(crate) struct GgufHeader {
    pub(crate) path: PathBuf,
    pub(crate) arch: String,
    pub(crate) tensors: Vec<Tensor>,
    ints: BTreeMap<String, Vec<u64>>,
}

fn as_u64(v: &MetadataValue) -> Option<u64> {
    match v {
        MetadataValue::U8(x) => Some(u64::from(*x)),
        MetadataValue::U16(x) => Some(u64::from(*x)),
        MetadataValue::U32(x) => Some(u64::from(*x)),
        MetadataValue::U64(x) => Some(*x),
        MetadataValue::I8(x) => u64::try_from(*x).ok(),
        MetadataValue::I16(x) => u64::try_from(*x).ok(),
        MetadataValue::I32(x) => u64::try_from(*x).ok(),
        MetadataValue::I64(x) => u64::try_from(*x).ok(),
        _ => None,
    }
}

impl GgufHeader {
    pub(crate) fn read(path: &Path) -> Result<GgufHeader, ModelError> {
        let file = std::fs::File::open(path).map_err(|source| ModelError::Open { path: path.into(), source })?;
        let parse = |detail: String| ModelError::Parse { path: path.into(), detail };
        let len = file.metadata().map_err(|source| ModelError::Open { path: path.into(), source })?.len();
        // Header and tensor descriptors only (no eager load), every descriptor's range checked
        // against the file size. Metadata cannot be longer than the file, nor decode to much more
        // (a value is at most 32 bytes decoded per byte written): a length field that says
        // otherwise fails at once instead of allocating the library's 256 MiB budget.
        let defaults = GGUFReaderConfig::default();
        let config = GGUFReaderConfig {
            max_metadata_size: defaults.max_metadata_size.min(usize::try_from(len).unwrap_or(usize::MAX)),
            max_decoded_metadata_size: defaults
                .max_decoded_metadata_size
                .min(usize::try_from(len.saturating_mul(32)).unwrap_or(usize::MAX)),
            ..defaults
        };
        let reader = GGUFFileReader::with_config(std::io::BufReader::with_capacity(1 << 20, file), config)
            .map_err(|e| parse(e.to_string()))?;
        let meta = reader.metadata();
        let arch = meta
            .get("general.architecture")
            .and_then(MetadataValue::as_str)
            .ok_or_else(|| parse("no general.architecture string in its metadata".into()))?
            .to_string();
        let prefix = format!("{arch}.");
        let mut ints = BTreeMap::new();
        for (key, value) in meta.iter() {
            if !key.starts_with(&prefix) {
                continue;
            }
            let values = match value {
                MetadataValue::Array(a) => a.values.iter().map(as_u64).collect::<Option<Vec<_>>>(),
                v => as_u64(v).map(|x| vec![x]),
            };
            if let Some(values) = values {
                ints.insert(key[prefix.len()..].to_string(), values);
            }
        }
        let mut tensors = Vec::with_capacity(reader.tensor_infos().len());
        for t in reader.tensor_infos() {
            let n_bytes = t.checked_expected_data_size().map_err(|e| parse(e.to_string()))?;
            tensors.push(Tensor {
                name: t.name().to_string(),
                ggml_type: GgmlType(t.tensor_type()),
                dims: t.shape().dims().to_vec(),
                n_bytes,
            });
        }
        Ok(GgufHeader { path: path.into(), arch, tensors, ints })
    }

    /// `<arch>.KEY` as one integer (a per-layer array whose values all agree counts too).
    pub(crate) fn arch_u64(&self, key: &str) -> Option<u64> {
        let v = self.ints.get(key)?;
        let first = *v.first()?;
        v.iter().all(|x| *x == first).then_some(first)
    }

    /// `<arch>.KEY` per layer: a scalar repeated `layers` times, or an array of exactly `layers`.
    pub(crate) fn arch_per_layer(&self, key: &str, layers: u64) -> Option<Vec<u64>> {
        let v = self.ints.get(key)?;
        match v.len() {
            1 => Some(vec![v[0]; layers as usize]),
            n if n as u64 == layers => Some(v.clone()),
            _ => None,
        }
    }

    /// Whether `<arch>.KEY` is present (with an integer value).
    pub(crate) fn has_arch_key(&self, key: &str) -> bool {
        self.ints.contains_key(key)
    }

    /// Whether any integer `<arch>.PREFIX…` key is present (`ssm.` for a state-space model, say).
    pub(crate) fn has_any_arch_key_with_prefix(&self, prefix: &str) -> bool {
        self.ints.keys().any(|k| k.starts_with(prefix))
    }

    pub(crate) fn require(&self, key: &str) -> Result<u64, ModelError> {
        self.arch_u64(key)
            .ok_or_else(|| ModelError::MissingKey { path: self.path.clone(), key: format!("{}.{key}", self.arch) })
    }

    pub(crate) fn tensor(&self, name: &str) -> Option<&Tensor> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::roofline::testbed::gguf_fixture;

    /// The test bed's models, each with the `gguf` package's view of it.
    pub(crate) const MODELS: [(&str, &str); 3] = [
        ("TARGET_MODEL", "target-qwen3moe.json"),
        ("DRAFT_MODEL", "draft-qwen3moe.json"),
        ("SMOLLM2_MODEL", "SmolLM2-135M-Instruct.Q4_1.json"),
    ];

    #[test]
    fn kv_cache_types_have_the_gguf_packages_block_geometry() {
        let want = gguf_fixture(MODELS[0].1);
        let blocks = want["kv_type_blocks"].as_object().unwrap();
        assert_eq!(blocks.len(), crate::variant::KV_TYPES.len());
        for name in crate::variant::KV_TYPES {
            let b = &blocks[*name];
            let t = GgmlType::from_name(name).unwrap();
            assert_eq!(t.name(), *name);
            assert_eq!(t.block(), Some((b[0].as_u64().unwrap(), b[1].as_u64().unwrap())), "{name}");
        }
        assert!(GgmlType::from_name("q9_9").is_err());
        assert_eq!(GgmlType::from_name("q8_0").unwrap().row_bytes(64), Some(68));
        assert_eq!(GgmlType::from_name("q8_0").unwrap().row_bytes(48), None, "not whole blocks");
    }

    #[test]
    fn a_file_that_is_not_gguf_is_one_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.gguf");
        std::fs::write(&p, b"not a model at all, just text").unwrap();
        let e = GgufHeader::read(&p).unwrap_err().to_string();
        assert!(e.contains("is not a GGUF file"), "{e}");
        let e = GgufHeader::read(&d.path().join("missing.gguf")).unwrap_err().to_string();
        assert!(e.starts_with("cannot open model"), "{e}");
    }

    #[test]
    fn the_magic_and_version_are_checked_in_eight_bytes() {
        let d = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let mut v3 = b"GGUF".to_vec();
        v3.extend(3u32.to_le_bytes());
        assert!(check_magic(&file("v3.gguf", &v3)).is_ok(), "the rest is llama.cpp's to read");
        v3[4] = 2;
        assert!(check_magic(&file("v2.gguf", &v3)).is_ok());
        let e = check_magic(&file("text.gguf", b"just some text")).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "is not a GGUF file: it begins \"just\", where a GGUF model begins \"GGUF\": pass a .gguf model"
            ),
            "{e}"
        );
        let e = check_magic(&file("empty.gguf", b"")).unwrap_err().to_string();
        assert!(e.contains("it is empty"), "{e}");
        let e = check_magic(&file("short.gguf", b"GGUF")).unwrap_err().to_string();
        assert!(e.contains("is 4 bytes, too short for a GGUF header"), "{e}");
        v3[4] = 1;
        assert!(check_magic(&file("v1.gguf", &v3)).unwrap_err().to_string().contains("GGUF version 1"));
        assert!(matches!(check_magic(&d.path().join("missing.gguf")), Err(ModelError::Open { .. })));
    }

    /// Tests that read the test bed's models (.config/nextest.toml keeps them out of the fast tier).
    mod on_test_bed {
        use super::*;
        use crate::roofline::testbed::model;

        #[test]
        fn every_tensor_matches_the_gguf_package_exactly() {
            for (key, fixture) in MODELS {
                let path = model(key);
                let want = gguf_fixture(fixture);
                let regenerate = format!("{} (see scripts/gguf_tensor_sizes.py)", want["made_by"].as_str().unwrap());
                assert_eq!(
                    std::fs::metadata(&path).unwrap().len(),
                    want["file_size"].as_u64().unwrap(),
                    "{}: not the file tests/fixtures/gguf/{fixture} describes: regenerate it with {regenerate}",
                    path.display()
                );
                let h = GgufHeader::read(&path).unwrap();
                assert_eq!(h.arch, want["arch"].as_str().unwrap());
                let tensors = want["tensors"].as_array().unwrap();
                assert_eq!(h.tensors.len(), tensors.len(), "{fixture}");
                for (got, w) in h.tensors.iter().zip(tensors) {
                    let dims: Vec<u64> = w["dims"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
                    assert_eq!(got.name, w["name"].as_str().unwrap(), "{fixture}");
                    assert_eq!(got.ggml_type.name(), w["type"].as_str().unwrap(), "{fixture} {}", got.name);
                    assert_eq!(got.dims, dims, "{fixture} {}", got.name);
                    assert_eq!(got.n_bytes, w["n_bytes"].as_u64().unwrap(), "{fixture} {}", got.name);
                }
                for (k, v) in want["ints"].as_object().unwrap() {
                    let values: Vec<u64> = v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
                    assert_eq!(h.ints.get(k), Some(&values), "{fixture} {k}");
                }
            }
        }
    }
}
