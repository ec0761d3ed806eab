//! What the sections' tests share: the committed `evidence-today-ab` study's summary.
use crate::summary::Summary;

pub(crate) fn recorded_summary() -> Summary {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-today-ab/study/summary.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
