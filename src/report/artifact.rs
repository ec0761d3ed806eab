//! What `abprof build` prints: the artifact's build record and how to use it.
use super::Render;
use crate::artifact::Artifact;
use serde::Serialize;
use std::path::Path;

#[derive(Serialize)]
pub(crate) struct BuiltArtifact<'a> {
    pub(crate) dir: &'a Path,
    #[serde(flatten)]
    pub(crate) info: &'a crate::artifact::BuildInfo,
}

impl<'a> From<&'a Artifact> for BuiltArtifact<'a> {
    fn from(a: &'a Artifact) -> Self {
        BuiltArtifact { dir: &a.dir, info: &a.info }
    }
}

impl Render for BuiltArtifact<'_> {
    fn text(&self) -> String {
        format!(
            "{}artifact: {}\nuse it as: --variant 'LABEL={}'\n",
            self.info.version_txt(),
            self.dir.display(),
            self.dir.display()
        )
    }
}
