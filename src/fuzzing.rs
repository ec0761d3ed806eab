//! Entry points for `benches/fuzz.rs`: every parser that reads bytes from outside abprof (server
//! logs, the SSE stream, variant specs, study files, `gpu_metrics` blobs, rocprofv3 CSV, GGUF
//! headers), each as a function of raw bytes that must return (Ok or a typed error) and never
//! panic.
use std::path::Path;

/// One parser under test and where its seed inputs live (paths relative to the repository).
pub struct Target {
    pub name: &'static str,
    pub seeds: &'static [&'static str],
    pub run: fn(&[u8], &Path),
}

/// The targets, by name. `scratch` is a file a target may write its input to (the CSV reader reads
/// files); it lives on the caller's tmpfs.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "server-log",
            seeds: &[
                "tests/fixtures/llama-server/target-300x32.log",
                "tests/fixtures/llama-server/draft-lv4-300x32.log",
                "tests/fixtures/llama-server/target-300x32.jsonl",
                "tests/fixtures/llama-server/corrupt-gguf.log",
                "tests/fixtures/llama-server-wild/server-text-2024-08.log",
                "tests/fixtures/llama-server-wild/server-json-2024-05.log",
                "tests/fixtures/llama-server-wild/router-one-call-2026.log",
                "tests/fixtures/llama-server-wild/mean-acceptance-length-2026-06.log",
                "tests/fixtures/llama-server-wild/llama-cli-print-2024-09.log",
            ],
            run: |b, _| {
                let text = String::from_utf8_lossy(b);
                let _ = crate::server::log::timing_blocks(&text);
                let _ = crate::server::log::first_error_line(&text);
            },
        },
        Target {
            name: "sse-stream",
            seeds: &[
                "tests/fixtures/llama-server/target-300x32.sse",
                "tests/fixtures/exactness/smollm2-8-tokens.sse",
                "tests/fixtures/exactness/smollm2-stop.sse",
            ],
            run: |b, _| {
                let mut parser = crate::client::SseParser::new();
                let mut events = Vec::new();
                // Two pieces, as bytes arrive from the network: a split inside a line must not matter.
                let cut = b.len() / 3;
                parser.feed(&b[..cut], &mut events);
                parser.feed(&b[cut..], &mut events);
                let mut record = crate::client::StreamRecord::default();
                for (i, ev) in events.iter().enumerate() {
                    if record.on_event(ev, crate::clock::Stamp { mono_ns: i as u64, boot_ns: i as u64 }).is_err() {
                        break;
                    }
                }
                let _ = crate::measure::StreamMetrics::from_record(&record);
            },
        },
        Target {
            name: "variant-spec",
            seeds: &["tests/fixtures/fuzz-seeds/variant-specs.txt"],
            run: |b, _| {
                for line in String::from_utf8_lossy(b).lines() {
                    let _ = crate::variant::Variant::parse(line);
                }
            },
        },
        Target {
            name: "study-file",
            seeds: &["assets/examples/qwen-mtp-strix-halo.toml", "tests/fixtures/evidence-pre-engine/study/study.toml"],
            run: |b, _| {
                if let Ok(f) = crate::study::file::StudyFile::parse(&String::from_utf8_lossy(b)) {
                    let _ = f.check();
                    let _ = crate::variant::parse_variants(&f.variants);
                }
            },
        },
        Target {
            name: "gpu-metrics",
            seeds: &[
                "tests/fixtures/gpu_metrics/v1_3.bin",
                "tests/fixtures/gpu_metrics/v2_1.bin",
                "tests/fixtures/gpu_metrics/v2_4.bin",
                "tests/fixtures/gpu_metrics/v3_0.bin",
                "tests/fixtures/gpu_metrics/v3_0_truncated.bin",
            ],
            run: |b, _| {
                if let Ok(m) = crate::telemetry::gpu_metrics::GpuMetrics::decode(b) {
                    let _ = m.to_reading(m.default_interpretation());
                }
            },
        },
        Target {
            name: "rocprofv3-csv",
            seeds: &[
                "traces/kernel_trace_cut.csv",
                "traces/rocpd-to-csv.csv",
                "traces/kernel_trace_truncated.csv",
                "tests/fixtures/llama-server-wild/rocprof-v1-results.stats.csv",
            ],
            run: |b, scratch| {
                if std::fs::write(scratch, b).is_err() {
                    return;
                }
                if let Ok(source) = crate::trace::detect::open_trace(scratch) {
                    let _ = source.aggregate(None);
                    let _ = crate::trace::overlap::split(source.as_ref(), None, None);
                }
            },
        },
        Target {
            name: "gguf-header",
            seeds: &["tests/fixtures/fuzz-seeds/tiny-moe.gguf"],
            run: |b, scratch| {
                if std::fs::write(scratch, b).is_err() {
                    return;
                }
                if let Ok(h) = crate::roofline::gguf::GgufHeader::read(scratch) {
                    let _ = crate::roofline::bytes::WeightBytes::of(&h);
                    let f16 = crate::roofline::gguf::GgmlType::from_name("f16").expect("f16 is a ggml type");
                    let _ = crate::roofline::bytes::KvShape::of(&h, f16, f16);
                }
            },
        },
    ]
}
