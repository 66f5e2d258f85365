//! Device memory: [`GlobalTensor`] and its element types.

#[cfg(feature = "cuda")]
use crate::device::Backend;
use crate::device::Device;
use crate::error::{Error, Result};
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use tilus_core::emu::GlobalMem;
use tilus_core::ir::DType;

#[cfg(feature = "cuda")]
use cust::memory::DeviceBuffer;
#[cfg(feature = "cuda")]
use std::mem::ManuallyDrop;

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
/// blocks access it concurrently).
pub(crate) enum EmuBuf {
    W8(Box<[AtomicU8]>),
    W16(Box<[AtomicU16]>),
    W32(Box<[AtomicU32]>),
    W64(Box<[AtomicU64]>),
}

impl EmuBuf {
    /// `len` cells of `width` bytes holding `bits`.
    pub(crate) fn filled(width: usize, len: usize, bits: u64) -> EmuBuf {
        match width {
            1 => EmuBuf::W8((0..len).map(|_| AtomicU8::new(bits as u8)).collect()),
            2 => EmuBuf::W16((0..len).map(|_| AtomicU16::new(bits as u16)).collect()),
            4 => EmuBuf::W32((0..len).map(|_| AtomicU32::new(bits as u32)).collect()),
            _ => EmuBuf::W64((0..len).map(|_| AtomicU64::new(bits)).collect()),
        }
    }
    pub(crate) fn mem(&self) -> GlobalMem<'_> {
        match self {
            EmuBuf::W8(c) => GlobalMem::W8(c),
            EmuBuf::W16(c) => GlobalMem::W16(c),
            EmuBuf::W32(c) => GlobalMem::W32(c),
            EmuBuf::W64(c) => GlobalMem::W64(c),
        }
    }
}

/// Where a tensor's elements live.
pub(crate) enum Mem {
    Emu(EmuBuf),
    /// A CUDA allocation (bytes), freed in `GlobalTensor::drop` with the device's context
    /// current.
    #[cfg(feature = "cuda")]
    Cuda(ManuallyDrop<DeviceBuffer<u8>>),
}

/// A one-dimensional tensor of `T` in the memory of a [`Device`]: GPU global memory, or host
/// memory for the emulator. Its contents are always initialised.
///
/// Kernels take tensors by shared reference and may write them; the runtime orders launches,
/// copies and downloads of one device (they run in issue order on one stream), and
/// [`download`](Self::download) waits for everything issued before it.
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

/// A borrowed, type-erased view of a tensor for launches and copies.
#[derive(Clone, Copy)]
pub(crate) struct TensorRef<'a> {
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

#[derive(Clone, Copy)]
pub(crate) enum MemRef<'a> {
    Emu(GlobalMem<'a>),
    #[cfg(feature = "cuda")]
    Cuda(u64),
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

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device whose memory holds the tensor.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// Copy the tensor to the host. Waits for all work issued to the device before it
    /// (so a kernel's results are visible, and a kernel's fault is reported here).
    pub fn download(&self) -> Result<Vec<T>> {
        match &self.mem {
            Mem::Emu(m) => {
                let m = m.mem();
                Ok((0..self.len)
                    .map(|i| T::from_bits(m.load(i, Ordering::Relaxed)))
                    .collect())
            }
            #[cfg(feature = "cuda")]
            Mem::Cuda(buf) => {
                let size = std::mem::size_of::<T>();
                let mut bytes = vec![0u8; self.len * size];
                self.dev
                    .cuda_backend()?
                    .download(buf.as_device_ptr().as_raw(), &mut bytes)?;
                Ok(bytes.chunks_exact(size).map(from_le_bytes::<T>).collect())
            }
        }
    }

    /// Overwrite the tensor with `data`, which must have the same length. Ordered after the
    /// work issued to the device before it; returns when the copy is complete.
    pub fn copy_from_host(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            return Err(Error::LengthMismatch {
                op: "GlobalTensor::copy_from_host",
                expected: self.len,
                got: data.len(),
            });
        }
        match &self.mem {
            Mem::Emu(m) => {
                let m = m.mem();
                for (i, v) in data.iter().enumerate() {
                    m.store(i, v.to_bits(), Ordering::Relaxed);
                }
                Ok(())
            }
            #[cfg(feature = "cuda")]
            Mem::Cuda(buf) => self
                .dev
                .cuda_backend()?
                .upload(buf.as_device_ptr().as_raw(), &to_le_bytes(data)),
        }
    }

    pub(crate) fn as_ref_arg(&self) -> TensorRef<'_> {
        TensorRef {
            dtype: T::DTYPE,
            len: self.len,
            device: &self.dev,
            mem: match &self.mem {
                Mem::Emu(m) => MemRef::Emu(m.mem()),
                #[cfg(feature = "cuda")]
                Mem::Cuda(buf) => MemRef::Cuda(buf.as_device_ptr().as_raw()),
            },
        }
    }

    /// Adopt a `cust` device buffer as a tensor of `dev`.
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
        let ptr = buf.as_device_ptr();
        std::mem::forget(buf);
        // SAFETY: the allocation of `len` elements of `T` is now owned as bytes (the memory is
        // freed with cuMemFree whatever its element type).
        let bytes = unsafe {
            DeviceBuffer::<u8>::from_raw_parts(ptr.cast(), len * std::mem::size_of::<T>())
        };
        let tensor =
            GlobalTensor::from_parts(dev.clone(), len, Mem::Cuda(ManuallyDrop::new(bytes)));
        if len > 0 {
            if let Mem::Cuda(b) = &tensor.mem {
                cuda.check_owns(b.as_device_ptr().as_raw(), &dev.describe())?;
            }
        }
        Ok(tensor)
    }

    /// The device address of the tensor's first element on a CUDA device (`None` on the
    /// emulator), for code that uses `cust` or the driver directly alongside tilus. Work issued
    /// through it is not ordered with this device's stream: call [`Device::synchronize`] in
    /// between when in doubt.
    #[cfg(feature = "cuda")]
    pub fn device_ptr(&self) -> Option<u64> {
        match &self.mem {
            Mem::Cuda(b) => Some(b.as_device_ptr().as_raw()),
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
    let mut out = Vec::with_capacity(data.len() * size);
    for v in data {
        out.extend_from_slice(&v.to_bits().to_le_bytes()[..size]);
    }
    out
}

impl<T: Element> Drop for GlobalTensor<T> {
    fn drop(&mut self) {
        #[cfg(feature = "cuda")]
        if let Mem::Cuda(buf) = &mut self.mem {
            // cuMemFree needs the owning context current on this thread; kernels still using the
            // buffer must finish first (errors cannot be reported from drop).
            if let Ok(c) = self.dev.cuda_backend() {
                c.quiesce_for_free();
            }
            // SAFETY: `buf` is not used again: this is the tensor's destructor.
            unsafe { ManuallyDrop::drop(buf) };
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
