//! The llama-server a study would run: its `--version`, and whether its `--help` offers what
//! studies ask of it (`--spec-type draft-mtp`, `--backend-sampling`).
use std::path::Path;

use super::finding::Finding;
use crate::study::facts::{probe, VERSION_PROBE_TIMEOUT};

const NAME: &str = "llama-server";

/// What a build's `--help` says it supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Supports {
    pub(crate) draft_mtp: bool,
    pub(crate) backend_sampling: bool,
}

/// `--spec-type` lists its kinds in its help, `draft-mtp` among them where the build has MTP.
pub(crate) fn supports(help: &str) -> Supports {
    Supports {
        draft_mtp: help.contains("--spec-type") && help.contains("draft-mtp"),
        backend_sampling: help.contains("--backend-sampling"),
    }
}

/// The `version: …` line of `--version`, else its first line.
fn version_line(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("version:"))
        .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("(printed nothing)")
        .trim()
        .to_string()
}

pub(crate) fn finding(server: Option<&Path>) -> Finding {
    let Some(given) = server else {
        return Finding::not_present(
            NAME,
            "not checked",
            Some("pass --server-bin PATH (your llama-server, or an `abprof build` folder) to check its version and flags".into()),
        );
    };
    let binary = crate::variant::resolve_binary(given).0;
    if !binary.is_file() {
        return Finding::warn(
            NAME,
            format!("{}: no such file", binary.display()),
            "pass the llama-server binary (build/bin/llama-server) or an `abprof build` artifact folder",
        );
    }
    let run = |arg: &str| match probe(&binary, arg, &[], VERSION_PROBE_TIMEOUT) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(format!("{arg} did not answer within {} s", VERSION_PROBE_TIMEOUT.as_secs())),
        Err(e) => Err(format!("could not run {arg}: {e}")),
    };
    let (version, help) = match (run("--version"), run("--help")) {
        (Ok(v), Ok(h)) => (v, h),
        (Err(e), _) | (_, Err(e)) => {
            return Finding::warn(
                NAME,
                format!("{}: {e}", binary.display()),
                "check that it is an executable llama-server built for this host (run it with --version)",
            )
        }
    };
    judge(&binary, &version, &help)
}

pub(crate) fn judge(binary: &Path, version: &str, help: &str) -> Finding {
    let s = supports(help);
    let yes = |b: bool| if b { "yes" } else { "no" };
    let value = format!(
        "{} {} · --spec-type draft-mtp: {} · --backend-sampling: {}",
        binary.display(),
        version_line(version),
        yes(s.draft_mtp),
        yes(s.backend_sampling)
    );
    if !help.contains("--port") {
        return Finding::warn(
            NAME,
            format!("{value} · its --help names no --port: not a llama-server"),
            "pass the llama-server binary (build/bin/llama-server), not llama-cli or another tool",
        );
    }
    let mut f = Finding::ok(NAME, value);
    let missing: Vec<&str> = [(s.draft_mtp, "--spec-type draft-mtp"), (s.backend_sampling, "--backend-sampling")]
        .into_iter()
        .filter(|(has, _)| !has)
        .map(|(_, flag)| flag)
        .collect();
    if !missing.is_empty() {
        f.fix =
            Some(format!("a study whose --server-args ask for {} needs a newer llama.cpp build", missing.join(" or ")));
    }
    f
}

#[cfg(test)]
mod tests {
    use super::super::finding::Status;
    use super::*;

    /// The lines of the pinned llama-server's (0c1e57098) `--help` that matter here.
    const HELP: &str = "--port PORT                             port to listen (default: 8080)\n\
-bs,   --backend-sampling                enable backend sampling (default: disabled)\n\
--spec-type [none|draft-simple|draft-eagle3|draft-mtp|ngram-simple|ngram-map-k]\n";

    #[test]
    fn a_build_with_mtp_and_backend_sampling_says_so() {
        let f = judge(Path::new("/b/llama-server"), "version: 1 (0c1e570)\nbuilt with GNU 12.2.0", HELP);
        assert_eq!(f.status, Status::Ok);
        assert_eq!(
            f.value,
            "/b/llama-server version: 1 (0c1e570) · --spec-type draft-mtp: yes · --backend-sampling: yes"
        );
        assert!(f.fix.is_none());
    }

    #[test]
    fn an_older_build_is_told_what_it_lacks() {
        let old = "--port PORT   port to listen\n--spec-type [none|draft-simple]\n";
        let f = judge(Path::new("/old/llama-server"), "version: 4000 (abc)", old);
        assert_eq!(f.status, Status::Ok);
        assert!(f.value.ends_with("draft-mtp: no · --backend-sampling: no"), "{}", f.value);
        assert!(f.fix.unwrap().contains("--spec-type draft-mtp or --backend-sampling"));
        assert_eq!(judge(Path::new("/bin/true"), "", "usage: true").status, Status::Warn);
    }

    #[test]
    fn no_binary_is_not_checked_and_a_missing_one_warns() {
        assert_eq!(finding(None).status, Status::NotPresent);
        assert_eq!(finding(Some(Path::new("/nonexistent/llama-server"))).status, Status::Warn);
        // A binary that runs but is not llama-server.
        assert_eq!(finding(Some(Path::new("/bin/true"))).status, Status::Warn);
    }
}
