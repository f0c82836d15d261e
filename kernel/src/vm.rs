//! User address spaces: what each range of a program's memory is, and how a
//! page fault in it is resolved.
//!
//! A space is a small list of regions: the program's ELF segments (loaded
//! when the program starts) and demand-zero regions (stack, heap) whose pages
//! appear, zeroed, on first touch. The hardware page tables are only a cache
//! of this description. Issue #3 replaces the region list with segment trees
//! of nodes and pages.

use crate::arch::paging::{MapError, UserPerm, UserRoot};
use crate::arch::phys;
use stet_physmem::pool::FramePool;

/// Most regions per space.
pub const MAX_REGIONS: usize = 12;
const PAGE: u64 = 4096;

/// What backs a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Loaded from the program file; every page is present from the start.
    Image,
    /// Zero-filled on first touch.
    DemandZero,
}

/// A range of a program's address space.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    /// First address (page aligned).
    pub start: u64,
    /// One past the last address (page aligned).
    pub end: u64,
    /// Access rights.
    pub perm: UserPerm,
    /// What backs it.
    pub backing: Backing,
}

/// The kind of access that faulted, from the page-fault error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A data read.
    Read,
    /// A data write.
    Write,
    /// An instruction fetch.
    Execute,
}

impl Access {
    /// Decodes a #PF error code.
    pub fn from_error(error: u64) -> Access {
        if error & (1 << 4) != 0 {
            Access::Execute
        } else if error & (1 << 1) != 0 {
            Access::Write
        } else {
            Access::Read
        }
    }

    /// Lower-case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Execute => "execute",
        }
    }
}

/// Why a fault could not be resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultError {
    /// No region covers the address.
    Unmapped,
    /// The region forbids this access.
    Protection,
    /// No free frame.
    OutOfMemory,
}

impl FaultError {
    /// Lower-case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            FaultError::Unmapped => "no memory there",
            FaultError::Protection => "not allowed",
            FaultError::OutOfMemory => "out of memory",
        }
    }
}

/// A user address space.
pub struct Space {
    /// Hardware page tables (a cache).
    pub root: UserRoot,
    regions: [Option<Region>; MAX_REGIONS],
}

impl Space {
    /// An empty space.
    pub fn new(pool: &mut FramePool<'_>) -> Option<Space> {
        Some(Space {
            root: UserRoot::new(pool)?,
            regions: [None; MAX_REGIONS],
        })
    }

    /// Adds a region. Fails when the table is full or it overlaps another.
    pub fn add_region(&mut self, r: Region) -> Result<(), ()> {
        if self
            .regions
            .iter()
            .flatten()
            .any(|o| r.start < o.end && o.start < r.end)
        {
            return Err(());
        }
        let slot = self.regions.iter_mut().find(|s| s.is_none()).ok_or(())?;
        *slot = Some(r);
        Ok(())
    }

    fn region(&self, va: u64) -> Option<Region> {
        self.regions
            .iter()
            .flatten()
            .find(|r| r.start <= va && va < r.end)
            .copied()
    }

    /// Resolves a fault at `va`: maps a fresh zero page if the region is
    /// demand-zero and allows `access`.
    pub fn resolve(
        &mut self,
        va: u64,
        access: Access,
        pool: &mut FramePool<'_>,
    ) -> Result<(), FaultError> {
        let r = self.region(va).ok_or(FaultError::Unmapped)?;
        let allowed = match access {
            Access::Read => true,
            Access::Write => r.perm.write,
            Access::Execute => r.perm.exec,
        };
        if !allowed {
            return Err(FaultError::Protection);
        }
        let page = va & !(PAGE - 1);
        if self.root.lookup(page).is_some() {
            // Present and allowed by the region, yet it faulted: the page
            // tables disagree with the region (cannot happen today).
            return Err(FaultError::Protection);
        }
        if r.backing != Backing::DemandZero {
            return Err(FaultError::Unmapped);
        }
        let f = pool.alloc().ok_or(FaultError::OutOfMemory)?;
        phys::zero_frame(f);
        match self.root.map(page, f, r.perm, pool) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = pool.free(f);
                Err(match e {
                    MapError::NoMemory => FaultError::OutOfMemory,
                    _ => FaultError::Protection,
                })
            }
        }
    }

    /// Copies `out.len()` bytes from user address `va`, faulting pages in as
    /// the CPU would. The kernel never dereferences user addresses (so SMAP
    /// stays on): it reads the frames through the direct map.
    pub fn read(
        &mut self,
        va: u64,
        out: &mut [u8],
        pool: &mut FramePool<'_>,
    ) -> Result<(), FaultError> {
        let mut done = 0usize;
        while done < out.len() {
            let a = va.checked_add(done as u64).ok_or(FaultError::Unmapped)?;
            let page = a & !(PAGE - 1);
            let frame = match self.root.lookup(page) {
                Some((f, _)) => f,
                None => {
                    self.resolve(a, Access::Read, pool)?;
                    self.root.lookup(page).ok_or(FaultError::Unmapped)?.0
                }
            };
            let off = (a - page) as usize;
            let n = (PAGE as usize - off).min(out.len() - done);
            phys::read_frame(frame, off, &mut out[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// Drops the pages of demand-zero regions within `[va, va + len)`; they
    /// read as zero again. Returns how many pages were freed.
    pub fn release(&mut self, va: u64, len: u64, pool: &mut FramePool<'_>) -> u64 {
        let start = va & !(PAGE - 1);
        let end = va.saturating_add(len).saturating_add(PAGE - 1) & !(PAGE - 1);
        let mut freed = 0;
        // Walk only the parts of demand-zero regions inside the range, so
        // the work is bounded by the regions, not by what the caller asks.
        for r in self
            .regions
            .iter()
            .flatten()
            .filter(|r| r.backing == Backing::DemandZero)
        {
            let mut p = start.max(r.start);
            while p < end.min(r.end) {
                if let Some(f) = self.root.unmap(p) {
                    let _ = pool.free(f);
                    freed += 1;
                }
                p += PAGE;
            }
        }
        freed
    }

    /// Frees all memory of the space.
    pub fn destroy(self, pool: &mut FramePool<'_>) {
        self.root.destroy(pool);
    }
}
