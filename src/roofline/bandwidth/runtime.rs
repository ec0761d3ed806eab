//! The CUDA and HIP runtimes written once (docs/methodology.md §18): both offer the same calls
//! under their own prefix and types, so opening the library, checking its status codes and
//! symbols, and every call the copy makes are this one macro; each vendor file gives its names and
//! `Runtime::name_and_bus`, the one step the two runtimes take differently.

/// Writes `Runtime` for one vendor's runtime library: `open`, `device_count`, and the
/// `DeviceRuntime` (types.rs) and `DeviceApi` (copy.rs) it offers the measurement. `candidates`
/// names the vendor's fn that lists the library's names and paths; `identify`, the symbols its
/// `name_and_bus` calls, checked with the rest. Invoked only in a file of this folder: its
/// `super::` paths are the folder's modules.
macro_rules! device_runtime {
    // Each symbol with whether the library has it, in the order `require` checks them.
    (@present $lib:expr; $($symbol:ident),+) => {
        [$(($lib.$symbol.is_ok(), stringify!($symbol))),+]
    };
    {
        runtime: $runtime:literal, library: $lib:ty, identify: [$($identify:ident),+],
        env: $env:literal, candidates: $candidates:ident, code: $code:ty, success: $ok:path,
        no_device: $($none:path)|+, memcpy_kind: $kind:path, error_name: $error_name:ident, reset: $reset:ident,
        calls: [$count:ident, $set:ident, $info:ident, $malloc:ident, $free:ident, $memset:ident, $memcpy:ident],
        events: [$create:ident, $record:ident, $sync:ident, $elapsed:ident, $destroy:ident] $(,)?
    } => {
        pub(crate) struct Runtime {
            lib: $lib,
            path: String,
        }

        impl Runtime {
            pub(crate) fn open() -> Result<Runtime, super::types::BandwidthError> {
                let tried = $candidates().map_err(|detail| super::types::BandwidthError::LibraryMissing {
                    runtime: $runtime,
                    tried: $env.into(),
                    detail,
                    env: $env,
                })?;
                // SAFETY: the runtime's initialisers only set up its own state.
                let (lib, path) = crate::dylib::open_first(&tried, |name| unsafe { <$lib>::new(name) }).map_err(
                    |detail| super::types::BandwidthError::LibraryMissing {
                        runtime: $runtime,
                        tried: format!("{} names and paths", tried.len()),
                        detail,
                        env: $env,
                    },
                )?;
                Ok(Runtime { lib, path })
            }

            fn error_name(&self, code: $code) -> String {
                match &self.lib.$error_name {
                    // SAFETY: the runtime returns a static NUL-terminated string for any code.
                    Ok(f) => unsafe { std::ffi::CStr::from_ptr(f(code)) }.to_string_lossy().into_owned(),
                    Err(_) => concat!("unnamed ", $runtime, " error").into(),
                }
            }

            fn check(
                &self,
                call: &'static str,
                code: $code,
            ) -> Result<(), super::types::BandwidthError> {
                use super::types::CallStatus;
                let status = match code {
                    $ok => CallStatus::Success,
                    $($none)|+ => CallStatus::NoDevice,
                    _ => CallStatus::Failed,
                };
                status.into_result($runtime, call, i64::from(code), || self.error_name(code))
            }

            fn require(&self) -> Result<(), super::types::BandwidthError> {
                let symbols = super::runtime::device_runtime!(@present self.lib;
                    $count, $set, $info, $malloc, $free, $memset, $memcpy,
                    $create, $record, $sync, $elapsed, $destroy, $($identify),+);
                match symbols.into_iter().find(|(present, _)| !present) {
                    Some((_, symbol)) => Err(super::types::BandwidthError::SymbolMissing {
                        library: self.path.clone(),
                        symbol,
                    }),
                    None => Ok(()),
                }
            }

            pub(crate) fn device_count(&self) -> Result<u32, super::types::BandwidthError> {
                self.require()?;
                let mut n = 0;
                // SAFETY: symbol checked; `n` is a valid out-pointer.
                self.check(stringify!($count), unsafe { self.lib.$count(&mut n) })?;
                Ok(n.max(0) as u32)
            }
        }

        impl super::types::DeviceRuntime for Runtime {
            fn identify(
                &self,
                device: u32,
            ) -> Result<
                super::types::DeviceIdentity,
                super::types::BandwidthError,
            > {
                let count = self.device_count()?;
                if device >= count {
                    return Err(super::types::BandwidthError::NoDevice {
                        runtime: $runtime,
                        device,
                        detail: format!("the runtime ({}) shows {count} device(s)", self.path),
                    });
                }
                self.name_and_bus(device)
            }

            fn copy_passes(
                &self,
                device: u32,
                passes: u32,
            ) -> Result<super::types::Passes, super::types::BandwidthError>
            {
                super::copy::copy_passes(self, device, passes, stringify!($memcpy))
            }
        }

        // SAFETY (every call below): `require` checked each symbol before `identify` or
        // `copy_passes` can reach here, and each pointer passed is one the runtime handed out or a
        // valid out-pointer.
        impl super::copy::DeviceApi for Runtime {
            fn set_device(&self, device: u32) -> Result<(), super::types::BandwidthError> {
                self.check(stringify!($set), unsafe { self.lib.$set(device as i32) })
            }
            fn free_memory(&self) -> Result<u64, super::types::BandwidthError> {
                let (mut free, mut total) = (0usize, 0usize);
                self.check(stringify!($info), unsafe { self.lib.$info(&mut free, &mut total) })?;
                Ok(free as u64)
            }
            fn alloc(
                &self,
                bytes: usize,
            ) -> Result<*mut std::ffi::c_void, super::types::BandwidthError> {
                let mut p = std::ptr::null_mut();
                self.check(stringify!($malloc), unsafe { self.lib.$malloc(&mut p, bytes) })?;
                Ok(p)
            }
            fn free(&self, ptr: *mut std::ffi::c_void) {
                unsafe { self.lib.$free(ptr) };
            }
            fn fill(
                &self,
                ptr: *mut std::ffi::c_void,
                value: u8,
                bytes: usize,
            ) -> Result<(), super::types::BandwidthError> {
                self.check(stringify!($memset), unsafe { self.lib.$memset(ptr, i32::from(value), bytes) })
            }
            fn copy(
                &self,
                dst: *mut std::ffi::c_void,
                src: *const std::ffi::c_void,
                bytes: usize,
            ) -> Result<(), super::types::BandwidthError> {
                self.check(stringify!($memcpy), unsafe { self.lib.$memcpy(dst, src, bytes, $kind) })
            }
            fn event(&self) -> Result<*mut std::ffi::c_void, super::types::BandwidthError> {
                let mut e = std::ptr::null_mut();
                self.check(stringify!($create), unsafe { self.lib.$create(&mut e) })?;
                Ok(e.cast())
            }
            fn record(
                &self,
                event: *mut std::ffi::c_void,
            ) -> Result<(), super::types::BandwidthError> {
                self.check(stringify!($record), unsafe { self.lib.$record(event.cast(), std::ptr::null_mut()) })
            }
            fn elapsed_ms(
                &self,
                start: *mut std::ffi::c_void,
                stop: *mut std::ffi::c_void,
            ) -> Result<f32, super::types::BandwidthError> {
                self.check(stringify!($sync), unsafe { self.lib.$sync(stop.cast()) })?;
                let mut ms = 0f32;
                self.check(stringify!($elapsed), unsafe { self.lib.$elapsed(&mut ms, start.cast(), stop.cast()) })?;
                Ok(ms)
            }
            fn destroy_event(&self, event: *mut std::ffi::c_void) {
                unsafe { self.lib.$destroy(event.cast()) };
            }
            fn reset(&self) {
                if let Ok(reset) = &self.lib.$reset {
                    unsafe { reset() };
                }
            }
        }
    };
}

pub(crate) use device_runtime;
