//! Host memory for asynchronous copies: [`HostBuffer`] (pinned on a GPU), the
//! [`HostMemory`] buffers a pending copy can own, and the [`PlainElement`] types such copies
//! move as raw bytes.

use crate::device::{Backend, Device};
use crate::error::{Error, Result};
use crate::tensor::Element;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// An [`Element`] whose every bit pattern of its size is a valid value: all element types but
/// `bool`. Asynchronous copies write device bytes straight into host memory of these types
/// (a `bool` must be `0` or `1`, which device bytes need not be; use the blocking
/// [`download`](crate::GlobalTensor::download) for `bool`). Implemented by tilus only.
pub trait PlainElement: Element {}

macro_rules! plain {
    ($($t:ty),*) => { $(impl PlainElement for $t {})* };
}
plain!(
    i8,
    u8,
    i16,
    u16,
    i32,
    u32,
    i64,
    u64,
    f32,
    f64,
    half::f16,
    half::bf16
);

pub(crate) mod host_sealed {
    /// Host memory whose elements stay at one address while the value is moved around, so a
    /// copy in flight can keep writing or reading it after the owner moved into a `Pending`.
    ///
    /// Every such buffer dereferences to its elements, which gives the three accessors.
    pub trait StableHost<T>: std::ops::DerefMut<Target = [T]> {
        fn host_ptr(&self) -> *const T {
            self.as_ptr()
        }
        fn host_mut_ptr(&mut self) -> *mut T {
            self.as_mut_ptr()
        }
        fn host_len(&self) -> usize {
            self.len()
        }
    }
}

/// Host buffers an asynchronous copy ([`Stream::upload`](crate::Stream::upload),
/// [`Stream::download`](crate::Stream::download)) can take ownership of while it is in flight:
/// [`HostBuffer<T>`] (pinned on a GPU, the fast one), `Vec<T>`, `Box<[T]>`, and with feature
/// `cuda` cust's `LockedBuffer<T>`. Each keeps its elements on the heap, where moving the
/// owner does not move them. Sealed. To copy from or into borrowed slices, use
/// [`Stream::scope`](crate::Stream::scope).
pub trait HostMemory<T>: host_sealed::StableHost<T> + Send {}

impl<T: PlainElement, B: host_sealed::StableHost<T> + Send> HostMemory<T> for B {}

impl<T> host_sealed::StableHost<T> for Vec<T> {}

impl<T> host_sealed::StableHost<T> for Box<[T]> {}

#[cfg(feature = "cuda")]
impl<T: cust::memory::DeviceCopy> host_sealed::StableHost<T> for cust::memory::LockedBuffer<T> {}

/// A host buffer of `T` for asynchronous copies: page-locked ("pinned") memory on a GPU, which
/// the GPU's copy engines read and write directly, so copies run at full speed and overlap
/// with kernels; a plain heap allocation on the emulator. Dereferences to `[T]`. Created by
/// [`Device::host_buffer`] and [`Device::host_buffer_from`].
pub struct HostBuffer<T: PlainElement> {
    store: Store<T>,
}

enum Store<T> {
    Heap(Vec<T>),
    /// `cuMemAllocHost` memory of `len` elements, freed with `cuMemFreeHost` (with the
    /// device's context current).
    #[cfg(feature = "cuda")]
    Pinned {
        dev: Device,
        ptr: std::ptr::NonNull<T>,
        len: usize,
    },
}

// SAFETY: the buffer owns its elements (a heap vector or a pinned allocation nobody else
// references), so it is Send/Sync exactly when `T` is; the device handle is Send + Sync.
unsafe impl<T: PlainElement> Send for HostBuffer<T> {}
// SAFETY: as above; shared access only reads.
unsafe impl<T: PlainElement> Sync for HostBuffer<T> {}

impl Device {
    /// A host buffer of `len` zeros for asynchronous copies with this device (pinned on a
    /// GPU). [`Error::OutOfMemory`] if it cannot be allocated.
    pub fn host_buffer<T: PlainElement>(&self, len: usize) -> Result<HostBuffer<T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::host_out_of_memory(format!("a host buffer of {len} elements")))?;
        let store = match &self.inner.backend {
            Backend::Emu(_) => {
                let mut v = Vec::new();
                v.try_reserve_exact(len).map_err(|_| {
                    Error::host_out_of_memory(format!("a host buffer of {bytes} bytes"))
                })?;
                v.resize(len, T::default());
                Store::Heap(v)
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => {
                if len == 0 {
                    Store::Heap(Vec::new())
                } else {
                    c.make_current()?;
                    let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
                    // SAFETY: out-pointer to a local; the context is current.
                    crate::cuda::check(
                        unsafe { crate::cuda::ffi::mem_alloc_host(&mut p, bytes) },
                        || {
                            format!(
                                "allocating {bytes} bytes of pinned host memory for {}",
                                c.describe()
                            )
                        },
                    )?;
                    // Zeroed so that every element is a valid `T` (all bits zero is one for
                    // every plain element type).
                    // SAFETY: `p` is a fresh allocation of `bytes` bytes (page-aligned).
                    unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
                    Store::Pinned {
                        dev: self.clone(),
                        ptr: std::ptr::NonNull::new(p.cast()).ok_or_else(|| {
                            Error::host_out_of_memory(format!("{bytes} bytes of pinned memory"))
                        })?,
                        len,
                    }
                }
            }
        };
        Ok(HostBuffer { store })
    }

    /// A host buffer holding a copy of `data` (pinned on a GPU).
    pub fn host_buffer_from<T: PlainElement>(&self, data: &[T]) -> Result<HostBuffer<T>> {
        let mut b = self.host_buffer(data.len())?;
        b.copy_from_slice(data);
        Ok(b)
    }
}

impl<T: PlainElement> HostBuffer<T> {
    /// Whether the memory is page-locked (on a GPU; not on the emulator, nor when empty).
    pub fn is_pinned(&self) -> bool {
        match &self.store {
            Store::Heap(_) => false,
            #[cfg(feature = "cuda")]
            Store::Pinned { .. } => true,
        }
    }
}

impl<T: PlainElement> Deref for HostBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.store {
            Store::Heap(v) => v,
            // SAFETY: `len` initialised elements (zeroed at allocation, then written only as
            // `T`s) that this buffer owns.
            #[cfg(feature = "cuda")]
            Store::Pinned { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: PlainElement> DerefMut for HostBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.store {
            Store::Heap(v) => v,
            // SAFETY: as for `deref`, and `&mut self` makes the access exclusive.
            #[cfg(feature = "cuda")]
            Store::Pinned { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: PlainElement> host_sealed::StableHost<T> for HostBuffer<T> {}

impl<T: PlainElement> Drop for HostBuffer<T> {
    fn drop(&mut self) {
        #[cfg(feature = "cuda")]
        if let Store::Pinned { dev, ptr, .. } = &self.store {
            if let Ok(c) = dev.cuda_backend() {
                if c.make_current().is_ok() {
                    // SAFETY: our cuMemAllocHost allocation; no copy uses it any more (a pending
                    // copy owns the buffer and waits before dropping it).
                    unsafe { crate::cuda::ffi::mem_free_host(ptr.as_ptr().cast()) };
                }
            }
        }
    }
}

impl<T: PlainElement> fmt::Debug for HostBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len())
            .field("pinned", &self.is_pinned())
            .finish()
    }
}
