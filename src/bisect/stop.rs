//! The bisect's own signal listener. A study listens only while it runs; a bisect spends most of
//! its time elsewhere (building, asking git), and once any tokio listener has been installed a
//! SIGINT no longer ends the process by itself. So the bisect listens from its start to its end:
//! a signal sets a flag that stops a build in flight (its process group) and ends the bisect at
//! the next step, with the worktree cleaned up and exit status 128+N.
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

pub(crate) struct Stop {
    flag: Arc<AtomicBool>,
    signal: Arc<AtomicI32>,
    _runtime: tokio::runtime::Runtime,
}

impl Stop {
    /// Starts listening for SIGINT, SIGTERM and SIGHUP.
    pub(crate) fn listen() -> std::io::Result<Stop> {
        use tokio::signal::unix::{signal, SignalKind};
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
        let flag = Arc::new(AtomicBool::new(false));
        let number = Arc::new(AtomicI32::new(0));
        {
            let _guard = runtime.enter();
            // Installed here, before the first build, so no signal goes unheard.
            let mut int = signal(SignalKind::interrupt())?;
            let mut term = signal(SignalKind::terminate())?;
            let mut hup = signal(SignalKind::hangup())?;
            let (flag, number) = (flag.clone(), number.clone());
            runtime.spawn(async move {
                let n = tokio::select! { _ = int.recv() => 2, _ = term.recv() => 15, _ = hup.recv() => 1 };
                number.store(n, Ordering::SeqCst);
                flag.store(true, Ordering::SeqCst);
            });
        }
        Ok(Stop { flag, signal: number, _runtime: runtime })
    }

    /// The flag a build watches.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// The signal that arrived, if one did.
    pub(crate) fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }
}
