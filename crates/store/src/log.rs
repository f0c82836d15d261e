//! Space in the checkpoint log. The log is a ring of blocks. The last
//! committed checkpoint is *protected* until it has been migrated to the
//! objects' homes; a new checkpoint must reserve all of its blocks before it
//! starts writing, outside the protected extent, so that a started
//! checkpoint can always finish and a crash at any moment leaves the last
//! committed checkpoint intact. One checkpoint is in flight at a time, and
//! it may commit only once the previous one has migrated (objects of the
//! previous checkpoint that were not written again live only in its
//! extent until then).

/// A run of log blocks, possibly wrapping around the end of the ring
/// (offsets are relative to the start of the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// First block (relative to the log start).
    pub start: u64,
    /// Blocks.
    pub len: u64,
}

impl Extent {
    /// Whether relative block `b` is in the extent, in a ring of `size`.
    pub fn contains(&self, b: u64, size: u64) -> bool {
        let d = (b + size - self.start % size) % size;
        d < self.len
    }
}

/// The log's space bookkeeping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Log {
    /// Blocks in the ring.
    pub size: u64,
    /// Where the next reservation starts.
    pub next: u64,
    /// The committed checkpoint not yet migrated home, if any.
    pub protected: Option<Extent>,
    /// The checkpoint being written, if any.
    pub in_flight: Option<Extent>,
}

/// Why a log operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogError {
    /// Not enough free blocks now (wait for migration).
    Full,
    /// A checkpoint is already in flight.
    Busy,
    /// The previous checkpoint has not migrated yet.
    NotMigrated,
    /// The extent is not the one in flight.
    NotInFlight,
}

impl Log {
    /// An empty log of `size` blocks.
    pub fn new(size: u64) -> Log {
        Log {
            size,
            next: 0,
            protected: None,
            in_flight: None,
        }
    }

    /// Free blocks from `next` before the protected extent (or the whole
    /// ring).
    pub fn free(&self) -> u64 {
        match self.protected {
            None => self.size,
            Some(p) => (p.start + self.size - self.next % self.size) % self.size,
        }
    }

    /// Reserves `len` blocks for a checkpoint. Refused when they are not
    /// free now (the caller waits for migration) or one is in flight.
    pub fn reserve(&mut self, len: u64) -> Result<Extent, LogError> {
        if self.in_flight.is_some() {
            return Err(LogError::Busy);
        }
        if len == 0 || len > self.free() {
            return Err(LogError::Full);
        }
        let e = Extent {
            start: self.next % self.size,
            len,
        };
        self.next = (e.start + len) % self.size;
        self.in_flight = Some(e);
        Ok(e)
    }

    /// The checkpoint in flight was abandoned (a crash before its root):
    /// its space is free again.
    pub fn abandon(&mut self) {
        if let Some(e) = self.in_flight.take() {
            self.next = e.start;
        }
    }

    /// The checkpoint in `e` committed (its root is on disk): it is
    /// protected until migrated.
    pub fn committed(&mut self, e: Extent) -> Result<(), LogError> {
        if self.in_flight != Some(e) {
            return Err(LogError::NotInFlight);
        }
        if self.protected.is_some() {
            return Err(LogError::NotMigrated);
        }
        self.in_flight = None;
        self.protected = Some(e);
        Ok(())
    }

    /// The protected checkpoint has reached its homes: its space is free.
    pub fn migrated(&mut self) {
        self.protected = None;
    }
}
