//! Renderers: typed results in, text or JSON out. Nothing here measures or decides.
pub mod sample;
pub mod summary;
