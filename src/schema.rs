//! Every JSON document abprof writes (evidence files) or prints (`--format json|jsonl`) carries
//! `schema_version` as its first key, one number for the whole set of documents
//! (docs/methodology.md §13): it is raised when a field changes meaning or goes away, not when one
//! is added. A document without the key was written before versioning: version 1.
use serde::Serialize;

/// The version of every JSON document abprof writes. Version 1 is the unversioned documents
/// before it, where a list was written bare; from 2 on a list stands under `items`; from 3 on an
/// interval (`ci`) has no `resamples` and `seed`.
pub(crate) const SCHEMA_VERSION: u32 = 3;

#[derive(Serialize)]
struct Flat<'a, T: ?Sized> {
    schema_version: u32,
    #[serde(flatten)]
    inner: &'a T,
}

#[derive(Serialize)]
struct Wrapped<'a, T: ?Sized> {
    schema_version: u32,
    items: &'a T,
}

/// A document as pretty JSON with `schema_version` put first. A value that is not a JSON object
/// (a list) is kept whole under `items`, since a key cannot be added to it.
pub(crate) fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string_pretty(&Flat { schema_version: SCHEMA_VERSION, inner: value })
        .or_else(|_| serde_json::to_string_pretty(&Wrapped { schema_version: SCHEMA_VERSION, items: value }))
        .expect("results always serialize")
}

/// The same document on one line (JSON Lines).
pub(crate) fn to_json_line<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(&Flat { schema_version: SCHEMA_VERSION, inner: value })
        .or_else(|_| serde_json::to_string(&Wrapped { schema_version: SCHEMA_VERSION, items: value }))
        .expect("results always serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_comes_first_and_the_fields_keep_their_order() {
        #[derive(Serialize)]
        struct R {
            z: u32,
            a: u32,
        }
        assert_eq!(to_json_line(&R { z: 1, a: 2 }), r#"{"schema_version":3,"z":1,"a":2}"#);
    }

    #[test]
    fn a_list_is_kept_under_items() {
        assert_eq!(to_json_line(&[1, 2]), r#"{"schema_version":3,"items":[1,2]}"#);
    }
}
