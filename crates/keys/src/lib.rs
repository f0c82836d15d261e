//! Keys: Stet's capabilities, 16 bytes each.
//!
//! Every key lives in a slot of a node; user code never sees key bits (only
//! the kernel's privileged key-bits service can show them). A key is two
//! little-endian words:
//!
//! ```text
//! w0: type:8 | rights:8 | info:8 | aux:8 | version:32
//! w1: oid:40 | hint:24
//! ```
//!
//! * `type` — a [`KeyType`].
//! * `rights` — [`rights`] bits: read-only, weak, no-call, keeper.
//! * `info` — the byte a start key's recipient sees with every message
//!   (KeyKOS "databyte").
//! * `aux` — per type: a segment key's size (log16 of its size in pages).
//! * `version` — the object's version when the key was made. Destroying or
//!   reallocating an object bumps its version, which voids every key to it.
//! * `oid` — the object's identity (pages and nodes are separate spaces).
//! * `hint` — where the kernel last found the object in its object cache.
//!   Only a cache: checked against the oid on every use, ignored by key
//!   identity, and written as zero to disk.
//!
//! Five types use the words differently:
//!
//! * **resume**: `w0 = type:8 | kind:8 | count:48` — `count` is the low 48
//!   bits of the domain's call count when it called; the key is valid only
//!   while the domain still waits on that very call, so using one copy voids
//!   them all.
//! * **number**: `w0 = type:8 | 0:24 | high:32`, `w1 = low:64` — 96 bits of
//!   data, no reference.
//! * **range**: `w0 = type:8 | space:8 | 0:16 | count:32`, `w1 = first oid` —
//!   the authority to create and destroy `count` objects from `first` on.
//! * **ioports**: `w0 = type:8 | 0:24 | count:32`, `w1 = base` — the
//!   authority to use the I/O ports `[base, base + count)` (1 ≤ count,
//!   base + count ≤ 65536) while the domain holding it runs.
//! * **irq**: `w0 = type:8 | 0:56`, `w1 = line` — one ISA interrupt line
//!   (0..16): waiting for it and acknowledging it.
#![no_std]

#[cfg(test)]
mod tests;

/// Bytes in a key.
pub const KEY_SIZE: usize = 16;
/// Bits of an object identity.
pub const OID_BITS: u32 = 40;
/// The largest object identity.
pub const MAX_OID: u64 = (1 << OID_BITS) - 1;
/// The largest hint (object-cache index).
pub const MAX_HINT: u32 = (1 << 24) - 1;
/// Bits of a resume key's call count.
pub const CALL_COUNT_BITS: u32 = 48;
/// Mask of a resume key's call count.
pub const CALL_COUNT_MASK: u64 = (1 << CALL_COUNT_BITS) - 1;
/// Largest segment size code (`aux`): 16^10 pages covers 2^52 bytes.
pub const MAX_LSS: u8 = 10;

/// What a key designates. The numbers are part of the ABI (discrim reports
/// them) and of the disk format.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyType {
    /// Designates nothing; invoking it answers "void".
    Void = 0,
    /// Carries 96 bits of data.
    Number = 1,
    /// A page (4 KiB).
    Page = 2,
    /// A node (16 key slots).
    Node = 3,
    /// A segment: a tree of nodes with pages at the leaves.
    Segment = 4,
    /// A domain: full control of its state.
    Domain = 5,
    /// A start key: sends a message to an available domain.
    Start = 6,
    /// A resume key: one-shot reply to a domain waiting on its call.
    Resume = 7,
    /// A meter (CPU time).
    Meter = 8,
    /// Kernel service: tells a key's type and rights.
    Discrim = 9,
    /// Kernel service: time and sleeping.
    Sleep = 10,
    /// Kernel service: the early console.
    Console = 11,
    /// Kernel service (privileged): a key's raw bits.
    KeyBits = 12,
    /// A range of object identities (privileged: creates objects).
    Range = 13,
    /// Kernel service: checkpoints (take one, wait for one, statistics,
    /// the period).
    Checkpoint = 14,
    /// Kernel service: commits one page to disk synchronously.
    Journal = 15,
    /// A node that forwards every invocation to the start key in its slot
    /// 0, adding the 32-bit data word of its slot 1 (a revocable,
    /// labelled start key: destroying the node voids every copy).
    Forwarder = 16,
    /// A range of I/O ports (privileged: a driver's device registers).
    IoPorts = 17,
    /// One interrupt line (privileged: a driver's interrupt).
    Irq = 18,
    /// Kernel service (privileged: the shell's): the domains in the
    /// context cache, object-cache statistics, naming domains.
    SysInfo = 19,
}

/// Number of ports in the I/O space (an ioports key's `base + count` is at
/// most this).
pub const IO_PORTS: u32 = 1 << 16;
/// Number of interrupt lines an irq key can name (the ISA lines 0..16).
pub const IRQ_LINES: u8 = 16;

/// Every key type, in order of number.
pub const ALL_TYPES: [KeyType; 20] = [
    KeyType::Void,
    KeyType::Number,
    KeyType::Page,
    KeyType::Node,
    KeyType::Segment,
    KeyType::Domain,
    KeyType::Start,
    KeyType::Resume,
    KeyType::Meter,
    KeyType::Discrim,
    KeyType::Sleep,
    KeyType::Console,
    KeyType::KeyBits,
    KeyType::Range,
    KeyType::Checkpoint,
    KeyType::Journal,
    KeyType::Forwarder,
    KeyType::IoPorts,
    KeyType::Irq,
    KeyType::SysInfo,
];

/// Key types by number (`None`: unassigned).
const BY_NUMBER: [Option<KeyType>; 20] = {
    let mut t = [None; 20];
    let mut i = 0;
    while i < ALL_TYPES.len() {
        t[ALL_TYPES[i] as usize] = Some(ALL_TYPES[i]);
        i += 1;
    }
    t
};

/// The type of every possible type byte (unassigned ones: void), for
/// [`Key::key_type`], which sits under every key access in the kernel.
static TYPE_OF: [KeyType; 256] = {
    let mut t = [KeyType::Void; 256];
    let mut i = 0;
    while i < ALL_TYPES.len() {
        t[ALL_TYPES[i] as usize] = ALL_TYPES[i];
        i += 1;
    }
    t
};

impl KeyType {
    /// The type with number `n`.
    pub fn from_u8(n: u8) -> Option<KeyType> {
        // A table lookup, like the dense numbering before 16 was skipped:
        // this sits under every key access, and a branchy version kept the
        // compiler from inlining the key accessors into the IPC path.
        BY_NUMBER.get(n as usize).copied().flatten()
    }

    /// The rights bits meaningful for this type; all others must be zero.
    pub fn allowed_rights(self) -> u8 {
        use rights::*;
        match self {
            KeyType::Page => RO,
            KeyType::Node => RO | WEAK,
            KeyType::Segment => RO | WEAK | NOCALL | KEEPER,
            _ => 0,
        }
    }

    /// Whether keys of this type designate a node or page by identity.
    pub fn designates_object(self) -> bool {
        matches!(
            self,
            KeyType::Page
                | KeyType::Node
                | KeyType::Segment
                | KeyType::Domain
                | KeyType::Start
                | KeyType::Resume
                | KeyType::Meter
                | KeyType::Forwarder
        )
    }

    /// Lower-case name, for reports and documentation.
    pub fn name(self) -> &'static str {
        match self {
            KeyType::Void => "void",
            KeyType::Number => "number",
            KeyType::Page => "page",
            KeyType::Node => "node",
            KeyType::Segment => "segment",
            KeyType::Domain => "domain",
            KeyType::Start => "start",
            KeyType::Resume => "resume",
            KeyType::Meter => "meter",
            KeyType::Discrim => "discrim",
            KeyType::Sleep => "sleep",
            KeyType::Console => "console",
            KeyType::KeyBits => "keybits",
            KeyType::Range => "range",
            KeyType::Checkpoint => "checkpoint",
            KeyType::Journal => "journal",
            KeyType::Forwarder => "forwarder",
            KeyType::IoPorts => "ioports",
            KeyType::Irq => "irq",
            KeyType::SysInfo => "sysinfo",
        }
    }
}

/// Rights bits (`w0` bits 8..16).
pub mod rights {
    /// Read-only: no writes through this key or anything reached through it.
    pub const RO: u8 = 1;
    /// Weak: keys fetched through it are diminished (see [`super::Key::diminish`]).
    /// A node key that is read-only and weak is a *sense* key.
    pub const WEAK: u8 = 2;
    /// No-call (segments): an invalid reference below this key does not
    /// invoke any keeper inside it.
    pub const NOCALL: u8 = 4;
    /// Keeper (segments): slot 15 of the node holds the segment's keeper
    /// (a start key) and is not part of the address space.
    pub const KEEPER: u8 = 8;
}

/// The two object spaces.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// 4 KiB data pages.
    Page = 0,
    /// 16-slot key nodes.
    Node = 1,
}

/// Kinds of resume key.
pub mod resume_kind {
    /// The reply to a call.
    pub const REPLY: u8 = 0;
    /// The restart key a keeper gets with a fault: invoking it with order
    /// 0 clears the fault and lets the domain run; no message is written
    /// into the domain's registers.
    pub const FAULT: u8 = 1;
}

/// A key. All-zero is the void key.
#[repr(C, align(16))]
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    zerocopy::FromZeros,
    zerocopy::IntoBytes,
    zerocopy::Immutable,
    zerocopy::KnownLayout,
)]
pub struct Key {
    w0: u64,
    w1: u64,
}

const OID_MASK: u64 = MAX_OID;

impl Key {
    /// The void key.
    pub const VOID: Key = Key { w0: 0, w1: 0 };

    /// The two words.
    pub const fn words(self) -> (u64, u64) {
        (self.w0, self.w1)
    }

    /// Decodes two words, accepting only a well-formed key (see [`Key::is_valid`]).
    pub fn from_words(w0: u64, w1: u64) -> Option<Key> {
        let k = Key { w0, w1 };
        k.is_valid().then_some(k)
    }

    /// The 16 bytes, little-endian.
    pub fn to_bytes(self) -> [u8; KEY_SIZE] {
        let mut b = [0u8; KEY_SIZE];
        b[..8].copy_from_slice(&self.w0.to_le_bytes());
        b[8..].copy_from_slice(&self.w1.to_le_bytes());
        b
    }

    /// Decodes 16 bytes (see [`Key::from_words`]).
    pub fn from_bytes(b: &[u8; KEY_SIZE]) -> Option<Key> {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        let w0 = u64::from_le_bytes(w);
        w.copy_from_slice(&b[8..]);
        Key::from_words(w0, u64::from_le_bytes(w))
    }

    fn obj(t: KeyType, rights: u8, info: u8, aux: u8, version: u32, oid: u64) -> Key {
        debug_assert!(oid <= MAX_OID);
        Key {
            w0: t as u64
                | (rights as u64) << 8
                | (info as u64) << 16
                | (aux as u64) << 24
                | (version as u64) << 32,
            w1: oid & OID_MASK,
        }
    }

    /// A number key carrying `high:low`.
    pub fn number(low: u64, high: u32) -> Key {
        Key {
            w0: KeyType::Number as u64 | (high as u64) << 32,
            w1: low,
        }
    }

    /// A page key (`ro`: read-only).
    pub fn page(oid: u64, version: u32, ro: bool) -> Key {
        Key::obj(
            KeyType::Page,
            if ro { rights::RO } else { 0 },
            0,
            0,
            version,
            oid,
        )
    }

    /// A node key with `rights` (`RO`, `WEAK`; both = sense key).
    pub fn node(oid: u64, version: u32, rights: u8) -> Key {
        Key::obj(
            KeyType::Node,
            rights & (rights::RO | rights::WEAK),
            0,
            0,
            version,
            oid,
        )
    }

    /// A segment key for a node covering 16^`lss` pages.
    pub fn segment(oid: u64, version: u32, lss: u8, rights: u8) -> Key {
        Key::obj(
            KeyType::Segment,
            rights & KeyType::Segment.allowed_rights(),
            0,
            lss.clamp(1, MAX_LSS),
            version,
            oid,
        )
    }

    /// A domain key to the domain whose root node is `oid`.
    pub fn domain(oid: u64, version: u32) -> Key {
        Key::obj(KeyType::Domain, 0, 0, 0, version, oid)
    }

    /// A start key with key info `info`.
    pub fn start(oid: u64, version: u32, info: u8) -> Key {
        Key::obj(KeyType::Start, 0, info, 0, version, oid)
    }

    /// A forwarder key to the node `oid` (see [`KeyType::Forwarder`]).
    pub fn forwarder(oid: u64, version: u32) -> Key {
        Key::obj(KeyType::Forwarder, 0, 0, 0, version, oid)
    }

    /// A meter key to the meter node `oid`.
    pub fn meter(oid: u64, version: u32) -> Key {
        Key::obj(KeyType::Meter, 0, 0, 0, version, oid)
    }

    /// A resume key to the domain `oid` for its call number `count`.
    pub fn resume(oid: u64, count: u64, kind: u8) -> Key {
        Key {
            w0: KeyType::Resume as u64 | ((kind & 1) as u64) << 8 | (count & CALL_COUNT_MASK) << 16,
            w1: oid & OID_MASK,
        }
    }

    /// A key to one of the kernel's services (discrim, sleep, console,
    /// key bits, checkpoint, journal). Other types give the void key.
    pub fn service(t: KeyType) -> Key {
        match t {
            KeyType::Discrim
            | KeyType::Sleep
            | KeyType::Console
            | KeyType::KeyBits
            | KeyType::Checkpoint
            | KeyType::Journal
            | KeyType::SysInfo => Key {
                w0: t as u64,
                w1: 0,
            },
            _ => Key::VOID,
        }
    }

    /// A range key over `count` objects of `space` starting at `first`.
    pub fn range(space: Space, first: u64, count: u32) -> Key {
        Key {
            w0: KeyType::Range as u64 | (space as u64) << 8 | (count as u64) << 32,
            w1: first & OID_MASK,
        }
    }

    /// An ioports key for the ports `[base, base + count)`; `None` unless
    /// `1 <= count` and `base + count <= 65536`.
    pub fn ioports(base: u16, count: u32) -> Option<Key> {
        (count >= 1 && base as u32 + count <= IO_PORTS).then_some(Key {
            w0: KeyType::IoPorts as u64 | (count as u64) << 32,
            w1: base as u64,
        })
    }

    /// An irq key for ISA interrupt line `line`; `None` unless `line < 16`.
    pub fn irq(line: u8) -> Option<Key> {
        (line < IRQ_LINES).then_some(Key {
            w0: KeyType::Irq as u64,
            w1: line as u64,
        })
    }

    /// An ioports key's `(base, count)`.
    pub fn ioports_parts(self) -> Option<(u16, u32)> {
        (self.key_type() == KeyType::IoPorts).then_some((self.w1 as u16, (self.w0 >> 32) as u32))
    }

    /// An irq key's line.
    pub fn irq_line(self) -> Option<u8> {
        (self.key_type() == KeyType::Irq).then_some(self.w1 as u8)
    }

    /// The key's type. Keys are validated when made, so this is total.
    #[inline]
    pub fn key_type(self) -> KeyType {
        // One load, no bounds check: every byte value has an entry.
        TYPE_OF[(self.w0 as u8) as usize]
    }

    /// Whether this is the void key.
    pub fn is_void(self) -> bool {
        self.w0 as u8 == 0
    }

    /// The rights bits (zero for resume, number and range keys).
    pub fn rights(self) -> u8 {
        match self.key_type() {
            KeyType::Page | KeyType::Node | KeyType::Segment => (self.w0 >> 8) as u8,
            _ => 0,
        }
    }

    /// Whether the key is read-only.
    pub fn is_ro(self) -> bool {
        self.rights() & rights::RO != 0
    }

    /// A start key's info byte (0 for other types).
    pub fn info(self) -> u8 {
        match self.key_type() {
            KeyType::Start => (self.w0 >> 16) as u8,
            _ => 0,
        }
    }

    /// A segment key's size code: it covers 16^lss pages.
    pub fn lss(self) -> u8 {
        match self.key_type() {
            KeyType::Segment => (self.w0 >> 24) as u8,
            _ => 0,
        }
    }

    /// The version, for keys that carry one.
    pub fn version(self) -> u32 {
        match self.key_type() {
            t if t.designates_object() && t != KeyType::Resume => (self.w0 >> 32) as u32,
            _ => 0,
        }
    }

    /// The object identity, for keys that designate an object.
    pub fn oid(self) -> u64 {
        if self.key_type().designates_object() {
            self.w1 & OID_MASK
        } else {
            0
        }
    }

    /// Which object space the designated object lives in.
    pub fn space(self) -> Option<Space> {
        match self.key_type() {
            KeyType::Page => Some(Space::Page),
            t if t.designates_object() => Some(Space::Node),
            _ => None,
        }
    }

    /// The object-cache hint (0 for keys that designate nothing).
    pub fn hint(self) -> u32 {
        if self.key_type().designates_object() {
            (self.w1 >> OID_BITS) as u32
        } else {
            0
        }
    }

    /// The same key remembering where the object was found. Keys that
    /// designate nothing are returned unchanged.
    pub fn with_hint(self, hint: u32) -> Key {
        if !self.key_type().designates_object() {
            return self;
        }
        Key {
            w0: self.w0,
            w1: (self.w1 & OID_MASK) | ((hint & MAX_HINT) as u64) << OID_BITS,
        }
    }

    /// The key without its hint: what the disk holds and what identity means.
    pub fn canonical(self) -> Key {
        self.with_hint(0)
    }

    /// Whether two keys convey the same authority (hints ignored).
    pub fn same(self, other: Key) -> bool {
        self.canonical() == other.canonical()
    }

    /// A number key's value `(low, high)`.
    pub fn number_value(self) -> Option<(u64, u32)> {
        (self.key_type() == KeyType::Number).then_some((self.w1, (self.w0 >> 32) as u32))
    }

    /// A resume key's `(call count, kind)`.
    pub fn resume_parts(self) -> Option<(u64, u8)> {
        (self.key_type() == KeyType::Resume)
            .then_some((self.w0 >> 16 & CALL_COUNT_MASK, (self.w0 >> 8) as u8 & 1))
    }

    /// A range key's `(space, first, count)`.
    pub fn range_parts(self) -> Option<(Space, u64, u32)> {
        if self.key_type() != KeyType::Range {
            return None;
        }
        let space = if (self.w0 >> 8) as u8 == 1 {
            Space::Node
        } else {
            Space::Page
        };
        Some((space, self.w1 & OID_MASK, (self.w0 >> 32) as u32))
    }

    /// The same key with rights added (`RO`, `WEAK`, `NOCALL`: only ever
    /// less authority; `KEEPER` is not a restriction and is not added).
    /// Types without those rights are returned unchanged.
    pub fn restrict(self, add: u8) -> Key {
        let t = self.key_type();
        let add = add & t.allowed_rights() & !rights::KEEPER;
        Key {
            w0: self.w0 | (add as u64) << 8,
            w1: self.w1,
        }
    }

    /// What a key becomes when fetched through a weak (sense) key: data
    /// stays data, memory becomes read-only and weak (a segment also
    /// no-call), and every other authority (domains, start, resume,
    /// meters, services, ranges) is lost. KeyKOS's rule, so that a sense
    /// key can never lead to a write, nor to a message: a segment mapped
    /// through a diminished key never invokes a keeper inside it.
    pub fn diminish(self) -> Key {
        match self.key_type() {
            KeyType::Void | KeyType::Number | KeyType::Discrim => self,
            KeyType::Page => self.restrict(rights::RO),
            KeyType::Node => self.restrict(rights::RO | rights::WEAK),
            KeyType::Segment => self.restrict(rights::RO | rights::WEAK | rights::NOCALL),
            _ => Key::VOID,
        }
    }

    /// Whether the bits form a key the kernel could have made: a known
    /// type, only the rights that type allows, zero in unused fields, an
    /// oid in range.
    pub fn is_valid(self) -> bool {
        let Some(t) = KeyType::from_u8(self.w0 as u8) else {
            return false;
        };
        let r = (self.w0 >> 8) as u8;
        let info = (self.w0 >> 16) as u8;
        let aux = (self.w0 >> 24) as u8;
        match t {
            KeyType::Void => self.w0 == 0 && self.w1 == 0,
            KeyType::Number => self.w0 & 0xffff_ff00 == 0,
            KeyType::Discrim
            | KeyType::Sleep
            | KeyType::Console
            | KeyType::KeyBits
            | KeyType::Checkpoint
            | KeyType::Journal
            | KeyType::SysInfo => self.w0 >> 8 == 0 && self.w1 == 0,
            KeyType::Range => r <= 1 && self.w0 & 0xffff_0000 == 0 && self.w1 <= MAX_OID,
            KeyType::IoPorts => {
                let count = self.w0 >> 32;
                self.w0 & 0xffff_ff00 == 0
                    && count >= 1
                    && self.w1 < IO_PORTS as u64
                    && self.w1 + count <= IO_PORTS as u64
            }
            KeyType::Irq => self.w0 >> 8 == 0 && self.w1 < IRQ_LINES as u64,
            KeyType::Resume => r <= 1,
            _ => {
                r & !t.allowed_rights() == 0
                    && (info == 0 || t == KeyType::Start)
                    && (aux == 0 || (t == KeyType::Segment && aux <= MAX_LSS))
                    && !(t == KeyType::Segment && aux == 0)
            }
        }
    }
}
