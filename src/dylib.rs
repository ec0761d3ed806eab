//! Vendor libraries opened at run time with libloading, so one binary runs on AMD, NVIDIA and
//! GPU-less hosts: the names to try (an override variable first) and the first that opens.
use std::error::Error;

/// `env`'s value (a path) when set, then each of `names` on the loader's search path, then each
/// name in each of `dirs`.
pub(crate) fn candidates(env: &str, names: &[&str], dirs: &[String]) -> Vec<String> {
    let mut out: Vec<String> = std::env::var(env).ok().into_iter().collect();
    out.extend(names.iter().map(|n| n.to_string()));
    for d in dirs {
        out.extend(names.iter().map(|n| format!("{d}/{n}")));
    }
    out
}

/// The first of `candidates` that `open` opens, with its name; else what the last one said.
pub(crate) fn open_first<L, E: Error, S: AsRef<str>>(
    candidates: &[S],
    open: impl Fn(&str) -> Result<L, E>,
) -> Result<(L, String), String> {
    let mut detail = String::new();
    for name in candidates {
        match open(name.as_ref()) {
            Ok(lib) => return Ok((lib, name.as_ref().to_string())),
            Err(e) => detail = with_sources(&e),
        }
    }
    Err(detail)
}

/// An error and its sources on one line, each cause once: libloading's Display says only "dlopen
/// failed" and keeps the loader's reason (which file, which symbol) in `source()`.
pub(crate) fn with_sources(e: &dyn Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line += ": ";
            line += &text;
        }
        cause = c.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_comes_first_then_names_then_folders() {
        std::env::set_var("ABPROF_DYLIB_TEST_LIB", "/x/libfoo.so");
        let c = candidates("ABPROF_DYLIB_TEST_LIB", &["libfoo.so", "libfoo.so.1"], &["/opt/foo/lib".into()]);
        assert_eq!(
            c,
            ["/x/libfoo.so", "libfoo.so", "libfoo.so.1", "/opt/foo/lib/libfoo.so", "/opt/foo/lib/libfoo.so.1"]
        );
    }

    #[test]
    fn the_first_that_opens_wins_and_a_miss_says_why() {
        let open = |n: &str| if n == "b" { Ok(n.len()) } else { Err(std::io::Error::other(format!("no {n}"))) };
        assert_eq!(open_first(&["a", "b", "c"], open), Ok((1, "b".to_string())));
        assert_eq!(open_first(&["a", "c"], open), Err("no c".to_string()));
    }
}
