//! `abprof completions SHELL` and `abprof man`: generated from the clap definitions, so they can
//! never disagree with the flags.
use clap::Args;

#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// The completions of `cmd`, abprof's whole command line (passed in: it is defined above).
/// Generated in memory first: clap_complete's writer panics on a failed write, and a reader that
/// stops early (`| head -1`) is no failure (crate::report::emit_bytes).
pub(crate) fn completions(a: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "abprof", &mut script);
    crate::report::emit_bytes(&script)?;
    Ok(0)
}

/// The roff man page of abprof and its subcommands, on stdout.
pub(crate) fn man(cmd: clap::Command) -> anyhow::Result<i32> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("abprof-{}", sub.get_name());
        let sub = sub.clone().name(name.clone()).bin_name(name);
        clap_mangen::Man::new(sub).render(&mut page)?;
    }
    crate::report::emit_bytes(&page)?;
    Ok(0)
}
