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
pub(crate) fn completions(a: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<i32> {
    clap_complete::generate(a.shell, &mut cmd, "abprof", &mut std::io::stdout());
    Ok(0)
}

/// The roff man page of abprof and its subcommands, on stdout.
pub(crate) fn man(cmd: clap::Command) -> anyhow::Result<i32> {
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("abprof-{}", sub.get_name());
        let sub = sub.clone().name(name.clone()).bin_name(name);
        clap_mangen::Man::new(sub).render(&mut out)?;
    }
    Ok(0)
}
