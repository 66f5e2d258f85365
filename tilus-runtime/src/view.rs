//! [`TensorView`]: device memory the runtime borrows instead of owning.

use crate::device::Device;
#[cfg(feature = "cuda")]
use crate::error::Error;
use crate::error::Result;
use crate::tensor::{Element, MemRef, TensorRef};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

/// A borrowed one-dimensional tensor of `T`: a range of a [`GlobalTensor`](crate::GlobalTensor)
/// ([`GlobalTensor::view`](crate::GlobalTensor::view)) or, with feature `cuda`, a `cust`
/// buffer (`TensorView::from_cust`) or any device memory by address (`TensorView::from_raw`,
/// `unsafe`), or, with feature `cudarc`, a cudarc `CudaSlice` (`Device::cudarc_scope`).
/// Kernels accept it wherever they accept a `GlobalTensor<T>` (both are
/// [`AsTensor<T>`](crate::AsTensor)); they read and write the borrowed memory in place, with no
/// copy. Dropping a view frees nothing.
///
/// **Other libraries' memory.** Two owners have safe borrows, each with a round trip that
/// checks the device pointer is the same before and after (no copy): `cust`'s `DeviceBuffer`,
/// the library the GPU backend is built on (`TensorView::with_cust`, version pinned by
/// `tilus::cust`; `examples/borrowed_memory.rs`), and, with feature `cudarc`, cudarc's
/// `CudaSlice`, `CudaView` and `CudaViewMut` (version pinned by `tilus::cudarc`;
/// `examples/cudarc_interop.rs`). cudarc tracks each use of a slice with events
/// (`SyncOnDrop`), so its memory is borrowed inside a scope (`Device::cudarc_scope`) rather
/// than by a constructor: borrowing makes the scope's cudarc stream wait for cudarc's pending
/// work on the memory, and the end of the scope records cudarc's events after the kernels, so
/// cudarc's later work and its stream-ordered free wait for them. Because a view can be
/// launched on any stream, the safe scope also synchronises the device when it borrows and when
/// it ends; the `unsafe` `Device::cudarc_scope_on_stream` relies on stream order instead. A
/// scope rather than a guard value, because the end of a borrow must run and safe code may
/// `mem::forget` a guard. Memory of any other owner (a framework's tensor, a DLPack
/// `DLTensor`'s `data` pointer) goes through the unsafe `from_raw`, whose contract states what
/// a safe borrow cannot check across libraries; a DLPack import would add a C ABI surface with
/// no library here to test it against.
///
/// The lifetime `'a` is the borrow of the memory's owner. A kernel launched on a view may
/// still be running when the borrow ends; what keeps the memory alive until it finishes is
/// that freeing device memory waits for the device: a `GlobalTensor`'s drop synchronises the
/// context, and `cuMemFree` (behind cust's synchronous free) waits for the work of the device
/// before it releases memory. A stream-ordered free (cust's `DeviceBuffer::drop_async`,
/// `cuMemFreeAsync` behind cudarc's `CudaSlice` drop on GPUs with memory pools) does not wait,
/// so the safe borrows end by waiting for the work: `TensorView::with_cust` synchronises the
/// device at the end of its scope, `Device::cudarc_scope` records cudarc's events after the
/// kernels. The constructors that do not (`from_cust`, `from_raw`) are `unsafe`.
///
/// Two views (or a view and a tensor) passed to one launch may overlap, as one tensor may be
/// passed twice; elements a kernel writes through one and reads or writes through the other
/// then race like any unsynchronised accesses of a kernel (unspecified values, no undefined
/// behaviour on the host).
///
/// ```
/// use tilus_runtime::Device;
/// # fn main() -> tilus_runtime::Result<()> {
/// let dev = Device::emulator();
/// let t = dev.upload(&(0..64).collect::<Vec<i32>>())?;
/// let v = t.view(16..48)?; // borrows `t`: no copy
/// assert_eq!(v.len(), 32);
/// assert_eq!(v.download()?[0], 16);
/// let w = v.view(8..12)?; // a view of a view
/// assert_eq!(w.download()?, vec![24, 25, 26, 27]);
/// # Ok(()) }
/// ```
pub struct TensorView<'a, T: Element> {
    dev: Device,
    len: usize,
    mem: MemRef<'a>,
    _t: PhantomData<&'a [T]>,
}

impl<'a, T: Element> TensorView<'a, T> {
    pub(crate) fn from_parts(dev: Device, len: usize, mem: MemRef<'a>) -> Self {
        TensorView {
            dev,
            len,
            mem,
            _t: PhantomData,
        }
    }

    buffer_accessors!("the view", "The device whose memory the view borrows.");

    /// Copy the elements to the host (ordered like
    /// [`GlobalTensor::download`](crate::GlobalTensor::download)).
    pub fn download(&self) -> Result<Vec<T>> {
        self.as_ref_arg().download()
    }

    /// Overwrite the elements with `data` of the same length (ordered like
    /// [`GlobalTensor::copy_from_host`](crate::GlobalTensor::copy_from_host)).
    pub fn copy_from_host(&self, data: &[T]) -> Result<()> {
        self.as_ref_arg().upload(data, "TensorView::copy_from_host")
    }

    /// Elements `range` of this view, as a view ([`Error::OutOfRange`](crate::Error::OutOfRange)
    /// if the range is not inside it).
    pub fn view(&self, range: Range<usize>) -> Result<TensorView<'_, T>> {
        let (len, mem) = self.as_ref_arg().sub(range, "TensorView::view")?;
        Ok(TensorView::from_parts(self.dev.clone(), len, mem))
    }

    /// The address of the first element (see
    /// [`GlobalTensor::address`](crate::GlobalTensor::address)).
    pub fn address(&self) -> u64 {
        self.as_ref_arg().address()
    }

    /// The device address of the first element on a CUDA device (`None` on the emulator).
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn device_ptr(&self) -> Option<u64> {
        match self.mem {
            MemRef::Cuda(ptr) => Some(ptr),
            MemRef::Emu(..) => None,
        }
    }

    pub(crate) fn as_ref_arg(&self) -> TensorRef<'_> {
        TensorRef {
            dtype: T::DTYPE,
            len: self.len,
            device: &self.dev,
            mem: self.mem,
        }
    }

    /// Borrow a `cust` device buffer as a view of `dev` for the duration of `f`: no copy, no
    /// transfer of ownership (use [`view`](Self::view) for a range of it). Kernels may write
    /// the buffer through the view, as they write a `GlobalTensor` passed by shared reference.
    ///
    /// The scope ends by waiting for the device (also when `f` fails or unwinds), so no work
    /// that uses the view is in flight once `buf` may be freed again, by any of cust's frees:
    /// a stream-ordered `DeviceBuffer::drop_async` on another stream would otherwise free the
    /// memory under a running kernel. The view cannot leave `f` (its lifetime is `f`'s own).
    /// [`from_cust`](Self::from_cust) is the same borrow without the wait, for callers that
    /// order the free themselves.
    ///
    /// [`Error::WrongBackend`] on the emulator; [`Error::DeviceMismatch`] if the memory is not
    /// of `dev`'s context. If `f` returns an error it is returned (after the wait); otherwise
    /// an error of the wait is.
    ///
    /// ```ignore
    /// use tilus::cust::memory::DeviceBuffer;
    /// let buf = DeviceBuffer::from_slice(&data)?;
    /// tilus::TensorView::with_cust(&dev, &buf, |v| my_kernel::launch(&dev, blocks, v))?;
    /// ```
    ///
    /// Why a `DeviceBuffer` and not a `DeviceSlice`: in cust 0.3 a `DeviceSlice` is a `Copy`
    /// value (a pointer and a length) that safe code can keep after its buffer is freed
    /// (`buf.index(..)` returns one by value), so a borrow of a slice does not prove the memory
    /// is alive; a borrow of the owning buffer does. Slices of other origin go through
    /// [`from_raw`](Self::from_raw), whose contract says what the borrow cannot.
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn with_cust<R>(
        dev: &Device,
        buf: &cust::memory::DeviceBuffer<T>,
        f: impl for<'v> FnOnce(&TensorView<'v, T>) -> Result<R>,
    ) -> Result<R>
    where
        T: cust::memory::DeviceCopy,
    {
        /// Waits for the device when the scope ends, unwinding included.
        struct WaitAtEnd<'d>(&'d Device);
        impl Drop for WaitAtEnd<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    let _ = self.0.synchronize();
                }
            }
        }
        // SAFETY: the view lives only inside `f` (which must accept a view of any lifetime, so
        // it cannot keep this one), and the device has finished all work, whatever stream it
        // is on, before this function returns or unwinds, so `buf` is neither freed nor
        // reused while work through the view is in flight.
        let view = unsafe { TensorView::from_cust(dev, buf)? };
        let guard = WaitAtEnd(dev);
        let r = f(&view);
        drop(view);
        let waited = dev.synchronize();
        std::mem::forget(guard);
        let r = r?;
        waited?;
        Ok(r)
    }

    /// Borrow a `cust` device buffer as a view of `dev`, for as long as the borrow lasts, with
    /// no wait at its end (see [`with_cust`](Self::with_cust), the safe form).
    ///
    /// [`Error::WrongBackend`] on the emulator; [`Error::DeviceMismatch`] if the memory is not
    /// of `dev`'s context.
    ///
    /// # Safety
    ///
    /// `buf` must not be freed, nor its memory reused, until all work issued through the view
    /// (or a view of it) has completed, on every stream. The borrow `'a` keeps safe code from
    /// dropping the buffer while the view exists, and cust's synchronous free (`DeviceBuffer`'s
    /// `Drop`, `cuMemFree`) waits for the device; but cust's `DeviceBuffer::drop_async` on a
    /// stream that is not ordered after that work frees the memory while kernels may still
    /// use it. Synchronise (the device, or the freeing stream with an event after the work)
    /// before such a free.
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub unsafe fn from_cust(dev: &Device, buf: &'a cust::memory::DeviceBuffer<T>) -> Result<Self>
    where
        T: cust::memory::DeviceCopy,
    {
        let ptr = buf.as_device_ptr().as_raw();
        if !buf.is_empty() {
            // cust allocates in its current context: it must be `dev`'s for kernels to reach it.
            if let crate::device::Backend::Cuda(c) = &dev.inner.backend {
                c.check_owns(ptr, "TensorView::from_cust")?;
            }
        }
        // SAFETY: a live `DeviceBuffer` owns `buf.len()` elements of `T` at `ptr` (allocated by
        // cuMemAlloc in `dev`'s context, checked above: aligned, initialised as cust requires
        // of its buffers); the borrow `'a` keeps safe code from dropping it, and the caller
        // promises no stream-ordered free before the view's work completes.
        unsafe { Self::checked_raw(dev, ptr, buf.len(), "TensorView::from_cust") }
    }

    /// A view of `len` elements of `T` at device address `ptr` of `dev`'s GPU, for memory
    /// owned by code outside tilus (another library, a framework's tensor, a raw
    /// `cuMemAlloc`). tilus checks that `dev` is a GPU ([`Error::WrongBackend`]) and, for a
    /// non-empty view, that the driver knows `ptr` as memory of that GPU
    /// ([`Error::DeviceMismatch`], or the driver's error for an address it does not know).
    ///
    /// # Safety
    ///
    /// The caller promises, for the whole lifetime `'a` **and** until all work issued through
    /// the view has completed:
    ///
    /// * **Extent**: `ptr..ptr + len * size_of::<T>()` lies inside one live device allocation
    ///   (tilus does not check the extent; kernels access every element `0..len` they are asked
    ///   to, and a view longer than its memory makes them read or write other allocations, or
    ///   fault with [`Error::IllegalAddress`] and poison the context).
    /// * **Lifetime**: the memory is not freed or reused while `'a` lasts or work issued
    ///   through the view (on any stream) has not finished; choose `'a` no longer than the
    ///   owner's borrow (a `PhantomData` of it, or a reference you keep).
    /// * **Device and context**: the memory is accessible from `dev`'s context (the primary
    ///   context of its GPU; memory of another GPU, or of a context that is destroyed, is not).
    /// * **Contents**: every element is initialised; any bit pattern is accepted for the numeric
    ///   types, a `bool` view must hold bytes 0 or 1 (the kernels' `bool` loads assume so).
    /// * **Exclusivity**: nothing else writes the memory concurrently with a kernel that uses
    ///   the view unless that kernel's own accesses are atomic or disjoint from those writes
    ///   (the same rule as for two kernels of tilus sharing a tensor); overlapping views passed
    ///   to one launch follow the rule of [`TensorView`].
    ///
    /// Alignment is checked at launch: kernels use 16-byte vector accesses, so a view whose
    /// `ptr` is not a multiple of 16 is rejected with [`Error::Misaligned`] (not undefined
    /// behaviour).
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub unsafe fn from_raw(dev: &Device, ptr: u64, len: usize) -> Result<Self> {
        // SAFETY: the caller's contract.
        unsafe { Self::checked_raw(dev, ptr, len, "TensorView::from_raw") }
    }

    /// [`from_raw`](Self::from_raw) with `op` naming the operation in errors.
    ///
    /// # Safety
    ///
    /// As for [`from_raw`](Self::from_raw).
    #[cfg(feature = "cuda")]
    pub(crate) unsafe fn checked_raw(
        dev: &Device,
        ptr: u64,
        len: usize,
        op: &'static str,
    ) -> Result<Self> {
        let cuda = match &dev.inner.backend {
            crate::device::Backend::Cuda(c) => c,
            crate::device::Backend::Emu(_) => {
                return Err(Error::WrongBackend {
                    op,
                    needed: "CUDA",
                    device: dev.describe(),
                })
            }
        };
        if len > 0 {
            cuda.check_device_memory(ptr, op)?;
        }
        Ok(TensorView::from_parts(dev.clone(), len, MemRef::Cuda(ptr)))
    }
}

impl<T: Element> fmt::Debug for TensorView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorView")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len)
            .field("device", &self.dev.describe())
            .field("address", &format_args!("{:#x}", self.address()))
            .finish()
    }
}
