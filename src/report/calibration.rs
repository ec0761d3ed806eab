//! What `abprof calibrate` prints: the prompt's exact token count and where it was saved.
use super::Render;
use crate::client::calibrate::Calibration;
use serde::Serialize;
use std::path::Path;

#[derive(Serialize)]
pub(crate) struct SavedCalibration<'a> {
    #[serde(flatten)]
    pub(crate) calibration: &'a Calibration,
    pub(crate) file: &'a Path,
}

impl Render for SavedCalibration<'_> {
    fn text(&self) -> String {
        let c = self.calibration;
        format!(
            "calibrated {} prompt tokens ({} content tokens) in {} round(s): {}\n",
            c.prompt_tokens,
            c.content_tokens,
            c.rounds.len(),
            self.file.display()
        )
    }
}
