//! The study's loopback port. A port the study file fixes is the user's: when something else
//! listens on it, the study says so and stops. A port abprof picked is abprof's choice: when
//! something took it between samples, another free one is picked, since no number depends on it
//! (each sample records its server's argv, port included).
use crate::server::{check_port_free, free_port, ServerError};
use std::sync::atomic::{AtomicU16, Ordering};

const HOST: &str = "127.0.0.1";

pub(crate) struct StudyPort {
    fixed: bool,
    now: AtomicU16,
}

impl StudyPort {
    /// The study file's port, checked now (before anything is created on disk), or a free one.
    pub(crate) fn new(fixed: Option<u16>) -> Result<StudyPort, ServerError> {
        let now = match fixed {
            Some(p) => {
                check_port_free(HOST, p)?;
                p
            }
            None => pick()?,
        };
        Ok(StudyPort { fixed: fixed.is_some(), now: AtomicU16::new(now) })
    }

    pub(crate) fn get(&self) -> u16 {
        self.now.load(Ordering::Relaxed)
    }

    /// Before a server starts: the port is still free, else (abprof's own pick) another one.
    pub(crate) fn ensure_free(&self) -> Result<u16, ServerError> {
        match check_port_free(HOST, self.get()) {
            Ok(()) => Ok(self.get()),
            Err(e) if self.fixed => Err(e),
            Err(_) => {
                let p = pick()?;
                self.now.store(p, Ordering::Relaxed);
                Ok(p)
            }
        }
    }
}

fn pick() -> Result<u16, ServerError> {
    free_port(HOST).map_err(|e| ServerError::NoFreePort(HOST.into(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_port_in_use_is_refused_and_a_picked_one_is_replaced() {
        let held = std::net::TcpListener::bind((HOST, 0)).unwrap();
        let taken = held.local_addr().unwrap().port();
        let err = StudyPort::new(Some(taken)).err().unwrap();
        assert!(matches!(err, ServerError::PortInUse { port, .. } if port == taken), "{err}");

        let picked = StudyPort::new(None).unwrap();
        picked.now.store(taken, Ordering::Relaxed);
        let now = picked.ensure_free().unwrap();
        assert_ne!(now, taken);
        assert_eq!(picked.get(), now);

        let fixed = StudyPort { fixed: true, now: AtomicU16::new(taken) };
        assert!(matches!(fixed.ensure_free(), Err(ServerError::PortInUse { .. })));
        drop(held);
        assert_eq!(fixed.ensure_free().unwrap(), taken);
    }
}
