//! Device memory: [`GlobalTensor`] and its element types.

#[cfg(feature = "cuda")]
use crate::device::Backend;
use crate::device::Device;
use crate::error::{Error, Result};
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI32, Ordering};
use tilus_core::ir::DType;

#[cfg(feature = "cuda")]
use cust::memory::DeviceBuffer;
#[cfg(feature = "cuda")]
use std::mem::ManuallyDrop;

pub(crate) mod sealed {
    /// Conversion to and from the 32-bit pattern kept in memory (every element type of this
    /// version is 32 bits wide).
    #[cfg(feature = "cuda")]
    pub trait Sealed: cust::memory::DeviceCopy {
        fn to_bits(self) -> u32;
        fn from_bits(bits: u32) -> Self;
    }
    /// Conversion to and from the 32-bit pattern kept in memory (every element type of this
    /// version is 32 bits wide).
    #[cfg(not(feature = "cuda"))]
    pub trait Sealed {
        fn to_bits(self) -> u32;
        fn from_bits(bits: u32) -> Self;
    }
}

/// A type that can be an element of a [`GlobalTensor`]. Sealed; implemented for `i32`.
///
/// ```
/// use tilus_runtime::{DType, Element};
/// assert_eq!(<i32 as Element>::DTYPE, DType::I32);
/// ```
pub trait Element:
    sealed::Sealed + Copy + Default + PartialEq + fmt::Debug + Send + Sync + 'static
{
    /// The IR element type.
    const DTYPE: DType;
}

impl sealed::Sealed for i32 {
    fn to_bits(self) -> u32 {
        self as u32
    }
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
}

impl Element for i32 {
    const DTYPE: DType = DType::I32;
}

/// Where a tensor's elements live.
pub(crate) enum Mem<T: Element> {
    /// Emulator memory: one atomic per element (kernels of many blocks access it concurrently).
    Emu(Box<[AtomicI32]>, PhantomData<T>),
    /// A CUDA allocation, freed in `GlobalTensor::drop` with the device's context current.
    #[cfg(feature = "cuda")]
    Cuda(ManuallyDrop<DeviceBuffer<T>>),
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
/// # Ok(()) }
/// ```
pub struct GlobalTensor<T: Element> {
    dev: Device,
    len: usize,
    pub(crate) mem: Mem<T>,
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
    Emu(&'a [AtomicI32]),
    #[cfg(feature = "cuda")]
    Cuda(u64),
}

impl<T: Element> GlobalTensor<T> {
    pub(crate) fn from_parts(dev: Device, len: usize, mem: Mem<T>) -> Self {
        GlobalTensor { dev, len, mem }
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
            Mem::Emu(m, _) => Ok(m
                .iter()
                .map(|a| T::from_bits(a.load(Ordering::Relaxed) as u32))
                .collect()),
            #[cfg(feature = "cuda")]
            Mem::Cuda(buf) => {
                let mut out = vec![T::default(); self.len];
                self.dev
                    .cuda_backend()?
                    .download(buf.as_device_ptr().as_raw(), &mut out)?;
                Ok(out)
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
            Mem::Emu(m, _) => {
                for (a, v) in m.iter().zip(data) {
                    a.store(v.to_bits() as i32, Ordering::Relaxed);
                }
                Ok(())
            }
            #[cfg(feature = "cuda")]
            Mem::Cuda(buf) => self
                .dev
                .cuda_backend()?
                .upload(buf.as_device_ptr().as_raw(), data),
        }
    }

    pub(crate) fn as_ref_arg(&self) -> TensorRef<'_> {
        TensorRef {
            dtype: T::DTYPE,
            len: self.len,
            device: &self.dev,
            mem: match &self.mem {
                Mem::Emu(m, _) => MemRef::Emu(m),
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
    pub fn from_cust(dev: &Device, buf: DeviceBuffer<T>) -> Result<Self> {
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
        let tensor = GlobalTensor {
            dev: dev.clone(),
            len,
            mem: Mem::Cuda(ManuallyDrop::new(buf)),
        };
        if len > 0 {
            if let Mem::Cuda(b) = &tensor.mem {
                cuda.check_owns(b.as_device_ptr().as_raw(), &dev.describe())?;
            }
        }
        Ok(tensor)
    }

    /// The underlying `cust` buffer, on a CUDA device (`None` on the emulator). Work issued
    /// through it with `cust` is not ordered with this device's stream except through CUDA's
    /// legacy default stream semantics; call [`Device::synchronize`] in between when in doubt.
    #[cfg(feature = "cuda")]
    pub fn as_cust(&self) -> Option<&DeviceBuffer<T>> {
        match &self.mem {
            Mem::Cuda(b) => Some(b),
            Mem::Emu(..) => None,
        }
    }
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
