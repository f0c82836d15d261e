//! The kernel's own persistent state, kept in ordinary page objects so the
//! checkpoint carries it like everything else (no special area on disk):
//! page 0 holds the clock, the checkpoint period, the restart count and the
//! *running set* (the domains that were ready, running, asleep or waiting
//! on a device at the snapshot — the only kernel queues that are not
//! already in the nodes); page 1 holds the domain names used in reports.
//!
//! Page 0: magic `STETKERN` (8), format u32, running-set length u32, clock
//! ns u64, period ms u64, restarts u64, generation u64 (the checkpoint this
//! state was snapshotted for), reserved to byte 64, then 16-byte entries
//! `oid | kind << 56`, `aux`.
//! Page 1: up to 64 entries of (root oid u64, 24 name bytes, NUL-padded).

/// Page oid of the state page.
pub const STATE_PAGE: u64 = 0;
/// Page oid of the names page.
pub const NAMES_PAGE: u64 = 1;
/// Running-set entries that fit in the state page.
pub const MAX_RUNNING: usize = (4096 - 64) / 16;
/// Names that fit in the names page.
pub const MAX_NAMES: usize = 4096 / 32;
/// Bytes of a name.
pub const NAME_LEN: usize = 24;

const MAGIC: [u8; 8] = *b"STETKERN";
const FORMAT: u32 = 1;

/// Why a domain was in the running set, and how it resumes after a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Ready or running (or stalled: it re-executes its call).
    Ready = 0,
    /// Asleep on the sleep key: resumed with `RESTARTED`.
    Sleeping = 1,
    /// Waiting for the journal (the disk): resumed with `RESTARTED`.
    Journal = 2,
    /// Waiting for checkpoint `aux` to commit: resumed with `OK` if the
    /// restart is from that checkpoint or a later one, else `RESTARTED`.
    Checkpoint = 3,
    /// Waiting for a restart: resumed with `RESTARTED`.
    RestartWait = 4,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            0 => Kind::Ready,
            1 => Kind::Sleeping,
            2 => Kind::Journal,
            3 => Kind::Checkpoint,
            4 => Kind::RestartWait,
            _ => return None,
        })
    }
}

/// One running-set entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The domain's root node.
    pub oid: u64,
    /// Why it was there.
    pub kind: Kind,
    /// Kind-specific (the checkpoint generation for `Checkpoint`).
    pub aux: u64,
}

/// The fixed part of the state page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// System time at the snapshot (ns since the store was created).
    pub clock_ns: u64,
    /// Checkpoint period (ms; 0 = none).
    pub period_ms: u64,
    /// Restarts so far.
    pub restarts: u64,
    /// The checkpoint generation the state was taken for.
    pub generation: u64,
}

/// Why a state page was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateError {
    /// All zero: the store holds no kernel state (not a Stet store yet).
    Blank,
    /// Bad magic, format or contents.
    Damaged,
}

fn put(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Encodes the state page; entries beyond `MAX_RUNNING` are dropped (the
/// caller reports it). Returns how many were written.
pub fn encode_state(h: &Header, running: impl Iterator<Item = Entry>, page: &mut [u8]) -> usize {
    page[..4096].fill(0);
    page[0..8].copy_from_slice(&MAGIC);
    page[8..12].copy_from_slice(&FORMAT.to_le_bytes());
    put(page, 16, h.clock_ns);
    put(page, 24, h.period_ms);
    put(page, 32, h.restarts);
    put(page, 40, h.generation);
    let mut n = 0;
    for e in running.take(MAX_RUNNING) {
        let at = 64 + 16 * n;
        put(page, at, (e.oid & ((1 << 56) - 1)) | (e.kind as u64) << 56);
        put(page, at + 8, e.aux);
        n += 1;
    }
    page[12..16].copy_from_slice(&(n as u32).to_le_bytes());
    n
}

/// Decodes the header of a state page.
pub fn decode_header(page: &[u8]) -> Result<(Header, usize), StateError> {
    if page[..4096].iter().all(|&b| b == 0) {
        return Err(StateError::Blank);
    }
    if page[0..8] != MAGIC || page[8..12] != FORMAT.to_le_bytes() {
        return Err(StateError::Damaged);
    }
    let n = u32::from_le_bytes([page[12], page[13], page[14], page[15]]) as usize;
    if n > MAX_RUNNING {
        return Err(StateError::Damaged);
    }
    let h = Header {
        clock_ns: get(page, 16),
        period_ms: get(page, 24),
        restarts: get(page, 32),
        generation: get(page, 40),
    };
    Ok((h, n))
}

/// Running-set entry `i` of a state page (`i` below the decoded length).
pub fn entry(page: &[u8], i: usize) -> Result<Entry, StateError> {
    let at = 64 + 16 * i;
    let w = get(page, at);
    let kind = Kind::from_u8((w >> 56) as u8).ok_or(StateError::Damaged)?;
    Ok(Entry {
        oid: w & ((1 << 56) - 1),
        kind,
        aux: get(page, at + 8),
    })
}

/// Encodes the names page.
pub fn encode_names<'a>(names: impl Iterator<Item = (u64, &'a [u8])>, page: &mut [u8]) {
    page[..4096].fill(0);
    for (i, (oid, name)) in names.take(MAX_NAMES).enumerate() {
        let at = 32 * i;
        put(page, at, oid);
        let len = name.len().min(NAME_LEN);
        page[at + 8..at + 8 + len].copy_from_slice(&name[..len]);
    }
}

/// Name `i` of a names page: (root oid, name bytes without padding), or
/// `None` for an empty entry.
pub fn name(page: &[u8], i: usize) -> Option<(u64, &[u8])> {
    let at = 32 * i;
    let raw = &page[at + 8..at + 32];
    let len = raw.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
    (len > 0).then(|| (get(page, at), &raw[..len]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn blank_is_not_damaged() {
        assert_eq!(decode_header(&[0u8; 4096]), Err(StateError::Blank));
        let mut p = [0u8; 4096];
        p[100] = 1;
        assert_eq!(decode_header(&p), Err(StateError::Damaged));
    }

    #[test]
    fn names_round_trip() {
        let mut p = [0u8; 4096];
        let list: [(u64, &[u8]); 2] =
            [(7, b"echo"), (9, b"a-very-long-domain-name-longer-than-24")];
        encode_names(list.iter().copied(), &mut p);
        assert_eq!(name(&p, 0), Some((7, &b"echo"[..])));
        assert_eq!(name(&p, 1), Some((9, &b"a-very-long-domain-name-"[..])));
        assert_eq!(name(&p, 2), None);
    }

    fn kind() -> impl Strategy<Value = Kind> {
        (0u8..5).prop_map(|k| Kind::from_u8(k).unwrap())
    }

    proptest! {
        #[test]
        fn state_round_trips(
            clock in any::<u64>(), period in any::<u64>(), restarts in any::<u64>(), generation in any::<u64>(),
            run in proptest::collection::vec((0u64..1 << 40, kind(), any::<u64>()), 0..300),
        ) {
            let h = Header { clock_ns: clock, period_ms: period, restarts, generation };
            let mut p = [0u8; 4096];
            let entries = run.iter().map(|&(oid, kind, aux)| Entry { oid, kind, aux });
            let n = encode_state(&h, entries, &mut p);
            prop_assert_eq!(n, run.len().min(MAX_RUNNING));
            let (h2, n2) = decode_header(&p).unwrap();
            prop_assert_eq!(h2, h);
            prop_assert_eq!(n2, n);
            for (i, &(oid, kind, aux)) in run.iter().take(n).enumerate() {
                prop_assert_eq!(entry(&p, i).unwrap(), Entry { oid, kind, aux });
            }
        }
    }
}
