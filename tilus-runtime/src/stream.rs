//! [`Stream`]: an ordered queue of device work that may overlap with other streams.

use crate::device::Device;
use crate::error::Result;
use crate::event::Event;
use crate::spec::{AsTensor, KernelArg, KernelSpec};
use crate::tensor::Element;
use std::fmt;
use std::marker::PhantomData;
use tilus_core::ir::Grid;

/// A stream of a [`Device`]: launches, copies and event records issued to it run in issue
/// order; work of different streams may run concurrently (a copy overlapping a kernel, two
/// kernels sharing the GPU). Created by [`Device::stream`]; [`Device::default_stream`] is the
/// stream of [`Device::launch`] and the blocking calls; with feature `cuda`, a user's cust
/// stream is borrowed with `Stream::borrow_cust`, a raw `CUstream` with the unsafe
/// `Stream::from_raw` (a stream of another library).
///
/// **Launching on a stream.** Each `#[tile_kernel]` has `k::launch_on(&stream, grid, args..)`
/// next to `k::launch(&dev, grid, args..)`, and [`Stream::launch`] takes a `KernelSpec` like
/// [`Device::launch`]. A second generated function rather than a builder
/// (`k::launch(..).stream(&s)`): the two calls differ in one argument and nothing else, the
/// argument list keeps its types and spans at the call site in both, and nothing is left to
/// forget (a builder needs a final `.run()`, or launches in a `Drop` that cannot report
/// errors).
///
/// **Ordering.** Streams created by [`Device::stream`] are *blocking* streams: on a GPU, CUDA
/// orders them with the legacy default stream that [`Device::launch`],
/// [`GlobalTensor::download`](crate::GlobalTensor::download) and the other calls without a
/// stream use, so those see everything issued to these streams before them, and work issued
/// to a stream after them starts after them. Between two streams there is no order: use
/// [`Event`]s ([`Event::record`], [`Stream::wait_event`]) or synchronise. A borrowed
/// non-blocking stream (cudarc creates those) is not ordered with the default stream either.
///
/// **On the emulator** each operation runs to completion when it is issued, in issue order;
/// [`synchronize`](Self::synchronize) returns at once and an event holds the host time of its
/// recording. That is one of the executions CUDA allows (it promises order within a stream and
/// nothing about overlap), so a program whose results are right on a GPU for every allowed
/// overlap gives the same results on the emulator; the emulator does not detect missing
/// synchronisation between streams, and kernel errors are reported by the launch rather than
/// by a later synchronising call.
///
/// ```
/// use tilus_runtime::Device;
/// # fn main() -> tilus_runtime::Result<()> {
/// let dev = Device::emulator();
/// let (s1, s2) = (dev.stream()?, dev.stream()?);
/// let a = dev.zeros::<i32>(1024)?;
/// let b = dev.zeros::<i32>(1024)?;
/// let host = dev.host_buffer_from(&vec![7; 1024])?; // pinned on a GPU
/// let pending = s1.upload(host, &a)?; // asynchronous: `host` is held until complete
/// let copied = dev.event()?;
/// copied.record(&s1)?;
/// s2.wait_event(&copied)?; // s2's later work waits for the upload
/// s2.copy(&a, &b)?;
/// let host = pending.wait()?; // the buffer comes back once the copy is done
/// s2.synchronize()?;
/// assert_eq!(b.download()?, vec![7; 1024]);
/// assert_eq!(host.len(), 1024);
/// # Ok(()) }
/// ```
pub struct Stream<'a> {
    pub(crate) dev: Device,
    pub(crate) kind: StreamKind,
    /// A borrowed stream borrows its owner for `'a`.
    _borrow: PhantomData<&'a ()>,
}

/// Which stream.
pub(crate) enum StreamKind {
    /// The device's default stream (the legacy default stream on a GPU).
    Default,
    /// The emulator's queue (operations run when issued).
    Emu,
    /// A CUDA stream, destroyed on drop if `owned`.
    #[cfg(feature = "cuda")]
    Cuda {
        raw: crate::cuda::ffi::CUstream,
        owned: bool,
    },
}

// SAFETY: a CUstream is an opaque driver handle usable from any thread (the driver API is
// thread-safe; every use makes the device's context current first); borrowed handles are only
// used while the borrow lasts.
unsafe impl Send for StreamKind {}
// SAFETY: as above; `StreamKind` has no interior mutability.
unsafe impl Sync for StreamKind {}

impl StreamKind {
    /// The raw stream for the CUDA backend (null: the legacy default stream).
    #[cfg(feature = "cuda")]
    pub(crate) fn raw(&self) -> crate::cuda::ffi::CUstream {
        match self {
            StreamKind::Cuda { raw, .. } => *raw,
            StreamKind::Default | StreamKind::Emu => crate::cuda::DEFAULT_STREAM,
        }
    }
}

impl Stream<'static> {
    /// A new stream of `dev` (blocking: ordered with the default stream).
    pub(crate) fn new(dev: &Device) -> Result<Stream<'static>> {
        let kind = match &dev.inner.backend {
            crate::device::Backend::Emu(_) => StreamKind::Emu,
            #[cfg(feature = "cuda")]
            crate::device::Backend::Cuda(c) => {
                c.make_current()?;
                let mut raw: crate::cuda::ffi::CUstream = std::ptr::null_mut();
                // SAFETY: out-pointer to a local; the context is current.
                crate::cuda::check(
                    unsafe {
                        crate::cuda::ffi::stream_create(&mut raw, crate::cuda::ffi::STREAM_DEFAULT)
                    },
                    || format!("creating a stream on {}", c.describe()),
                )?;
                StreamKind::Cuda { raw, owned: true }
            }
        };
        Ok(Stream::of(dev, kind))
    }

    pub(crate) fn default_of(dev: &Device) -> Stream<'static> {
        Stream::of(dev, StreamKind::Default)
    }
}

impl<'a> Stream<'a> {
    pub(crate) fn of(dev: &Device, kind: StreamKind) -> Stream<'a> {
        Stream {
            dev: dev.clone(),
            kind,
            _borrow: PhantomData,
        }
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// Launch `spec` over `grid` on this stream, validated as by [`Device::launch`] (on the
    /// stream's device). Launchers generated by `#[tile_kernel]` call this from
    /// `k::launch_on(&stream, grid, ..)`.
    pub fn launch(
        &self,
        spec: &'static KernelSpec,
        grid: impl Into<Grid>,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        self.dev.launch_on(spec, grid.into(), args, &self.kind)
    }

    /// Wait until the work issued to this stream so far has finished.
    pub fn synchronize(&self) -> Result<()> {
        match &self.kind {
            StreamKind::Emu => Ok(()),
            #[cfg(not(feature = "cuda"))]
            StreamKind::Default => Ok(()),
            #[cfg(feature = "cuda")]
            StreamKind::Default | StreamKind::Cuda { .. } => match self.dev.cuda_backend() {
                Ok(c) => c.stream_synchronize(self.kind.raw(), "Stream::synchronize"),
                Err(_) => Ok(()), // the emulator's default stream
            },
        }
    }

    /// Make work issued to this stream after this call wait until `event` has completed (its
    /// last [`record`](Event::record)). Does not block the host.
    /// [`Error::EventNotRecorded`](crate::Error::EventNotRecorded) if it was never recorded;
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for an event of another device.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        event.wait_on(self)
    }

    /// Device-to-device copy of `src` into `dst` on this stream (equal lengths, both on the
    /// stream's device; tensors or views); asynchronous on a GPU.
    pub fn copy<T: Element>(&self, src: &impl AsTensor<T>, dst: &impl AsTensor<T>) -> Result<()> {
        self.dev.copy_on(src, dst, &self.kind, "Stream::copy")
    }

    /// Borrow a cust stream of `dev`'s context (for as long as the borrow lasts), to launch
    /// tilus kernels and copies on it ordered with the user's own work there.
    /// [`Error::WrongBackend`](crate::Error::WrongBackend) on the emulator,
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for a stream of another context.
    ///
    /// ```ignore
    /// let theirs = cust::stream::Stream::new(cust::stream::StreamFlags::DEFAULT, None)?;
    /// let s = tilus::Stream::borrow_cust(&dev, &theirs)?;
    /// my_kernel::launch_on(&s, blocks, &x)?;
    /// theirs.synchronize()?;
    /// ```
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn borrow_cust(dev: &Device, stream: &'a cust::stream::Stream) -> Result<Stream<'a>> {
        // SAFETY: a live cust stream, kept alive by the borrow `'a`.
        unsafe { Stream::checked_raw(dev, stream.as_inner(), "Stream::borrow_cust") }
    }

    /// Use raw stream `stream` of `dev`'s context (from another library: a cudarc
    /// `CudaStream::cu_stream()`, a framework's current stream), without taking ownership: it
    /// is not destroyed when the `Stream` drops. [`Error::WrongBackend`](crate::Error::WrongBackend)
    /// on the emulator, [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) (checked with
    /// `cuStreamGetCtx`) for a stream of another context. A null `stream` is the legacy default
    /// stream.
    ///
    /// # Safety
    ///
    /// `stream` must be a valid stream handle that stays alive (is not destroyed) for `'a` and
    /// until the work tilus issues to it has completed. tilus issues work to it (launches,
    /// copies, event records, waits) but never destroys it.
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub unsafe fn from_raw(dev: &Device, stream: cust::sys::CUstream) -> Result<Stream<'a>> {
        // SAFETY: the caller's contract.
        unsafe { Stream::checked_raw(dev, stream, "Stream::from_raw") }
    }

    /// # Safety
    ///
    /// As for [`from_raw`](Self::from_raw).
    #[cfg(feature = "cuda")]
    pub(crate) unsafe fn checked_raw(
        dev: &Device,
        raw: crate::cuda::ffi::CUstream,
        op: &'static str,
    ) -> Result<Stream<'a>> {
        let c = match &dev.inner.backend {
            crate::device::Backend::Cuda(c) => c,
            crate::device::Backend::Emu(_) => {
                return Err(crate::Error::WrongBackend {
                    op,
                    needed: "CUDA",
                    device: dev.describe(),
                })
            }
        };
        if raw.is_null() {
            return Ok(Stream::of(dev, StreamKind::Default));
        }
        c.check_stream(raw, op)?;
        Ok(Stream::of(dev, StreamKind::Cuda { raw, owned: false }))
    }

    /// The raw `CUstream` (null for the default stream; `None` on the emulator), to issue a
    /// user's own driver work in order with tilus's.
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn as_raw(&self) -> Option<cust::sys::CUstream> {
        self.dev.is_gpu().then(|| self.kind.raw())
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        #[cfg(feature = "cuda")]
        if let (StreamKind::Cuda { raw, owned: true }, Ok(c)) =
            (&self.kind, self.dev.cuda_backend())
        {
            if c.make_current().is_ok() {
                // SAFETY: our own stream, not used after this. Work still queued on it runs to
                // completion; the driver releases the stream afterwards.
                unsafe { crate::cuda::ffi::stream_destroy(*raw) };
            }
        }
    }
}

impl fmt::Debug for Stream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            StreamKind::Default => "default".to_string(),
            StreamKind::Emu => "emulator".to_string(),
            #[cfg(feature = "cuda")]
            StreamKind::Cuda { raw, owned } => {
                format!("{:p}{}", *raw, if *owned { "" } else { " (borrowed)" })
            }
        };
        f.debug_struct("Stream")
            .field("device", &self.dev.describe())
            .field("stream", &kind)
            .finish()
    }
}
