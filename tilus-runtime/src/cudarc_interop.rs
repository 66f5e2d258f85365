//! Borrowing device memory and streams of the [cudarc](https://docs.rs/cudarc/0.19) crate
//! (feature `cudarc`): [`Device::cudarc_scope`], its stream-ordered `unsafe` variant
//! [`Device::cudarc_scope_on_stream`], [`CudarcScope`] and [`Stream::from_cudarc`].
//!
//! The design in short (the public items' rustdoc has the details):
//!
//! * cudarc tracks the uses of each `CudaSlice` with two events, `read` and `write`, recorded
//!   by the `SyncOnDrop` guards that `DevicePtr::device_ptr` / `DevicePtrMut::device_ptr_mut`
//!   return (only when the `CudaContext` manages synchronisation: several streams exist and
//!   event tracking is on). A borrow calls those functions on the scope's stream, so the stream
//!   waits for cudarc's pending work on the memory first, and keeps their guards until the end
//!   of the scope, so cudarc's later work on the memory (and its stream-ordered free) waits for
//!   everything issued to the stream inside the scope.
//! * That orders only work issued *to that stream*, and a `TensorView` goes to any launch on
//!   any stream. The safe scope therefore also synchronises the context when memory is borrowed
//!   and when the scope ends; the `unsafe` one leaves that to its caller's contract.
//! * A scope, not a guard: a guard's end runs in `Drop`, which safe code may skip with
//!   `mem::forget`; the end of a scope runs when its closure returns or unwinds, and the views
//!   cannot outlive the closure (as with `std::thread::scope`).

use crate::device::{Backend, Device};
use crate::error::{Error, Result};
use crate::host::PlainElement;
use crate::stream::Stream;
use crate::tensor::Element;
use crate::view::TensorView;
use cudarc::driver::sys::CUstreamCaptureStatus as CaptureStatus;
use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut,
    DeviceSlice, DriverError as CudarcError, SyncOnDrop,
};
use std::ffi::c_int;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

mod sealed {
    use super::*;

    /// What a borrow needs of cudarc memory. Implemented for cudarc's own types only: the
    /// borrows are safe because these types guarantee that the pointer and length they report
    /// are live memory of their context.
    pub trait Memory {
        /// The element type.
        type Elem;
        /// The `CudaContext` object the memory belongs to.
        fn cudarc_context(&self) -> &Arc<CudaContext>;
        /// Number of elements.
        fn elements(&self) -> usize;
        /// cudarc's `DevicePtr::device_ptr` on `stream`: the stream waits for the memory's
        /// pending writes; the guard records its `read` event on the stream when dropped.
        fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    }

    /// What a mutable borrow needs.
    pub trait MemoryMut: Memory {
        /// cudarc's `DevicePtrMut::device_ptr_mut` on `stream`: the stream waits for the
        /// memory's pending reads and writes; the guard records its `write` event when dropped.
        fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    }
}

/// cudarc device memory that a [`CudarcScope`] can borrow: `CudaSlice<T>`, `CudaView<'_, T>`
/// and `CudaViewMut<'_, T>` (with `Elem = T`). Sealed.
pub trait CudarcMemory: sealed::Memory {}

/// cudarc device memory that a [`CudarcScope`] can borrow mutably: `CudaSlice<T>` and
/// `CudaViewMut<'_, T>`. Sealed.
pub trait CudarcMemoryMut: CudarcMemory + sealed::MemoryMut {}

impl<T> sealed::Memory for CudaSlice<T> {
    type Elem = T;
    fn cudarc_context(&self) -> &Arc<CudaContext> {
        self.context()
    }
    fn elements(&self) -> usize {
        self.len()
    }
    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr(stream)
    }
}
impl<T> sealed::MemoryMut for CudaSlice<T> {
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr_mut(stream)
    }
}
impl<T> CudarcMemory for CudaSlice<T> {}
impl<T> CudarcMemoryMut for CudaSlice<T> {}

impl<T> sealed::Memory for CudaView<'_, T> {
    type Elem = T;
    fn cudarc_context(&self) -> &Arc<CudaContext> {
        DeviceSlice::stream(self).context()
    }
    fn elements(&self) -> usize {
        DeviceSlice::len(self)
    }
    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr(stream)
    }
}
impl<T> CudarcMemory for CudaView<'_, T> {}

impl<T> sealed::Memory for CudaViewMut<'_, T> {
    type Elem = T;
    fn cudarc_context(&self) -> &Arc<CudaContext> {
        DeviceSlice::stream(self).context()
    }
    fn elements(&self) -> usize {
        DeviceSlice::len(self)
    }
    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr(stream)
    }
}
impl<T> sealed::MemoryMut for CudaViewMut<'_, T> {
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr_mut(stream)
    }
}
impl<T> CudarcMemory for CudaViewMut<'_, T> {}
impl<T> CudarcMemoryMut for CudaViewMut<'_, T> {}

/// `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`.
const STREAM_CAPTURE_UNSUPPORTED: c_int = 900;

/// A failed cudarc call as a typed error (cudarc's `DriverError` holds the driver's code).
fn cudarc_err(context: impl Into<String>) -> impl FnOnce(CudarcError) -> Error {
    let context = context.into();
    move |e| crate::cuda::driver_error(e.0 as u32 as c_int, context)
}

/// `Ok` if `ctx` (the context of cudarc memory or of a cudarc stream, `what`) is the context
/// tilus uses on `dev`'s GPU: the same ordinal and the same `CUcontext` (the GPU's primary
/// context, which cudarc's `CudaContext::new` retains too).
fn check_context(dev: &Device, ctx: &CudaContext, what: &str, op: &'static str) -> Result<()> {
    let cuda = match &dev.inner.backend {
        Backend::Cuda(c) => c,
        Backend::Emu(_) => {
            return Err(Error::WrongBackend {
                op,
                needed: "CUDA",
                device: dev.describe(),
            })
        }
    };
    if ctx.ordinal() != cuda.ordinal as usize {
        return Err(Error::DeviceMismatch {
            op,
            a: format!("{what} (GPU {})", ctx.ordinal()),
            b: dev.describe(),
        });
    }
    if !std::ptr::eq(
        ctx.cu_ctx().cast::<()>(),
        cuda.context().as_raw().cast::<()>(),
    ) {
        return Err(Error::DeviceMismatch {
            op,
            a: format!(
                "{what} (GPU {}, in a CUDA context other than the GPU's primary context, which \
                 tilus uses; cudarc's `CudaContext::new` retains the primary one)",
                ctx.ordinal()
            ),
            b: dev.describe(),
        });
    }
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<'a> Stream<'a> {
    /// Borrow a cudarc stream of `dev`'s GPU (for as long as the borrow lasts), to launch
    /// tilus kernels and copies on it in order with cudarc's own work there. It is not
    /// destroyed when the `Stream` drops.
    ///
    /// [`Error::WrongBackend`] on the emulator; [`Error::DeviceMismatch`] for a stream of
    /// another GPU or of a context other than the GPU's primary context (the one tilus uses,
    /// and the one cudarc's `CudaContext::new` retains). cudarc's `CudaContext::default_stream`
    /// (the null stream) becomes the device's default stream, the legacy default stream.
    ///
    /// A stream borrowed this way orders tilus's work with cudarc's *stream* order only; it
    /// does not take part in cudarc's per-slice event tracking. To pass cudarc memory to
    /// kernels, borrow it in a [`Device::cudarc_scope`], which does both.
    ///
    /// ```ignore
    /// let ctx = tilus::cudarc::driver::CudaContext::new(0)?;
    /// let theirs = ctx.new_stream()?;
    /// let s = tilus::Stream::from_cudarc(&dev, &theirs)?;
    /// my_kernel::launch_on(&s, blocks, &x)?; // x: a GlobalTensor
    /// theirs.synchronize()?;
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub fn from_cudarc(dev: &Device, stream: &'a CudaStream) -> Result<Stream<'a>> {
        const OP: &str = "Stream::from_cudarc";
        check_context(dev, stream.context(), "the cudarc stream", OP)?;
        // SAFETY: a live stream of `dev`'s context (checked above, and again by `checked_raw`
        // with cuStreamGetCtx), kept alive by the borrow `'a`. When cudarc destroys it later,
        // cuStreamDestroy lets work still queued there finish first.
        unsafe { Stream::checked_raw(dev, stream.cu_stream().cast(), OP) }
    }
}

impl Device {
    /// Run `f` with a [`CudarcScope`] in which cudarc device memory (`CudaSlice`, `CudaView`,
    /// `CudaViewMut`) is borrowed as [`TensorView`]s that tilus kernels read and write in
    /// place, with no copy, on the cudarc stream `stream` (or any other stream; see below).
    /// Returns `f`'s result once the scope has ended.
    ///
    /// ```ignore
    /// use tilus::cudarc::driver::CudaContext;
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let x = stream.clone_htod(&host_x)?;
    /// let mut y = stream.clone_htod(&host_y)?;
    /// dev.cudarc_scope(&stream, |scope| {
    ///     let xv = scope.borrow(&x)?; // kernels read it
    ///     let yv = scope.borrow_mut(&mut y)?; // kernels write it
    ///     axpy::launch_on(scope.stream(), 64, &xv, &yv, 2.0)
    /// })?;
    /// let out = stream.clone_dtoh(&y)?; // waits for the kernel: cudarc's events say so
    /// ```
    ///
    /// **Checks.** [`Error::WrongBackend`] on the emulator. [`Error::DeviceMismatch`] when the
    /// stream or a borrowed memory belongs to another GPU than `self`, to a CUDA context other
    /// than the GPU's primary context (tilus uses the primary context, which
    /// `CudaContext::new` retains; the memory of a context made by
    /// `CudaContext::new_non_primary` need not be accessible from it, and that context's events
    /// cannot be recorded on its streams), or when memory and stream come from different
    /// `Arc<CudaContext>` objects (cudarc keeps its event-tracking mode per object, so a mix
    /// would skip the events below). The element type: [`CudarcScope::borrow`] views a
    /// `CudaSlice<T>` as `T` (any [`Element`](crate::Element)); [`CudarcScope::borrow_as`]
    /// reinterprets its bytes as another element type ([`Error::ElementSize`] if they are not
    /// a whole number of them).
    ///
    /// **What the kernels wait for, and what cudarc waits for afterwards.** A borrow uses
    /// cudarc's own protocol on `stream`: [`borrow`](CudarcScope::borrow) calls
    /// `DevicePtr::device_ptr`, so `stream` waits for the memory's pending writes (its `write`
    /// event: an upload, a `memset`, a cudarc kernel that wrote it, on any cudarc stream);
    /// [`borrow_mut`](CudarcScope::borrow_mut) calls `DevicePtrMut::device_ptr_mut`, so it
    /// also waits for pending reads. The guards these calls return are kept until the scope
    /// ends and then record the memory's `read` event (a shared borrow) or `write` event (a
    /// mutable borrow) on `stream`, after every launch issued to `stream` in the scope. cudarc's
    /// later writes and its free (`CudaSlice`'s drop waits for both events, then frees with
    /// `cuMemFreeAsync` on the slice's stream) wait for a shared borrow's kernels; its later
    /// reads too for a mutable borrow's. cudarc records these events only while the
    /// `CudaContext` manages synchronisation (`is_managing_stream_synchronization`: a stream
    /// was made with `new_stream`/`fork` and event tracking is on); otherwise all its work is on
    /// one stream and stream order does the same, as for cudarc's own kernel launches. Kernels
    /// that write memory should borrow it mutably: a shared borrow records a `read`, which
    /// cudarc's later readers on other streams do not wait for (in this safe scope they need
    /// not: the end of the scope waits for the kernels).
    ///
    /// **Why this scope also synchronises.** Those events order the work issued *to `stream`*.
    /// A view is an ordinary `TensorView`, which every launch accepts, on every stream: the
    /// device's default stream, a [`Device::stream`], another cudarc stream. Work there would not
    /// be ordered by the events: a kernel could start before cudarc's allocation
    /// (`cuMemAllocAsync`) or its writes have completed, or still run after cudarc's
    /// stream-ordered free has handed the memory to another allocation. So this safe scope
    /// waits on the host for all work of the GPU's context when memory is borrowed (nothing
    /// cudarc issued before the borrow is pending) and when the scope ends (no kernel using a
    /// view is still running when cudarc may free or reuse the memory). The views cannot
    /// outlive the scope: their lifetime is the closure's, which `f`'s result cannot hold. The
    /// cost is one `cuCtxSynchronize` per borrow and one at the end (none for a scope that
    /// borrows nothing). [`cudarc_scope_on_stream`](Self::cudarc_scope_on_stream) skips both and
    /// relies on stream order, under a contract the compiler cannot check.
    ///
    /// **Why a scope and not a guard** (`TensorView::from_cudarc(..) -> Guard`): the end of a
    /// borrow must run (record the events, wait for the kernels), and a guard's `Drop` does not
    /// have to: safe code may `std::mem::forget` it and then free the memory under a running
    /// kernel. The end of a scope runs when `f` returns or unwinds, as `std::thread::scope`
    /// joins its threads.
    ///
    /// If `f` returns an error the scope still ends, and that error is returned; otherwise an
    /// error of the end (a failed synchronisation, an error cudarc recorded while recording its
    /// events) is.
    ///
    /// **CUDA graphs.** Work captured into a graph (cudarc's `CudaStream::begin_capture`) runs
    /// when the graph is launched, which neither cudarc's events nor a synchronisation orders:
    /// a scope on a capturing stream is refused (a driver error,
    /// `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`), and views must not be used on a stream that
    /// is capturing. cudarc's own safe API has the same gap (a captured copy of a slice can be
    /// replayed after the slice is freed); tilus cannot close it for streams it does not see.
    ///
    /// **Reading back.** Through cudarc, after the scope (its events order the read), or
    /// [`TensorView::download`] inside it. `download`, `copy_from_host`, [`Device::launch`] and
    /// [`Device::copy`] use the device's default stream, the legacy default stream, which is
    /// ordered with blocking streams only: cudarc's `new_stream`s are non-blocking, so
    /// synchronise `scope.stream()` before reading a view there after launching on it.
    ///
    /// **Versions.** The memory must be of the cudarc crate tilus is built with, re-exported as
    /// `tilus::cudarc` (0.19, driver API only, loaded at run time, CUDA 12.8 bindings). cudarc
    /// builds one set of bindings: a program that also depends on cudarc must not select a
    /// different `cuda-*` version feature (`cuda-12080` or `cuda-version-from-build-system`
    /// are fine).
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub fn cudarc_scope<'env, F, R>(&self, stream: &'env CudaStream, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope CudarcScope<'scope, 'env>) -> Result<R>,
    {
        // SAFETY: a synchronising scope makes no demand on the caller (see above).
        unsafe { run_scope(self, stream, true, "Device::cudarc_scope", f) }
    }

    /// [`cudarc_scope`](Self::cudarc_scope) without its host synchronisation: borrows and the
    /// end of the scope are ordered by `stream` and cudarc's events alone, so a pipeline of
    /// cudarc and tilus work on one stream runs without the host waiting.
    ///
    /// ```ignore
    /// // SAFETY: the views are used only by launches on `scope.stream()`.
    /// unsafe {
    ///     dev.cudarc_scope_on_stream(&stream, |scope| {
    ///         let yv = scope.borrow_mut(&mut y)?;
    ///         clamp::launch_on(scope.stream(), 64, &yv, 0.0)
    ///     })
    /// }?;
    /// ```
    ///
    /// # Safety
    ///
    /// Every use of a view of this scope (or of a view of a view) must be ordered, on the
    /// device, after the borrow that made it and before the end of the scope, **as positions
    /// of `stream`**:
    ///
    /// * launches and copies issued to `scope.stream()` (or to another `tilus::Stream` of the
    ///   same cudarc stream) inside the scope are;
    /// * work issued to any other stream (the default stream of `Device::launch`,
    ///   `TensorView::download`, `copy_from_host`; a `Device::stream`; another cudarc stream)
    ///   must be ordered by the caller: it waits for an [`Event`](crate::Event) recorded on
    ///   `scope.stream()` after the borrow, and `scope.stream()` waits for an event recorded
    ///   after that work before the scope ends (a host-blocking call such as `download`
    ///   completes before it returns, so only the first half applies to it).
    ///
    /// Otherwise a kernel may run before cudarc's allocation or writes of the memory have
    /// completed, or after cudarc has freed the memory and handed it to another allocation.
    /// With cudarc's event tracking off (`CudaContext::disable_event_tracking`, an `unsafe` call
    /// whose contract this inherits), ordering with cudarc's other work on the memory is the
    /// caller's, as for cudarc's own launches.
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub unsafe fn cudarc_scope_on_stream<'env, F, R>(
        &self,
        stream: &'env CudaStream,
        f: F,
    ) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope CudarcScope<'scope, 'env>) -> Result<R>,
    {
        // SAFETY: the caller's contract.
        unsafe { run_scope(self, stream, false, "Device::cudarc_scope_on_stream", f) }
    }
}

/// # Safety
///
/// With `synchronize == false`, the contract of [`Device::cudarc_scope_on_stream`].
unsafe fn run_scope<'env, F, R>(
    dev: &Device,
    stream: &'env CudaStream,
    synchronize: bool,
    op: &'static str,
    f: F,
) -> Result<R>
where
    F: for<'scope> FnOnce(&'scope CudarcScope<'scope, 'env>) -> Result<R>,
{
    check_context(dev, stream.context(), "the cudarc stream", op)?;
    let capturing = stream.capture_status().map_err(cudarc_err(format!(
        "{op}: querying the cudarc stream's capture status"
    )))?;
    if capturing != CaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
        // Work captured into a graph runs when the graph is launched, which neither cudarc's
        // events nor the scope's synchronisation order.
        return Err(crate::cuda::driver_error(
            STREAM_CAPTURE_UNSUPPORTED,
            format!("{op}: the cudarc stream is capturing a CUDA graph"),
        ));
    }
    // SAFETY: as in `Stream::from_cudarc`: a live stream of `dev`'s context, borrowed for 'env.
    let tilus_stream = unsafe { Stream::checked_raw(dev, stream.cu_stream().cast(), op) }?;
    let scope = CudarcScope {
        dev: dev.clone(),
        cudarc_stream: stream,
        stream: tilus_stream,
        end: End {
            dev: dev.clone(),
            ctx: stream.context(),
            synchronize,
            records: Mutex::new(Vec::new()),
        },
        _scope: PhantomData,
        _env: PhantomData,
    };
    let result = f(&scope);
    // Not reached when `f` panics: then `End`'s drop ends the scope during unwinding.
    let ended = scope.end.finish();
    let value = result?;
    ended?;
    Ok(value)
}

/// The scope of [`Device::cudarc_scope`] (and of the `unsafe`
/// [`Device::cudarc_scope_on_stream`]): borrows cudarc memory as [`TensorView`]s for kernels
/// launched on [`stream`](Self::stream), and ends the borrows when the scope ends.
///
/// The views live as long as the scope's closure (`'scope`); the memory stays borrowed for
/// `'env`, which outlasts the call, so cudarc can neither free it nor (for a mutable borrow)
/// use it until the scope has ended.
pub struct CudarcScope<'scope, 'env: 'scope> {
    dev: Device,
    cudarc_stream: &'env CudaStream,
    stream: Stream<'env>,
    end: End<'env>,
    /// Invariant in both lifetimes, as `std::thread::Scope`: a scope cannot be passed off as
    /// one that lives longer (or borrows for shorter).
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// The end of a scope: cudarc's guards of the borrows, dropped (recording cudarc's events)
/// after a synchronisation of the context in a synchronising scope. Run by `finish` on the
/// normal path and by `Drop` when the closure unwinds.
struct End<'env> {
    dev: Device,
    ctx: &'env Arc<CudaContext>,
    synchronize: bool,
    records: Mutex<Vec<SyncOnDrop<'env>>>,
}

impl End<'_> {
    fn finish(&self) -> Result<()> {
        let records = std::mem::take(&mut *lock(&self.records));
        if records.is_empty() {
            return Ok(());
        }
        let waited = if self.synchronize {
            self.dev.synchronize()
        } else {
            Ok(())
        };
        drop(records); // cudarc records the `read` / `write` events on the stream
        waited?;
        // Errors of those records (cudarc keeps them in the context until asked).
        self.ctx.check_err().map_err(cudarc_err(
            "ending a cudarc scope (recording cudarc's events)",
        ))
    }
}

impl Drop for End<'_> {
    fn drop(&mut self) {
        let records = std::mem::take(self.records.get_mut().unwrap_or_else(|p| p.into_inner()));
        if self.synchronize && !records.is_empty() {
            let _ = self.dev.synchronize(); // errors: the context is unusable anyway
        }
        drop(records);
    }
}

impl<'scope, 'env> CudarcScope<'scope, 'env> {
    /// The tilus stream of the scope's cudarc stream: launch kernels on the views with
    /// `k::launch_on(scope.stream(), grid, ..)`.
    pub fn stream(&self) -> &Stream<'env> {
        &self.stream
    }

    /// The scope's cudarc stream.
    pub fn cudarc_stream(&self) -> &'env CudaStream {
        self.cudarc_stream
    }

    /// The tilus device of the scope.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// Borrow cudarc memory (`&CudaSlice<T>`, `&CudaView<T>`, `&CudaViewMut<T>`) as a view of
    /// its elements, for kernels that read it (see [`Device::cudarc_scope`] for the ordering:
    /// the scope's stream waits for cudarc's pending writes of the memory, and cudarc's later
    /// writes and free wait for the scope). A range of it: [`TensorView::view`], or borrow a
    /// `CudaView` made before the scope (`slice.slice(a..b)`).
    pub fn borrow<S>(&'scope self, mem: &'env S) -> Result<TensorView<'scope, S::Elem>>
    where
        S: CudarcMemory,
        S::Elem: Element,
    {
        const OP: &str = "CudarcScope::borrow";
        self.check_memory(mem.cudarc_context(), OP)?;
        let (ptr, record) = mem.read_ptr(self.cudarc_stream);
        self.admit(ptr, mem.elements(), record, OP)
    }

    /// Borrow cudarc memory (`&mut CudaSlice<T>`, `&mut CudaViewMut<T>`) as a view, for
    /// kernels that write it: the scope's stream waits for cudarc's pending reads and writes,
    /// and cudarc's later reads, writes and free wait for the scope.
    pub fn borrow_mut<S>(&'scope self, mem: &'env mut S) -> Result<TensorView<'scope, S::Elem>>
    where
        S: CudarcMemoryMut,
        S::Elem: Element,
    {
        const OP: &str = "CudarcScope::borrow_mut";
        self.check_memory(mem.cudarc_context(), OP)?;
        let len = mem.elements();
        let (ptr, record) = mem.write_ptr(self.cudarc_stream);
        self.admit(ptr, len, record, OP)
    }

    /// [`borrow`](Self::borrow), viewing the memory's bytes as elements of `U`: a
    /// `CudaSlice<u16>` of bf16 bit patterns as `bf16`, a `CudaSlice<u8>` of `4n` bytes as `n`
    /// `f32`s. Both types are [`PlainElement`]s (every bit pattern is a value of each, so
    /// neither side can see an invalid value; `bool` is excluded). [`Error::ElementSize`] if
    /// the memory's bytes are not a whole number of `U`s. Alignment is checked at launch
    /// ([`Error::Misaligned`]).
    pub fn borrow_as<U: PlainElement>(
        &'scope self,
        mem: &'env impl CudarcMemory<Elem: PlainElement>,
    ) -> Result<TensorView<'scope, U>> {
        const OP: &str = "CudarcScope::borrow_as";
        self.check_memory(mem.cudarc_context(), OP)?;
        let len = reinterpreted_len::<_, U>(mem, OP)?;
        let (ptr, record) = mem.read_ptr(self.cudarc_stream);
        self.admit(ptr, len, record, OP)
    }

    /// [`borrow_mut`](Self::borrow_mut), viewing the memory's bytes as elements of `U` (as
    /// [`borrow_as`](Self::borrow_as)).
    pub fn borrow_mut_as<U: PlainElement>(
        &'scope self,
        mem: &'env mut impl CudarcMemoryMut<Elem: PlainElement>,
    ) -> Result<TensorView<'scope, U>> {
        const OP: &str = "CudarcScope::borrow_mut_as";
        self.check_memory(mem.cudarc_context(), OP)?;
        let len = reinterpreted_len::<_, U>(&*mem, OP)?;
        let (ptr, record) = mem.write_ptr(self.cudarc_stream);
        self.admit(ptr, len, record, OP)
    }

    /// Checks of memory of `ctx` before it is touched.
    fn check_memory(&self, ctx: &Arc<CudaContext>, op: &'static str) -> Result<()> {
        check_context(&self.dev, ctx, "the cudarc memory", op)?;
        if !Arc::ptr_eq(ctx, self.cudarc_stream.context()) {
            return Err(Error::DeviceMismatch {
                op,
                a: "the cudarc memory (of another `CudaContext` object than the scope's \
                    stream; cudarc tracks events per object: use one `Arc<CudaContext>`)"
                    .into(),
                b: self.dev.describe(),
            });
        }
        Ok(())
    }

    /// Keep cudarc's guard `record` until the scope ends and make the view of `len` elements
    /// at `ptr`.
    fn admit<T: Element>(
        &'scope self,
        ptr: u64,
        len: usize,
        record: SyncOnDrop<'env>,
        op: &'static str,
    ) -> Result<TensorView<'scope, T>> {
        // Errors of the stream's waits for cudarc's events (cudarc keeps them in the context).
        let waited = self.end.ctx.check_err();
        // Recorded at the end of the scope even if this borrow fails below.
        lock(&self.end.records).push(record);
        waited.map_err(cudarc_err(format!(
            "{op}: ordering the stream after cudarc's pending work on the memory"
        )))?;
        if self.end.synchronize {
            // Nothing cudarc (or anyone) issued before this point is still pending, whatever
            // stream the view is used on.
            self.dev.synchronize()?;
        }
        // SAFETY: `ptr` and `len` come from one of cudarc's memory types (sealed), which hold
        // `len` live elements of `Elem` there, initialised as cudarc's safe API requires, in the
        // context checked to be `dev`'s (and `checked_raw` asks the driver that `ptr` is memory
        // of `dev`'s GPU). The view's `len` is that many elements of `T`: `T` is `Elem`, or
        // both are plain types and `len` is the byte length over `size_of::<T>()`. The memory
        // is borrowed for 'env, which outlives the view ('scope) and the end of the scope, so
        // it is not freed or (when borrowed mutably) used by cudarc meanwhile. Ordering with
        // device work: in a synchronising scope, the synchronisation above (nothing pending) and
        // at the end of the scope (nothing left running); in a stream-ordered scope, the
        // caller's contract of `cudarc_scope_on_stream`.
        unsafe { TensorView::checked_raw(&self.dev, ptr, len, op) }
    }
}

/// The number of `U`s in `mem`'s bytes, or [`Error::ElementSize`].
fn reinterpreted_len<M, U>(mem: &M, op: &'static str) -> Result<usize>
where
    M: sealed::Memory + ?Sized,
    M::Elem: PlainElement,
    U: PlainElement,
{
    let bytes = mem.elements() * std::mem::size_of::<M::Elem>();
    let size = std::mem::size_of::<U>();
    if !bytes.is_multiple_of(size) {
        return Err(Error::ElementSize {
            op,
            bytes,
            from: <M::Elem as Element>::DTYPE,
            to: U::DTYPE,
        });
    }
    Ok(bytes / size)
}

impl fmt::Debug for CudarcScope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudarcScope")
            .field("device", &self.dev.describe())
            .field("stream", &self.stream)
            .field("synchronizing", &self.end.synchronize)
            .field("borrows", &lock(&self.end.records).len())
            .finish()
    }
}
