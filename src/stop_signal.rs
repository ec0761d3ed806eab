//! The one listener for the signals that stop abprof: SIGINT, SIGTERM and SIGHUP. Every command
//! that starts a child (a server, a tracer, a build) installs it before the first child starts,
//! since once any tokio listener is installed a signal no longer ends the process by itself.
//! A dropped ssh session sends SIGHUP: its default action would kill abprof with no restore and
//! leave the server running (docs/methodology.md §6), so it stops abprof like SIGTERM.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::watch;

/// The number of the stopping signal once one arrived: published to async waiters (a watch
/// channel: 0 none) and to blocking code (a flag, set after the number).
pub(crate) struct StopSignal {
    number: watch::Receiver<i32>,
    flag: Arc<AtomicBool>,
    /// The runtime the listener runs on, when it has one of its own ([`StopSignal::listen_alone`]).
    _runtime: Option<tokio::runtime::Runtime>,
}

impl StopSignal {
    /// Starts listening on `rt`.
    pub(crate) fn listen(rt: &tokio::runtime::Runtime) -> std::io::Result<StopSignal> {
        Self::listen_on(rt.handle(), None)
    }

    /// Starts listening on a runtime of its own, for a command that spends most of its time
    /// outside async code (a build, a bisect): the signal sets the flag it watches.
    pub(crate) fn listen_alone() -> std::io::Result<StopSignal> {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
        let handle = rt.handle().clone();
        Self::listen_on(&handle, Some(rt))
    }

    fn listen_on(
        handle: &tokio::runtime::Handle,
        runtime: Option<tokio::runtime::Runtime>,
    ) -> std::io::Result<StopSignal> {
        use tokio::signal::unix::{signal, SignalKind};
        let _guard = handle.enter();
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        let (tx, number) = watch::channel(0i32);
        let flag = Arc::new(AtomicBool::new(false));
        let set = flag.clone();
        handle.spawn(async move {
            let n = tokio::select! { _ = int.recv() => 2, _ = term.recv() => 15, _ = hup.recv() => 1 };
            // The number first: whoever sees the flag finds which signal it was.
            let _ = tx.send(n);
            set.store(true, Ordering::SeqCst);
        });
        Ok(StopSignal { number, flag, _runtime: runtime })
    }

    /// The flag blocking code watches (a build, a Pi process, the isolation hooks).
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// The signal that arrived, if one did.
    pub(crate) fn signal(&self) -> Option<i32> {
        match *self.number.borrow() {
            0 => None,
            n => Some(n),
        }
    }

    /// A receiver whose `changed()` resolves when the signal arrives, for `tokio::select!`.
    pub(crate) fn watch(&self) -> watch::Receiver<i32> {
        self.number.clone()
    }

    /// Runs `work` to its end, or until the signal arrives: then the work is dropped at its
    /// current await (a health wait, a streamed request; a dropped server stops its own
    /// process group) and the result is the signal's number.
    pub(crate) async fn or_stop<T>(&self, work: impl std::future::Future<Output = T>) -> Result<T, i32> {
        let mut number = self.watch();
        if let Some(n) = self.signal() {
            return Err(n);
        }
        tokio::select! {
            r = work => Ok(r),
            _ = number.changed() => Err(*number.borrow()),
        }
    }
}

/// Stopped by signal N before the command finished (exit 128+N). Whatever servers the command had
/// started were dropped with its future, and a dropped `RunningServer` stops its own process group.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by signal {0}; the server abprof started was stopped, nothing is left running")]
pub(crate) struct Interrupted(pub(crate) i32);

/// Runs a one-server command's async work (bench, calibrate, exactness) until it finishes, or
/// until a stop signal arrives: then the work is dropped at its current await and the result is
/// [`Interrupted`].
pub(crate) fn block_on_until_signal<T>(
    rt: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    // Installed before the work is first polled, so no server starts unwatched.
    let stop = StopSignal::listen(rt)?;
    rt.block_on(stop.or_stop(work)).map_err(Interrupted)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_sets_the_number_then_the_flag_and_stops_the_work() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let stop = StopSignal::listen(&rt).unwrap();
        assert_eq!(stop.signal(), None);
        let r = rt.block_on(async {
            tokio::spawn(async {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                // SIGHUP: the test runner does not treat it as its own stop signal.
                nix::sys::signal::raise(nix::sys::signal::Signal::SIGHUP).unwrap();
            });
            stop.or_stop(std::future::pending::<()>()).await
        });
        assert_eq!(r, Err(1));
        assert_eq!(stop.signal(), Some(1));
        assert!(stop.flag().load(Ordering::SeqCst));
    }
}
