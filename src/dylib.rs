//! Vendor libraries opened at run time with libloading, so one binary runs on AMD, NVIDIA and
//! GPU-less hosts: the names to try (an override variable first) and the first that opens.
use std::error::Error;

/// The libraries to try: `env`'s value alone when it is set (the file the user named loads, or
/// its failure is the one reported: no other library stands in for it), else each of `names` on
/// the loader's search path, then each name in each of `dirs`. An empty `env` is refused: dlopen
/// of "" opens the main program.
pub(crate) fn candidates(env: &str, names: &[&str], dirs: &[String]) -> Result<Vec<String>, String> {
    match std::env::var_os(env) {
        Some(v) if v.is_empty() => {
            Err(format!("{env} is set but empty: unset it, or set it to the library file's path"))
        }
        Some(v) => Ok(vec![v.to_string_lossy().into_owned()]),
        None => {
            let mut out: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            for d in dirs {
                out.extend(names.iter().map(|n| format!("{d}/{n}")));
            }
            Ok(out)
        }
    }
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
    fn the_names_then_the_folders_and_an_override_alone() {
        let names = ["libfoo.so", "libfoo.so.1"];
        let c = candidates("ABPROF_DYLIB_TEST_UNSET_LIB", &names, &["/opt/foo/lib".into()]);
        assert_eq!(c.unwrap(), ["libfoo.so", "libfoo.so.1", "/opt/foo/lib/libfoo.so", "/opt/foo/lib/libfoo.so.1"]);
        // The file the user named is the only one tried: a junk path fails naming it, and no
        // system library silently stands in for it.
        std::env::set_var("ABPROF_DYLIB_TEST_LIB", "/x/libfoo.so");
        assert_eq!(candidates("ABPROF_DYLIB_TEST_LIB", &names, &["/opt/foo/lib".into()]).unwrap(), ["/x/libfoo.so"]);
        std::env::set_var("ABPROF_DYLIB_TEST_EMPTY_LIB", "");
        let e = candidates("ABPROF_DYLIB_TEST_EMPTY_LIB", &names, &[]).unwrap_err();
        assert!(e.contains("ABPROF_DYLIB_TEST_EMPTY_LIB is set but empty"), "{e}");
    }

    #[test]
    fn the_first_that_opens_wins_and_a_miss_says_why() {
        let open = |n: &str| if n == "b" { Ok(n.len()) } else { Err(std::io::Error::other(format!("no {n}"))) };
        assert_eq!(open_first(&["a", "b", "c"], open), Ok((1, "b".to_string())));
        assert_eq!(open_first(&["a", "c"], open), Err("no c".to_string()));
    }
}
