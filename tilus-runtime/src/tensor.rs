//! Device memory: [`GlobalTensor`] and its element types.

#[cfg(feature = "cuda")]
use crate::device::Backend;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::view::TensorView;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
use tilus_core::emu::GlobalMem;
use tilus_core::ir::DType;

#[cfg(feature = "cuda")]
use cust::memory::DeviceBuffer;

pub(crate) mod sealed {
    /// Conversion to and from the bit pattern kept in memory (`tilus_core::elem`).
    pub trait Sealed: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
        fn to_bits(self) -> u64;
        fn from_bits(bits: u64) -> Self;
    }
    impl<T: tilus_core::elem::Elem + Default + PartialEq + std::fmt::Debug> Sealed for T {
        fn to_bits(self) -> u64 {
            tilus_core::elem::Elem::to_bits(self)
        }
        fn from_bits(bits: u64) -> Self {
            <T as tilus_core::elem::Elem>::from_bits(bits)
        }
    }
}

/// A type that can be an element of a [`GlobalTensor`] or a scalar kernel argument. Sealed;
/// implemented for `bool`, `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64`, `u64`, `f32`, `f64`
/// and the 16-bit floats of the `half` crate, [`half::f16`] and [`half::bf16`] (re-exported
/// as `tilus::f16` and `tilus::bf16`).
///
/// ```
/// use tilus_runtime::{DType, Element};
/// assert_eq!(<i32 as Element>::DTYPE, DType::I32);
/// assert_eq!(<half::bf16 as Element>::DTYPE, DType::BF16);
/// ```
pub trait Element: sealed::Sealed {
    /// The IR element type.
    const DTYPE: DType;
}

impl<T: sealed::Sealed + tilus_core::elem::Elem> Element for T {
    const DTYPE: DType = <T as tilus_core::elem::Elem>::DTYPE;
}

/// Emulator memory: one host atomic per element, of the element's width (kernels of many
/// blocks access it concurrently), starting on a 16 KiB boundary as a GPU allocation starts on
/// a 256-byte one: the race checker's shadow pages (`emu/race_global.rs`) are 16 KiB of
/// memory, so tiles line up with them.
pub(crate) struct EmuBuf {
    cells: Cells,
    /// The first element on the boundary, and the length.
    first: usize,
    len: usize,
}

enum Cells {
    W8(Box<[AtomicU8]>),
    W16(Box<[AtomicU16]>),
    W32(Box<[AtomicU32]>),
    W64(Box<[AtomicU64]>),
}

/// Bytes of the boundary emulator memory starts on.
const ALIGN: usize = 16384;

/// `len` cells from `make` and the first on an `ALIGN` boundary (up to `ALIGN` bytes more are
/// allocated to find it), or `None` if the host cannot allocate them.
fn cells<A>(len: usize, make: impl Fn() -> A) -> Option<(Box<[A]>, usize)> {
    let size = std::mem::size_of::<A>();
    let mut v = Vec::new();
    v.try_reserve_exact(len.checked_add(ALIGN / size)?).ok()?;
    // The whole capacity, so that boxing does not reallocate; the boundary is found after.
    v.extend((0..v.capacity()).map(|_| make()));
    let b = v.into_boxed_slice();
    let first = (ALIGN - b.as_ptr() as usize % ALIGN) % ALIGN / size;
    Some((b, first))
}

impl EmuBuf {
    /// `len` cells of `width` bytes holding `bits`, or `None` if the host is out of memory.
    pub(crate) fn filled(width: usize, len: usize, bits: u64) -> Option<EmuBuf> {
        let (cells, first) = match width {
            1 => cells(len, || AtomicU8::new(bits as u8)).map(|(c, f)| (Cells::W8(c), f))?,
            2 => cells(len, || AtomicU16::new(bits as u16)).map(|(c, f)| (Cells::W16(c), f))?,
            4 => cells(len, || AtomicU32::new(bits as u32)).map(|(c, f)| (Cells::W32(c), f))?,
            _ => cells(len, || AtomicU64::new(bits)).map(|(c, f)| (Cells::W64(c), f))?,
        };
        Some(EmuBuf { cells, first, len })
    }
    pub(crate) fn mem(&self) -> GlobalMem<'_> {
        let r = self.first..self.first + self.len;
        match &self.cells {
            Cells::W8(c) => GlobalMem::W8(&c[r]),
            Cells::W16(c) => GlobalMem::W16(&c[r]),
            Cells::W32(c) => GlobalMem::W32(&c[r]),
            Cells::W64(c) => GlobalMem::W64(&c[r]),
        }
    }
}

/// Elements `r` of emulator memory `m` (the caller checked the range).
pub(crate) fn sub_mem(m: GlobalMem<'_>, r: Range<usize>) -> GlobalMem<'_> {
    match m {
        GlobalMem::W8(c) => GlobalMem::W8(&c[r]),
        GlobalMem::W16(c) => GlobalMem::W16(&c[r]),
        GlobalMem::W32(c) => GlobalMem::W32(&c[r]),
        GlobalMem::W64(c) => GlobalMem::W64(&c[r]),
    }
}

/// Where a tensor's elements live.
pub(crate) enum Mem {
    Emu(EmuBuf),
    /// A CUDA allocation (`cuMemAlloc`; address 0 when empty), freed in `GlobalTensor::drop`
    /// with the device's context current.
    #[cfg(feature = "cuda")]
    Cuda(u64),
}

/// A one-dimensional tensor of `T` in the memory of a [`Device`]: GPU global memory, or host
/// memory for the emulator. It owns its memory, and its contents are always initialised.
///
/// Kernels take tensors by shared reference and may write them. Work issued without a stream
/// (launches, [`Device::copy`], [`download`](Self::download), ...) runs in issue order, after
/// the work issued before it to the device's blocking [`Stream`](crate::Stream)s; the
/// blocking calls ([`download`](Self::download), [`copy_from_host`](Self::copy_from_host))
/// return when they are complete. Dropping a tensor waits for all work of its device first.
///
/// [`view`](Self::view) borrows a range of it as a [`TensorView`], which kernels accept too.
///
/// ```
/// use tilus_runtime::Device;
/// # fn main() -> tilus_runtime::Result<()> {
/// let dev = Device::emulator();
/// let t = dev.upload(&[1, 2, 3])?;
/// assert_eq!(t.len(), 3);
/// t.copy_from_host(&[4, 5, 6])?;
/// assert_eq!(t.download()?, vec![4, 5, 6]);
/// let f = dev.upload(&[0.5f32, -1.0])?;
/// assert_eq!(f.download()?, vec![0.5, -1.0]);
/// # Ok(()) }
/// ```
pub struct GlobalTensor<T: Element> {
    dev: Device,
    len: usize,
    pub(crate) mem: Mem,
    _t: PhantomData<T>,
}

/// A borrowed, type-erased view of device memory for launches and copies. (Nominally `pub`
/// for the sealed [`AsTensor`](crate::AsTensor) trait's method; not reachable outside the
/// crate.)
#[derive(Clone, Copy)]
pub struct TensorRef<'a> {
    pub(crate) dtype: DType,
    pub(crate) len: usize,
    pub(crate) device: &'a Device,
    pub(crate) mem: MemRef<'a>,
}

impl fmt::Debug for TensorRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorRef")
            .field("dtype", &self.dtype)
            .field("len", &self.len)
            .field("device", &self.device.describe())
            .finish()
    }
}

/// Where the elements of a [`TensorRef`] are.
#[derive(Clone, Copy)]
pub enum MemRef<'a> {
    /// Emulator cells, and their byte offset into the tensor they belong to (the emulator's
    /// stand-in for an address, for the alignment rule).
    Emu(GlobalMem<'a>, u64),
    /// A device address.
    #[cfg(feature = "cuda")]
    Cuda(u64),
}

impl<'a> TensorRef<'a> {
    /// The address kernels' 16-byte alignment rule applies to.
    pub(crate) fn align_addr(&self) -> u64 {
        match self.mem {
            MemRef::Emu(_, offset) => offset,
            #[cfg(feature = "cuda")]
            MemRef::Cuda(ptr) => ptr,
        }
    }

    /// The address of the first element (a device address, or the emulator cells' host
    /// address).
    pub(crate) fn address(&self) -> u64 {
        match self.mem {
            MemRef::Emu(m, _) => match m {
                GlobalMem::W8(c) => c.as_ptr() as u64,
                GlobalMem::W16(c) => c.as_ptr() as u64,
                GlobalMem::W32(c) => c.as_ptr() as u64,
                GlobalMem::W64(c) => c.as_ptr() as u64,
            },
            #[cfg(feature = "cuda")]
            MemRef::Cuda(ptr) => ptr,
        }
    }

    /// Elements `r` (checked against the length; `op` names the operation in the error).
    pub(crate) fn sub(&self, r: Range<usize>, op: &'static str) -> Result<(usize, MemRef<'a>)> {
        if r.start > r.end || r.end > self.len {
            return Err(Error::OutOfRange {
                op,
                start: r.start,
                end: r.end,
                len: self.len,
            });
        }
        let width = self.dtype.size_bytes() as u64;
        let mem = match self.mem {
            MemRef::Emu(m, offset) => {
                MemRef::Emu(sub_mem(m, r.clone()), offset + r.start as u64 * width)
            }
            #[cfg(feature = "cuda")]
            MemRef::Cuda(ptr) => MemRef::Cuda(ptr + r.start as u64 * width),
        };
        Ok((r.end - r.start, mem))
    }

    /// Copy the elements to the host, after the work issued before on the default stream.
    pub(crate) fn download<T: Element>(&self) -> Result<Vec<T>> {
        match self.mem {
            MemRef::Emu(m, _) => {
                let mut out: Vec<T> = Vec::with_capacity(self.len);
                // Bytes straight into `out`'s spare room where every bit pattern is a `T`
                // (not `bool`), without filling it first.
                if T::DTYPE != DType::Bool {
                    let spare = out.spare_capacity_mut();
                    let n = std::mem::size_of_val(spare);
                    // SAFETY: `spare` is `n` bytes of `out`'s allocation, viewed as bytes that
                    // may be uninitialised (`MaybeUninit<u8>` has no invalid values).
                    let bytes = unsafe {
                        std::slice::from_raw_parts_mut(
                            spare.as_mut_ptr().cast::<std::mem::MaybeUninit<u8>>(),
                            n,
                        )
                    };
                    if m.try_read_bytes(bytes) {
                        // SAFETY: all `self.len` elements were written, and `T` is an integer
                        // or float type (no padding, every bit pattern a value).
                        unsafe { out.set_len(self.len) };
                        return Ok(out);
                    }
                }
                out.resize(self.len, T::default());
                m.load_values(&mut out, T::from_bits);
                Ok(out)
            }
            #[cfg(feature = "cuda")]
            MemRef::Cuda(ptr) => {
                let size = std::mem::size_of::<T>();
                let mut bytes = vec![0u8; self.len * size];
                self.device.cuda_backend()?.download(ptr, &mut bytes)?;
                Ok(bytes.chunks_exact(size).map(from_le_bytes::<T>).collect())
            }
        }
    }

    /// Overwrite the elements with `data` (`op` names the operation in the error).
    pub(crate) fn upload<T: Element>(&self, data: &[T], op: &'static str) -> Result<()> {
        if data.len() != self.len {
            return Err(Error::LengthMismatch {
                op,
                expected: self.len,
                got: data.len(),
            });
        }
        match self.mem {
            MemRef::Emu(m, _) => {
                // SAFETY: `data`'s elements are integers, floats or `bool`s: initialised bytes
                // without padding, each element's bytes its bit pattern (`T::to_bits`).
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        data.as_ptr().cast::<u8>(),
                        std::mem::size_of_val(data),
                    )
                };
                if !m.try_write_bytes(bytes) {
                    m.store_values(data, T::to_bits);
                }
                Ok(())
            }
            #[cfg(feature = "cuda")]
            MemRef::Cuda(ptr) => self.device.cuda_backend()?.upload(ptr, &to_le_bytes(data)),
        }
    }
}

impl<T: Element> GlobalTensor<T> {
    pub(crate) fn from_parts(dev: Device, len: usize, mem: Mem) -> Self {
        GlobalTensor {
            dev,
            len,
            mem,
            _t: PhantomData,
        }
    }

    buffer_accessors!("the tensor", "The device whose memory holds the tensor.");

    /// Copy the tensor to the host. Waits for the work issued before it without a stream and
    /// on the device's blocking streams (so a kernel's results are visible, and a kernel's
    /// fault is reported here).
    pub fn download(&self) -> Result<Vec<T>> {
        self.as_ref_arg().download()
    }

    /// Overwrite the tensor with `data`, which must have the same length. Ordered like
    /// [`download`](Self::download); returns when the copy is complete.
    pub fn copy_from_host(&self, data: &[T]) -> Result<()> {
        self.as_ref_arg()
            .upload(data, "GlobalTensor::copy_from_host")
    }

    /// Borrow elements `range` as a [`TensorView`] (no copy): kernels and copies that write
    /// the view write this tensor. [`Error::OutOfRange`] if the range is not inside it. Kernels
    /// need 16-byte aligned tensors, so a view passed to a kernel must start at a multiple of
    /// 16 bytes ([`Error::Misaligned`] at launch otherwise).
    ///
    /// ```
    /// use tilus_runtime::Device;
    /// # fn main() -> tilus_runtime::Result<()> {
    /// let dev = Device::emulator();
    /// let t = dev.upload(&[0, 1, 2, 3, 4, 5, 6, 7])?;
    /// let v = t.view(4..8)?;
    /// assert_eq!(v.download()?, vec![4, 5, 6, 7]);
    /// v.copy_from_host(&[9, 9, 9, 9])?;
    /// assert_eq!(t.download()?, vec![0, 1, 2, 3, 9, 9, 9, 9]);
    /// assert_eq!(v.address(), t.address() + 4 * 4);
    /// # Ok(()) }
    /// ```
    pub fn view(&self, range: Range<usize>) -> Result<TensorView<'_, T>> {
        let (len, mem) = self.as_ref_arg().sub(range, "GlobalTensor::view")?;
        Ok(TensorView::from_parts(self.dev.clone(), len, mem))
    }

    /// The address of the first element: the device address on a GPU (the same number as
    /// `device_ptr` with feature `cuda`), the host address of the emulator's cells on the
    /// emulator. For identity checks (a view's address is its tensor's plus its offset) and
    /// interop; 0 for an empty GPU tensor.
    pub fn address(&self) -> u64 {
        self.as_ref_arg().address()
    }

    pub(crate) fn as_ref_arg(&self) -> TensorRef<'_> {
        TensorRef {
            dtype: T::DTYPE,
            len: self.len,
            device: &self.dev,
            mem: match &self.mem {
                Mem::Emu(m) => MemRef::Emu(m.mem(), 0),
                #[cfg(feature = "cuda")]
                Mem::Cuda(ptr) => MemRef::Cuda(*ptr),
            },
        }
    }

    /// Adopt a `cust` device buffer as a tensor of `dev` (ownership moves to the tensor, which
    /// frees it). To use a buffer without giving it up, borrow it with
    /// [`TensorView::from_cust`].
    ///
    /// `dev` must be a CUDA device ([`Error::WrongBackend`] otherwise) and the buffer must have
    /// been allocated in its (primary) context ([`Error::DeviceMismatch`] otherwise). On error
    /// the buffer is dropped. Kernels need 16-byte aligned buffers; `cuMemAlloc` gives those,
    /// a misaligned buffer is reported at launch.
    ///
    /// ```ignore
    /// let dev = tilus::Device::cuda(0)?;
    /// let buf = cust::memory::DeviceBuffer::from_slice(&[1i32, 2, 3])?;
    /// let t = tilus::GlobalTensor::from_cust(&dev, buf)?;
    /// ```
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn from_cust(dev: &Device, buf: DeviceBuffer<T>) -> Result<Self>
    where
        T: cust::memory::DeviceCopy,
    {
        let cuda = match &dev.inner.backend {
            Backend::Cuda(c) => c,
            Backend::Emu(_) => {
                return Err(Error::WrongBackend {
                    op: "GlobalTensor::from_cust",
                    needed: "CUDA",
                    device: dev.describe(),
                })
            }
        };
        let len = buf.len();
        let ptr = buf.as_device_ptr().as_raw();
        // The allocation (cuMemAlloc, or null when empty) is now the tensor's: it frees it with
        // cuMemFree whatever the element type.
        std::mem::forget(buf);
        let tensor = GlobalTensor::from_parts(dev.clone(), len, Mem::Cuda(ptr));
        if ptr != 0 {
            cuda.check_owns(ptr, "GlobalTensor::from_cust")?;
        }
        Ok(tensor)
    }

    /// The device address of the tensor's first element on a CUDA device (`None` on the
    /// emulator), for code that uses `cust` or the driver directly alongside tilus. Work issued
    /// through it on a non-blocking stream is not ordered with tilus's work: use events, or
    /// [`Device::synchronize`] in between.
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn device_ptr(&self) -> Option<u64> {
        match &self.mem {
            Mem::Cuda(ptr) => Some(*ptr),
            Mem::Emu(..) => None,
        }
    }
}

/// An element from its little-endian bytes (through the bit pattern, so any byte is safe to
/// read: a `bool` is `!= 0`).
#[cfg(feature = "cuda")]
fn from_le_bytes<T: Element>(b: &[u8]) -> T {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    T::from_bits(tilus_core::elem::canon(T::DTYPE, u64::from_le_bytes(w)))
}

/// The little-endian bytes of `data`.
#[cfg(feature = "cuda")]
pub(crate) fn to_le_bytes<T: Element>(data: &[T]) -> Vec<u8> {
    let size = std::mem::size_of::<T>();
    let mut out = Vec::with_capacity(std::mem::size_of_val(data));
    for v in data {
        out.extend_from_slice(&v.to_bits().to_le_bytes()[..size]);
    }
    out
}

impl<T: Element> Drop for GlobalTensor<T> {
    fn drop(&mut self) {
        #[cfg(feature = "cuda")]
        if let (Mem::Cuda(ptr), Ok(c)) = (&self.mem, self.dev.cuda_backend()) {
            // cuMemFree needs the owning context current on this thread; work still using the
            // memory, on any stream, must finish first (errors cannot be reported from drop).
            c.quiesce_for_free();
            c.free(*ptr);
        }
    }
}

impl<T: Element> fmt::Debug for GlobalTensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlobalTensor")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len)
            .field("device", &self.dev.describe())
            .finish()
    }
}
