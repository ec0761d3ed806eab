//! The one error kind that exits 2 (docs/commands.md "Exit status"): an input abprof refuses
//! before it measures anything — a flag clap cannot check alone, a study file, a study folder run
//! by the wrong command or edited by hand, a history location. Each refusal keeps its typed cause
//! (a `StudyFileError`, a `WrongKind`, a `BadLocation`…) as its message and source; `cli::main`
//! asks only whether an error is a `Refusal`. Every other error exits 1.
use std::error::Error;

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct Refusal(Box<dyn Error + Send + Sync + 'static>);

impl Refusal {
    /// A refusal for `why`: a typed error, or one line (a `String`) naming the cause and the fix.
    pub(crate) fn of(why: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Self {
        Self(why.into())
    }
}

/// Returns from the enclosing function with a [`Refusal`] of the formatted line, as
/// `anyhow::bail!` returns an error: a flag or value a command's own code refuses before anything
/// runs.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::refusal::Refusal::of(format!($($arg)*)).into())
    };
}
pub(crate) use refuse;

#[cfg(test)]
mod tests {
    use super::Refusal;

    #[test]
    fn a_refusal_reads_as_its_cause_and_is_one_kind() {
        #[derive(Debug, thiserror::Error)]
        #[error("study needs a model")]
        struct Missing;
        let e: anyhow::Error = Refusal::of(Missing).into();
        assert_eq!(e.to_string(), "study needs a model");
        assert!(e.is::<Refusal>());
        let e: anyhow::Error = Refusal::of(format!("--workload {} means 192 tokens", "mtp-yardstick")).into();
        assert_eq!(e.to_string(), "--workload mtp-yardstick means 192 tokens");
        assert!(e.is::<Refusal>());
    }
}
