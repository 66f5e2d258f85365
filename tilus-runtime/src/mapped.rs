//! [`MappedTensor`]: host memory that a running kernel and the host share, the memory that
//! `scope = sys` synchronises.

use crate::device::{Backend, Device};
use crate::error::{Error, Result};
use crate::spec::tensor_sealed::TensorSource;
use crate::tensor::{Element, EmuBuf, MemRef, TensorRef};
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use tilus_core::emu::GlobalMem;

/// A one-dimensional tensor of `T` in page-locked host memory that is mapped into the device's
/// address space: kernels take it like a [`GlobalTensor`](crate::GlobalTensor), and the host
/// reads and writes it **while they run**, through atomic loads and stores that follow the
/// same memory model ([`load`](Self::load), [`store`](Self::store): `std::sync::atomic`
/// orderings). This is the memory the `sys` scope is for: a kernel publishes with
/// `atomic_store(.., sem = release, scope = sys)` and the host acquires with
/// `load(i, Ordering::Acquire)`; the host publishes with `store(i, v, Ordering::Release)` and
/// the kernel acquires with `atomic_load(.., sem = acquire, scope = sys)`. Progress reports
/// from a long kernel, work queues fed by the host while a persistent kernel drains them and
/// mailboxes are written this way (`examples/progress.rs`, `work_queue.rs`, `mailbox.rs`).
///
/// On a GPU it is `cuMemHostAlloc(DEVICEMAP)` memory (kernels reach it over the bus, slower
/// than device memory: use it for what the host must see, not for bulk data);
/// [`Error::MappedMemoryUnsupported`] where the device cannot map host memory. On the emulator
/// it is host memory like any tensor's, shared by the emulated blocks and host threads, and the
/// race checker ([`EmuOptions::check_races`](crate::EmuOptions::check_races)) counts the host
/// as one more agent: a host write that a kernel reads, or the reverse, with no release and
/// acquire at `sys` scope between them fails the launch with a race (a `gpu`-scope flag does
/// not reach the host; `tests/host_races.rs`). Since
/// an emulator launch returns when the kernel has finished, a host thread that watches a
/// running kernel launches it from another thread (as the examples do, on both backends).
///
/// Dropping it, or [`free`](Self::free), first waits for all work of its device: no kernel can
/// be using the memory when it is released.
///
/// ```
/// use std::sync::atomic::Ordering;
/// use tilus_runtime::Device;
/// # fn main() -> tilus_runtime::Result<()> {
/// let dev = Device::emulator();
/// let flags = dev.mapped::<u32>(4)?;
/// flags.store(2, 7, Ordering::Release);
/// assert_eq!(flags.load(2, Ordering::Acquire), 7);
/// assert_eq!(flags.to_vec(), vec![0, 0, 7, 0]);
/// # Ok(()) }
/// ```
pub struct MappedTensor<T: Element> {
    dev: Device,
    len: usize,
    mem: Mapped,
    _t: PhantomData<T>,
}

enum Mapped {
    Emu(EmuBuf),
    /// Host address (page-locked, mapped) and the device address of the same memory.
    #[cfg(feature = "cuda")]
    Cuda {
        host: *mut std::ffi::c_void,
        device: u64,
    },
}

// SAFETY: the host memory of a CUDA mapping is only accessed through atomics (`cells`) and
// freed once, by its owner; the emulator's is atomics already.
unsafe impl Send for Mapped {}
// SAFETY: as above: shared access is atomic.
unsafe impl Sync for Mapped {}

impl Device {
    /// A [`MappedTensor`] of `len` zeros.
    pub fn mapped<T: Element>(&self, len: usize) -> Result<MappedTensor<T>> {
        let width = T::DTYPE.size_bytes();
        let oom = || Error::host_out_of_memory(format!("mapping {len} elements of {width} bytes"));
        let bytes = len.checked_mul(width).ok_or_else(oom)?;
        let mem = match &self.inner.backend {
            Backend::Emu(_) => {
                let buf = EmuBuf::filled(width, len, 0).ok_or_else(oom)?;
                // The race checker counts the host's accesses to it (`emu::host`).
                tilus_core::emu::host::map(buf.mem().cell_addr(0), bytes);
                Mapped::Emu(buf)
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => {
                let (host, device) = c.map_host(bytes, &self.describe())?;
                Mapped::Cuda { host, device }
            }
        };
        let _ = bytes;
        Ok(MappedTensor {
            dev: self.clone(),
            len,
            mem,
            _t: PhantomData,
        })
    }

    /// A [`MappedTensor`] holding a copy of `data`.
    pub fn mapped_from<T: Element>(&self, data: &[T]) -> Result<MappedTensor<T>> {
        let t = self.mapped(data.len())?;
        for (i, &v) in data.iter().enumerate() {
            t.store(i, v, Ordering::Relaxed);
        }
        Ok(t)
    }
}

impl<T: Element> MappedTensor<T> {
    buffer_accessors!("it", "The device whose kernels it is mapped into.");

    /// The elements as the host's atomic cells.
    fn cells(&self) -> GlobalMem<'_> {
        match &self.mem {
            Mapped::Emu(b) => b.mem(),
            #[cfg(feature = "cuda")]
            Mapped::Cuda { host, .. } => {
                use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
                let (p, n) = (*host, self.len);
                // SAFETY: `host` is a live, page-aligned allocation of `n` elements of `T`'s
                // width, zero-initialised, accessed only atomically (by the host here, by
                // kernels through the device address) and freed only when `self` goes away.
                unsafe {
                    match T::DTYPE.size_bytes() {
                        1 => GlobalMem::W8(std::slice::from_raw_parts(p as *const AtomicU8, n)),
                        2 => GlobalMem::W16(std::slice::from_raw_parts(p as *const AtomicU16, n)),
                        4 => GlobalMem::W32(std::slice::from_raw_parts(p as *const AtomicU32, n)),
                        _ => GlobalMem::W64(std::slice::from_raw_parts(p as *const AtomicU64, n)),
                    }
                }
            }
        }
    }

    /// Element `i`, read atomically with `order` (`Acquire` to synchronise with a kernel's
    /// release at `sys` scope). Panics if `i` is out of range, as slice indexing does.
    pub fn load(&self, i: usize, order: Ordering) -> T {
        assert!(
            i < self.len,
            "index {i} out of range for {} elements",
            self.len
        );
        let cells = self.cells();
        T::from_bits(self.checked(&cells, i, false, order, || cells.load(i, order)))
    }

    /// `op`, the host's access to element `i`, seen by the emulator's race checker (on a GPU
    /// there is none: `op` alone).
    fn checked<R>(
        &self,
        cells: &GlobalMem<'_>,
        i: usize,
        store: bool,
        order: Ordering,
        op: impl FnOnce() -> R,
    ) -> R {
        match &self.mem {
            Mapped::Emu(_) => tilus_core::emu::host::access(cells, i, store, order, op),
            #[cfg(feature = "cuda")]
            Mapped::Cuda { .. } => op(),
        }
    }

    /// Write element `i` atomically with `order` (`Release` to publish to a kernel that
    /// acquires at `sys` scope). Panics if `i` is out of range.
    pub fn store(&self, i: usize, v: T, order: Ordering) {
        assert!(
            i < self.len,
            "index {i} out of range for {} elements",
            self.len
        );
        let cells = self.cells();
        self.checked(&cells, i, true, order, || {
            cells.store(i, v.to_bits(), order)
        });
    }

    /// All elements, each read with a relaxed atomic load.
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.len)
            .map(|i| self.load(i, Ordering::Relaxed))
            .collect()
    }

    /// Wait for all work of the device, then release the memory, reporting an error of the
    /// wait (which dropping cannot).
    pub fn free(self) -> Result<()> {
        let r = self.dev.synchronize();
        drop(self);
        r
    }
}

impl<T: Element> TensorSource<T> for MappedTensor<T> {
    fn tensor_ref(&self) -> TensorRef<'_> {
        TensorRef {
            dtype: T::DTYPE,
            len: self.len,
            device: &self.dev,
            mem: match &self.mem {
                Mapped::Emu(b) => MemRef::Emu(b.mem(), 0),
                #[cfg(feature = "cuda")]
                Mapped::Cuda { device, .. } => MemRef::Cuda(*device),
            },
        }
    }
}

impl<T: Element> Drop for MappedTensor<T> {
    fn drop(&mut self) {
        #[allow(irrefutable_let_patterns)] // without `cuda`, the only kind
        if let Mapped::Emu(b) = &self.mem {
            tilus_core::emu::host::unmap(b.mem().cell_addr(0));
        }
        #[cfg(feature = "cuda")]
        if let (Mapped::Cuda { host, .. }, Ok(c)) = (&self.mem, self.dev.cuda_backend()) {
            // No kernel may still use the memory: wait for every stream first.
            c.quiesce_for_free();
            c.unmap_host(*host);
        }
    }
}

impl<T: Element> fmt::Debug for MappedTensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedTensor")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len)
            .field("device", &self.dev.describe())
            .finish()
    }
}
