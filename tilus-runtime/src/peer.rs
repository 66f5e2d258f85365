//! Peer devices: kernels of one device that access the memory of another
//! ([`Device::enable_peer_access`]).

use crate::device::{Backend, Device};
use crate::error::{Error, Result};

impl Device {
    /// Let this device's kernels access `peer`'s memory: afterwards a tensor of `peer` may be
    /// passed to a launch on this device (its atomics at `scope = sys` then synchronise with
    /// `peer`'s kernels). One direction only; call it on `peer` too for the other.
    ///
    /// On GPUs it is `cuCtxEnablePeerAccess` after `cuDeviceCanAccessPeer`;
    /// [`Error::PeerAccessUnsupported`] where the two GPUs cannot (a GPU is not its own peer,
    /// and GPUs without NVLink or a shared PCIe root often cannot). Emulator devices all keep
    /// their tensors in host memory: any two are peers. A GPU and an emulator never are.
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        let refuse = |why: &str| Error::PeerAccessUnsupported {
            device: self.describe(),
            peer: peer.describe(),
            reason: why.to_string(),
        };
        if self.same_device(peer) {
            return Err(refuse(
                "a device is not its own peer: its memory is its own already",
            ));
        }
        match (&self.inner.backend, &peer.inner.backend) {
            (Backend::Emu(_), Backend::Emu(_)) => {}
            #[cfg(feature = "cuda")]
            (Backend::Cuda(a), Backend::Cuda(b)) => a.enable_peer(b).map_err(|e| match e {
                Some(err) => err,
                None => refuse("the driver reports that the two GPUs cannot access each other's memory (cuDeviceCanAccessPeer)"),
            })?,
            #[cfg(feature = "cuda")]
            _ => return Err(refuse("a GPU and the emulator do not share memory")),
        }
        let mut peers = self.inner.peers.lock().unwrap_or_else(|p| p.into_inner());
        if !peers.iter().any(|d| d.same_device(peer)) {
            peers.push(peer.clone());
        }
        Ok(())
    }

    /// Whether this device's kernels may access `other`'s memory.
    pub fn is_peer(&self, other: &Device) -> bool {
        let peers = self.inner.peers.lock().unwrap_or_else(|p| p.into_inner());
        peers.iter().any(|d| d.same_device(other))
    }
}
