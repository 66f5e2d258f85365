//! [`Event`]: a marker in a stream, for ordering streams and timing device work.

use crate::device::{Backend, Device};
use crate::error::{Error, Result};
use crate::stream::Stream;
use std::fmt;
#[cfg(feature = "cuda")]
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A marker recorded in a [`Stream`]: it completes when the work issued to the stream before
/// the record has finished. Other streams can wait for it ([`Stream::wait_event`]), the host
/// can wait for it ([`synchronize`](Self::synchronize)), and two events time the device work
/// between them ([`elapsed_ms`](Self::elapsed_ms)). It can be recorded again; waits and timings
/// use the last record. Created by [`Device::event`].
///
/// On the emulator, whose streams run each operation when it is issued, an event is complete
/// as soon as it is recorded and holds the host time of the record, so `elapsed_ms` measures
/// the host time of the work issued in between.
///
/// ```
/// use tilus_runtime::Device;
/// # fn main() -> tilus_runtime::Result<()> {
/// let dev = Device::emulator();
/// let s = dev.stream()?;
/// let (start, end) = (dev.event()?, dev.event()?);
/// let (a, b) = (dev.zeros::<f32>(1 << 16)?, dev.zeros::<f32>(1 << 16)?);
/// start.record(&s)?;
/// s.copy(&a, &b)?;
/// end.record(&s)?;
/// let ms = start.elapsed_ms(&end)?; // waits for `end`
/// assert!(ms >= 0.0);
/// # Ok(()) }
/// ```
pub struct Event {
    dev: Device,
    kind: EventKind,
}

enum EventKind {
    /// The host time of the last record.
    Emu(Mutex<Option<Instant>>),
    #[cfg(feature = "cuda")]
    Cuda {
        raw: crate::cuda::ffi::CUevent,
        recorded: AtomicBool,
    },
}

// SAFETY: a CUevent is an opaque driver handle usable from any thread (every use makes the
// device's context current first); the rest is Send + Sync.
unsafe impl Send for Event {}
// SAFETY: as above; the driver serialises concurrent uses of one event.
unsafe impl Sync for Event {}

impl Device {
    /// A new event of this device, with timing enabled.
    pub fn event(&self) -> Result<Event> {
        let kind = match &self.inner.backend {
            Backend::Emu(_) => EventKind::Emu(Mutex::new(None)),
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => {
                use crate::cuda::{check, ffi};
                c.make_current()?;
                let mut raw: ffi::CUevent = std::ptr::null_mut();
                // SAFETY: out-pointer to a local; the context is current.
                check(
                    unsafe { ffi::event_create(&mut raw, ffi::EVENT_DEFAULT) },
                    || format!("creating an event on {}", c.describe()),
                )?;
                EventKind::Cuda {
                    raw,
                    recorded: AtomicBool::new(false),
                }
            }
        };
        Ok(Event {
            dev: self.clone(),
            kind,
        })
    }
}

impl Event {
    /// The device the event belongs to.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    fn expect_recorded(&self, op: &'static str) -> Result<()> {
        let recorded = match &self.kind {
            EventKind::Emu(t) => t.lock().unwrap_or_else(|p| p.into_inner()).is_some(),
            #[cfg(feature = "cuda")]
            EventKind::Cuda { recorded, .. } => recorded.load(Ordering::Acquire),
        };
        if recorded {
            Ok(())
        } else {
            Err(Error::EventNotRecorded { op })
        }
    }

    /// Record the event at the current end of `stream` (a stream of the event's device,
    /// [`Error::DeviceMismatch`] otherwise).
    pub fn record(&self, stream: &Stream<'_>) -> Result<()> {
        self.dev.expect_same(stream.device(), "Event::record")?;
        match &self.kind {
            EventKind::Emu(t) => {
                *t.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
            }
            #[cfg(feature = "cuda")]
            EventKind::Cuda { raw, recorded } => {
                let c = self.dev.cuda_backend()?;
                c.make_current()?;
                // SAFETY: our event and a live stream of the same context.
                crate::cuda::check(
                    unsafe { crate::cuda::ffi::event_record(*raw, stream.kind.raw()) },
                    || "recording an event (Event::record)".into(),
                )?;
                recorded.store(true, Ordering::Release);
            }
        }
        Ok(())
    }

    /// Wait until the event has completed (the work before its last record has finished).
    /// [`Error::EventNotRecorded`] if it was never recorded.
    pub fn synchronize(&self) -> Result<()> {
        self.expect_recorded("Event::synchronize")?;
        match &self.kind {
            EventKind::Emu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            EventKind::Cuda { raw, .. } => {
                let c = self.dev.cuda_backend()?;
                c.make_current()?;
                // SAFETY: our event, recorded.
                crate::cuda::check(unsafe { crate::cuda::ffi::event_synchronize(*raw) }, || {
                    "waiting for an event (Event::synchronize; the error may come from the work before it)".into()
                })
            }
        }
    }

    /// Whether the event has completed, without waiting.
    /// [`Error::EventNotRecorded`] if it was never recorded.
    pub fn is_complete(&self) -> Result<bool> {
        self.expect_recorded("Event::is_complete")?;
        match &self.kind {
            EventKind::Emu(_) => Ok(true),
            #[cfg(feature = "cuda")]
            EventKind::Cuda { raw, .. } => {
                use crate::cuda::ffi;
                self.dev.cuda_backend()?.make_current()?;
                // SAFETY: our event, recorded.
                match unsafe { ffi::event_query(*raw) } {
                    ffi::SUCCESS => Ok(true),
                    ffi::NOT_READY => Ok(false),
                    code => Err(crate::cuda::driver_error(
                        code,
                        "querying an event (Event::is_complete)".into(),
                    )),
                }
            }
        }
    }

    /// Milliseconds from this event to `end` (both recorded, on the same device; timed on the
    /// GPU by the driver, with a resolution of about half a microsecond). Waits for `end` first.
    /// [`Error::EventNotRecorded`] if either was never recorded.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        self.dev.expect_same(&end.dev, "Event::elapsed_ms")?;
        self.expect_recorded("Event::elapsed_ms")?;
        end.expect_recorded("Event::elapsed_ms")?;
        end.synchronize()?;
        match (&self.kind, &end.kind) {
            (EventKind::Emu(a), EventKind::Emu(b)) => {
                let when =
                    |t: &Mutex<Option<Instant>>| *t.lock().unwrap_or_else(|p| p.into_inner());
                let (Some(a), Some(b)) = (when(a), when(b)) else {
                    return Err(Error::EventNotRecorded {
                        op: "Event::elapsed_ms",
                    });
                };
                let ms = if b >= a {
                    (b - a).as_secs_f64() * 1e3
                } else {
                    -((a - b).as_secs_f64() * 1e3)
                };
                Ok(ms as f32)
            }
            #[cfg(feature = "cuda")]
            (EventKind::Cuda { raw: a, .. }, EventKind::Cuda { raw: b, .. }) => {
                self.dev.cuda_backend()?.make_current()?;
                let mut ms = 0f32;
                // SAFETY: two recorded events of this context (`end` completed above); writes
                // one float.
                crate::cuda::check(
                    unsafe { crate::cuda::ffi::event_elapsed_time(&mut ms, *a, *b) },
                    || "reading the time between two events (Event::elapsed_ms)".into(),
                )?;
                Ok(ms)
            }
            #[cfg(feature = "cuda")]
            _ => unreachable!("events of one device share its backend"),
        }
    }

    /// `stream` waits for this event (see [`Stream::wait_event`]).
    pub(crate) fn wait_on(&self, stream: &Stream<'_>) -> Result<()> {
        self.dev
            .expect_same(stream.device(), "Stream::wait_event")?;
        self.expect_recorded("Stream::wait_event")?;
        match &self.kind {
            // The emulator's work before the record has already run.
            EventKind::Emu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            EventKind::Cuda { raw, .. } => {
                self.dev.cuda_backend()?.make_current()?;
                // SAFETY: our recorded event and a live stream of the same context.
                crate::cuda::check(
                    unsafe { crate::cuda::ffi::stream_wait_event(stream.kind.raw(), *raw, 0) },
                    || "making a stream wait for an event (Stream::wait_event)".into(),
                )
            }
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        #[cfg(feature = "cuda")]
        if let (EventKind::Cuda { raw, .. }, Ok(c)) = (&self.kind, self.dev.cuda_backend()) {
            if c.make_current().is_ok() {
                // SAFETY: our event, not used after this (destroying a pending event is allowed:
                // the driver releases it when it completes).
                unsafe { crate::cuda::ffi::event_destroy(*raw) };
            }
        }
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("device", &self.dev.describe())
            .finish()
    }
}
