//! Asynchronous copies between host memory and tensors on a [`Stream`].
//!
//! A copy in flight reads or writes host memory after the call that issued it returned, so
//! the host memory must outlive it and must not be touched by the host meanwhile. Two designs
//! make that impossible to get wrong in safe code:
//!
//! * **Ownership** ([`Stream::upload`], [`Stream::download`]): the copy takes the host buffer
//!   by value and gives it back from [`Pending::wait`] once the copy is done. Dropping the
//!   `Pending` waits too. A `Pending` that is leaked (`mem::forget`) leaks its buffer, which
//!   is sound: the memory is never freed or reused under the copy. A *borrowing* guard
//!   (`fn upload(&self, &[T]) -> Guard<'_>` that waits in `Drop`) would not be: safe code can
//!   `mem::forget` the guard, end the borrow and free the slice while the copy still runs.
//! * **Scope** ([`Stream::scope`]): copies from and into *borrowed* slices, like
//!   `std::thread::scope`: the slices are borrowed for the whole scope, and the scope waits for
//!   the stream before it returns (also when the closure panics), so no borrow can end while a
//!   copy of it is in flight.
//!
//! Only [`PlainElement`] types (every element type but `bool`) are copied this way, because the
//! device's bytes land in the host memory unchecked.

#[cfg(feature = "cuda")]
use crate::device::Device;
use crate::error::{Error, Result};
use crate::host::{HostMemory, PlainElement};
use crate::spec::AsTensor;
use crate::stream::Stream;
use crate::tensor::{MemRef, TensorRef};
use std::marker::PhantomData;

/// A copy in flight that owns its host buffer `B` until it completes. Returned by
/// [`Stream::upload`] and [`Stream::download`]; [`wait`](Self::wait) returns the buffer (for a
/// download, holding the data). Dropping it waits for the copy.
///
/// If waiting fails (the device faulted, which poisons the CUDA context) the buffer is leaked
/// rather than handed back or freed: the driver could not confirm that the copy is over.
#[must_use = "dropping a Pending waits for the copy; `wait` returns the buffer"]
pub struct Pending<B> {
    host: Option<B>,
    done: Done,
}

/// How to wait for a copy.
enum Done {
    /// Complete already (the emulator, or nothing to copy).
    Now,
    /// An event recorded after the copy.
    #[cfg(feature = "cuda")]
    Event {
        dev: Device,
        raw: crate::cuda::ffi::CUevent,
    },
}

// SAFETY: the event handle is an opaque driver handle usable from any thread; the buffer is
// `Send` (a `HostMemory` requirement).
unsafe impl<B: Send> Send for Pending<B> {}
// SAFETY: `&Pending` exposes only `is_complete`, a driver query.
unsafe impl<B: Sync> Sync for Pending<B> {}

impl Done {
    /// Wait, then release the event. `Err` if the driver reports a failure.
    fn wait(&mut self) -> Result<()> {
        match std::mem::replace(self, Done::Now) {
            Done::Now => Ok(()),
            #[cfg(feature = "cuda")]
            Done::Event { dev, raw } => {
                let c = dev.cuda_backend()?;
                c.make_current()?;
                // SAFETY: our recorded event.
                let r = unsafe { crate::cuda::ffi::event_synchronize(raw) };
                // SAFETY: our event, not used after this.
                unsafe { crate::cuda::ffi::event_destroy(raw) };
                crate::cuda::check(r, || {
                    "waiting for an asynchronous copy (the error may come from earlier work on its stream)".into()
                })
            }
        }
    }
}

impl<B> Pending<B> {
    /// Wait for the copy and return the host buffer.
    pub fn wait(mut self) -> Result<B> {
        match self.done.wait() {
            Ok(()) => Ok(self
                .host
                .take()
                .expect("a Pending holds its buffer until waited")),
            Err(e) => {
                // Leak: see the type's documentation.
                std::mem::forget(self.host.take());
                Err(e)
            }
        }
    }

    /// Whether the copy has completed, without waiting.
    pub fn is_complete(&self) -> Result<bool> {
        match &self.done {
            Done::Now => Ok(true),
            #[cfg(feature = "cuda")]
            Done::Event { dev, raw } => {
                use crate::cuda::ffi;
                dev.cuda_backend()?.make_current()?;
                // SAFETY: our recorded event.
                match unsafe { ffi::event_query(*raw) } {
                    ffi::SUCCESS => Ok(true),
                    ffi::NOT_READY => Ok(false),
                    code => Err(crate::cuda::driver_error(
                        code,
                        "querying an asynchronous copy".into(),
                    )),
                }
            }
        }
    }
}

impl<B> Drop for Pending<B> {
    fn drop(&mut self) {
        if self.done.wait().is_err() {
            std::mem::forget(self.host.take());
        }
    }
}

impl<B> std::fmt::Debug for Pending<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("complete", &matches!(self.done, Done::Now))
            .finish_non_exhaustive()
    }
}

/// Which way a copy goes, with its host memory.
enum HostSide<T> {
    From(*const T),
    Into(*mut T),
}

/// Check `t` against the stream and the host length.
fn check(stream: &Stream<'_>, t: TensorRef<'_>, host_len: usize, op: &'static str) -> Result<()> {
    stream.device().expect_same(t.device, op)?;
    if host_len != t.len {
        return Err(Error::LengthMismatch {
            op,
            expected: t.len,
            got: host_len,
        });
    }
    Ok(())
}

/// Issue a copy between host memory and `t` on `stream` (checked by the caller): at once on the
/// emulator, as an asynchronous copy on a GPU.
///
/// # Safety
///
/// The host memory holds `t.len` elements and stays valid until the copy completes; for
/// `Into`, nothing else accesses it until then.
unsafe fn issue<T: PlainElement>(
    stream: &Stream<'_>,
    t: TensorRef<'_>,
    host: HostSide<T>,
) -> Result<()> {
    let _ = stream; // only the GPU path needs it
    match t.mem {
        MemRef::Emu(m, _) => {
            // SAFETY: the caller's contract; the emulator copies before returning.
            unsafe {
                match host {
                    HostSide::From(p) => {
                        m.store_values(std::slice::from_raw_parts(p, t.len), T::to_bits)
                    }
                    HostSide::Into(p) => {
                        m.load_values(std::slice::from_raw_parts_mut(p, t.len), T::from_bits)
                    }
                }
            }
            Ok(())
        }
        #[cfg(feature = "cuda")]
        MemRef::Cuda(ptr) => {
            let c = stream.device().cuda_backend()?;
            let bytes = t.len * std::mem::size_of::<T>();
            let s = stream.kind.raw();
            // SAFETY: the caller's contract; `ptr` holds `t.len` elements of `T`, whose device
            // layout is the host's (little-endian, same size); every bit pattern is a valid `T`.
            unsafe {
                match host {
                    HostSide::From(p) => c.upload_async(ptr, p.cast(), bytes, s),
                    HostSide::Into(p) => c.download_async(p.cast(), ptr, bytes, s),
                }
            }
        }
    }
}

/// Issue a copy owning `host`, and wrap it in a `Pending`.
fn pending<T: PlainElement, B: HostMemory<T>>(
    stream: &Stream<'_>,
    t: TensorRef<'_>,
    mut host: B,
    upload: bool,
) -> Result<Pending<B>> {
    let done = completion_event(stream)?;
    let side = if upload {
        HostSide::From(host.host_ptr())
    } else {
        HostSide::Into(host.host_mut_ptr())
    };
    // SAFETY: `host` keeps its elements at this address while it is moved (`StableHost`) and is
    // owned by the `Pending` until the copy completes.
    let issued = unsafe { issue(stream, t, side) };
    let mut p = Pending {
        host: Some(host),
        done,
    };
    let recorded = issued.and_then(|()| p.record(stream));
    match recorded {
        Ok(()) => Ok(p),
        Err(e) => {
            // Nothing may touch the buffer before the stream has drained.
            if stream.synchronize().is_err() {
                std::mem::forget(p.host.take());
            }
            p.done = Done::Now;
            Err(e)
        }
    }
}

/// An event to record after a copy (created before the copy is issued, so that a failure to
/// create it leaves nothing in flight).
fn completion_event(stream: &Stream<'_>) -> Result<Done> {
    let _ = stream;
    #[cfg(feature = "cuda")]
    if let Ok(c) = stream.device().cuda_backend() {
        use crate::cuda::{check, ffi};
        c.make_current()?;
        let mut raw: ffi::CUevent = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the context is current.
        check(
            unsafe { ffi::event_create(&mut raw, ffi::EVENT_DISABLE_TIMING) },
            || "creating the completion event of an asynchronous copy".into(),
        )?;
        return Ok(Done::Event {
            dev: stream.device().clone(),
            raw,
        });
    }
    Ok(Done::Now)
}

impl<B> Pending<B> {
    fn record(&mut self, stream: &Stream<'_>) -> Result<()> {
        let _ = stream;
        match &self.done {
            Done::Now => Ok(()),
            #[cfg(feature = "cuda")]
            Done::Event { raw, .. } => {
                // SAFETY: our event and a live stream of its context (current: just issued).
                crate::cuda::check(
                    unsafe { crate::cuda::ffi::event_record(*raw, stream.kind.raw()) },
                    || "recording the completion of an asynchronous copy".into(),
                )
            }
        }
    }
}

impl Stream<'_> {
    /// Copy the host buffer `host` into `dst` (a tensor or view of the stream's device, of the
    /// same length) asynchronously on this stream. The returned [`Pending`] owns `host` until
    /// the copy is done; [`Pending::wait`] gives it back. Use a [`HostBuffer`](crate::HostBuffer)
    /// (pinned) for copies that overlap with kernels at full speed; a `Vec` works too (on a GPU
    /// the driver then stages it through pinned memory, and the call may return only once the
    /// data is staged).
    ///
    /// [`Error::LengthMismatch`] or [`Error::DeviceMismatch`] before anything is issued (the
    /// buffer is dropped).
    pub fn upload<T: PlainElement, B: HostMemory<T>>(
        &self,
        host: B,
        dst: &impl AsTensor<T>,
    ) -> Result<Pending<B>> {
        let t = dst.tensor_ref();
        check(self, t, host.host_len(), "Stream::upload")?;
        pending(self, t, host, true)
    }

    /// Copy `src` (a tensor or view of the stream's device) into the host buffer `host` of the
    /// same length asynchronously on this stream, after the work issued to it before. The
    /// data is in the buffer [`Pending::wait`] returns. Errors as for
    /// [`upload`](Self::upload).
    pub fn download<T: PlainElement, B: HostMemory<T>>(
        &self,
        src: &impl AsTensor<T>,
        host: B,
    ) -> Result<Pending<B>> {
        let t = src.tensor_ref();
        check(self, t, host.host_len(), "Stream::download")?;
        pending(self, t, host, false)
    }

    /// Run `f` with a [`CopyScope`] for asynchronous copies from and into *borrowed* host
    /// slices on this stream, then wait for the stream, so that every copy issued in the scope
    /// is complete when `scope` returns (or unwinds). Returns `f`'s result, or the error of
    /// waiting.
    ///
    /// ```
    /// use tilus_runtime::Device;
    /// # fn main() -> tilus_runtime::Result<()> {
    /// let dev = Device::emulator();
    /// let s = dev.stream()?;
    /// let t = dev.zeros::<f32>(4)?;
    /// let input = vec![1.0f32, 2.0, 3.0, 4.0];
    /// let mut output = vec![0.0f32; 4];
    /// s.scope(|sc| {
    ///     sc.upload(&input, &t)?;
    ///     sc.download(&t, &mut output) // ordered after the upload: one stream
    /// })?;
    /// assert_eq!(output, input);
    /// # Ok(()) }
    /// ```
    pub fn scope<'env, R>(
        &self,
        f: impl for<'scope> FnOnce(&'scope CopyScope<'scope, 'env>) -> Result<R>,
    ) -> Result<R> {
        /// Waits for the stream when dropped: on the way out of `scope`, also by a panic.
        struct WaitOnDrop<'g, 's>(&'g Stream<'s>);
        impl Drop for WaitOnDrop<'_, '_> {
            fn drop(&mut self) {
                if self.0.synchronize().is_err() {
                    // The stream's wait failed (a poisoned context, which runs no more work);
                    // wait for the whole device as well before the borrows end.
                    let _ = self.0.device().synchronize();
                }
            }
        }
        let scope = CopyScope {
            stream: self,
            _scope: PhantomData,
            _env: PhantomData,
        };
        let guard = WaitOnDrop(self);
        let result = f(&scope);
        let waited = self.synchronize();
        drop(guard); // waits again only if the first wait failed: cheap
        let r = result?;
        waited.map(|()| r)
    }
}

/// Asynchronous copies from and into host slices borrowed for `'env`, on one stream; every copy
/// is complete when the [`Stream::scope`] that made this returns. `'scope` is the scope itself
/// (as in `std::thread::Scope`, both lifetimes are invariant, so that no borrow shorter than
/// the scope can be passed in).
pub struct CopyScope<'scope, 'env: 'scope> {
    stream: &'scope Stream<'scope>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<'scope, 'env> CopyScope<'scope, 'env> {
    /// The scope's stream, e.g. to launch kernels between the copies.
    pub fn stream(&self) -> &'scope Stream<'scope> {
        self.stream
    }

    /// Copy `src` into `dst` (same length, on the stream's device) asynchronously; `src` stays
    /// borrowed until the scope ends.
    pub fn upload<T: PlainElement>(&self, src: &'env [T], dst: &impl AsTensor<T>) -> Result<()> {
        let t = dst.tensor_ref();
        check(self.stream, t, src.len(), "CopyScope::upload")?;
        // SAFETY: `src` is borrowed for 'env, which outlives the scope, and the scope waits for
        // the stream before it ends.
        unsafe { issue(self.stream, t, HostSide::From(src.as_ptr())) }
    }

    /// Copy `src` (on the stream's device) into `dst` of the same length asynchronously; `dst`
    /// is exclusively borrowed until the scope ends and holds the data afterwards.
    pub fn download<T: PlainElement>(
        &self,
        src: &impl AsTensor<T>,
        dst: &'env mut [T],
    ) -> Result<()> {
        let t = src.tensor_ref();
        check(self.stream, t, dst.len(), "CopyScope::download")?;
        // SAFETY: `dst` is exclusively borrowed for 'env, which outlives the scope, and the scope
        // waits for the stream before it ends; any bit pattern is a valid `T`.
        unsafe { issue(self.stream, t, HostSide::Into(dst.as_mut_ptr())) }
    }
}

impl std::fmt::Debug for CopyScope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyScope")
            .field("stream", self.stream)
            .finish()
    }
}
