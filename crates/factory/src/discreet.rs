//! The discreetness rule: a factory's products are **discreet** (KeyKOS:
//! confined) when nothing they hold can carry information out to anyone
//! but their requester. A product holds its components, the argument key
//! and its bank (both from the requester: channels the requester opened
//! itself) and nothing else, so the question is whether every component
//! key is discreet.
//!
//! A key is discreet when it gives no way to write anything another
//! domain can read, nor to send a message:
//!
//! * void (and any key to a destroyed object, which acts as void), number,
//!   discrim, sleep (it reads the clock and waits; timing channels are
//!   outside discreetness, as in KeyKOS);
//! * a read-only page key;
//! * a sense node key (read-only and weak: everything fetched through it
//!   is diminished, so discreet again — segment keys come out no-call —
//!   and a segment key made through it is no-call too);
//! * a read-only, weak, no-call segment key (no keeper inside is ever
//!   invoked for it; segment FETCH always diminishes). Without no-call, a
//!   product holding a meter (the requester may pass one as the argument)
//!   could build a domain over the segment and fault into a keeper in it:
//!   a message to a third party;
//! * a requestor key of a factory of this same server that is sealed and
//!   whose products are discreet (its products are confined in turn).
//!
//! Everything else is not: writable page, node or segment keys, start,
//! resume, domain and meter keys, the console, checkpoint, journal,
//! key-bits and range services, and forwarders this server did not make
//! as requestor keys (a space bank key, a builder key, anyone's
//! forwarder). A type this rule does not know is not discreet.
//!
//! A factory's verdict is decided when it is sealed, from its components
//! and the verdicts of the factories it nests, which must be sealed
//! already. A cycle of factories needs one of them to nest a factory not
//! yet sealed, so every cycle comes out "not discreet", and the check
//! costs one look per component, never a search of the graph.

use stet_abi::service::factory::{why, COMPONENTS};
use stet_keys::{rights, KeyType};

/// What the rule says of a key from its type and rights alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Discreet.
    Discreet,
    /// Not discreet.
    NotDiscreet,
    /// A forwarder key: discreet only if it is a requestor key of a
    /// sealed, discreet factory of this server.
    Forwarder,
}

/// Classifies a key as discrim CLASSIFY reports it: `ty` its type,
/// `rights` its rights, `dangling` whether its object was destroyed.
pub fn classify(ty: u64, rights_bits: u64, dangling: bool) -> Class {
    if dangling {
        return Class::Discreet;
    }
    let Some(t) = u8::try_from(ty).ok().and_then(KeyType::from_u8) else {
        return Class::NotDiscreet;
    };
    let has = |r: u8| rights_bits & r as u64 == r as u64;
    let yes = |b: bool| {
        if b {
            Class::Discreet
        } else {
            Class::NotDiscreet
        }
    };
    match t {
        KeyType::Void | KeyType::Number | KeyType::Discrim | KeyType::Sleep => Class::Discreet,
        KeyType::Page => yes(has(rights::RO)),
        KeyType::Node => yes(has(rights::RO | rights::WEAK)),
        KeyType::Segment => yes(has(rights::RO | rights::WEAK | rights::NOCALL)),
        KeyType::Forwarder => Class::Forwarder,
        _ => Class::NotDiscreet,
    }
}

/// What a factory's component slot holds, as far as the rule cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// Nothing installed (void).
    Empty,
    /// A discreet key of type `ty`.
    Discreet {
        /// Its key type.
        ty: u8,
    },
    /// A key that is not discreet: its type and why ([`why`]).
    NotDiscreet {
        /// Its key type.
        ty: u8,
        /// Why (a [`why`] code).
        why: u8,
    },
    /// A requestor key of factory `n` of this server, which was at
    /// generation `gen` when installed (a later factory reusing the
    /// number has another).
    Factory {
        /// The factory's number.
        n: u32,
        /// Its record's generation.
        gen: u32,
    },
}

impl Component {
    /// The component as one word of the books.
    pub fn encode(self) -> u64 {
        match self {
            Component::Empty => 0,
            Component::Discreet { ty } => 1 | (ty as u64) << 8,
            Component::NotDiscreet { ty, why } => 2 | (ty as u64) << 8 | (why as u64) << 16,
            Component::Factory { n, gen } => 3 | ((n as u64) & 0xff_ffff) << 8 | (gen as u64) << 32,
        }
    }

    /// The component a word holds ([`Component::encode`]); an unknown tag
    /// reads as not discreet.
    pub fn decode(w: u64) -> Component {
        match w & 0xff {
            0 => Component::Empty,
            1 => Component::Discreet { ty: (w >> 8) as u8 },
            3 => Component::Factory {
                n: ((w >> 8) & 0xff_ffff) as u32,
                gen: (w >> 32) as u32,
            },
            _ => Component::NotDiscreet {
                ty: (w >> 8) as u8,
                why: (w >> 16) as u8,
            },
        }
    }
}

/// Where a nested factory stands, for [`verdict`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Nested {
    /// It no longer exists (its requestor key is now void).
    Gone,
    /// It exists but is not sealed.
    Unsealed,
    /// Sealed, with this verdict.
    Sealed(bool),
}

/// A factory's answer to `IS_DISCREET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Verdict {
    /// Whether its products are discreet.
    pub discreet: bool,
    /// The first component slot that is not (0: none, or not sealed).
    pub slot: u8,
    /// Why ([`why`]; 0 when discreet).
    pub why: u8,
    /// The type of that slot's key.
    pub ty: u8,
}

impl Verdict {
    /// Discreet.
    pub const DISCREET: Verdict = Verdict {
        discreet: true,
        slot: 0,
        why: 0,
        ty: 0,
    };

    /// The answer of a factory that is not sealed.
    pub const UNSEALED: Verdict = Verdict {
        discreet: false,
        slot: 0,
        why: why::UNSEALED as u8,
        ty: 0,
    };

    /// `IS_DISCREET`'s words.
    pub fn words(self) -> [u64; 4] {
        [
            self.discreet as u64,
            self.slot as u64,
            self.why as u64,
            self.ty as u64,
        ]
    }

    /// One word of the books.
    pub fn encode(self) -> u64 {
        self.discreet as u64
            | (self.slot as u64) << 8
            | (self.why as u64) << 16
            | (self.ty as u64) << 24
    }

    /// The verdict a word holds ([`Verdict::encode`]).
    pub fn decode(w: u64) -> Verdict {
        Verdict {
            discreet: w & 1 != 0,
            slot: (w >> 8) as u8,
            why: (w >> 16) as u8,
            ty: (w >> 24) as u8,
        }
    }
}

/// The verdict of a factory being sealed with `components` (slot `i + 1`
/// in `components[i]`); `nested(n, gen)` says where a nested factory
/// stands. The first slot that is not discreet decides.
pub fn verdict(
    components: &[Component; COMPONENTS],
    mut nested: impl FnMut(u32, u32) -> Nested,
) -> Verdict {
    for (i, c) in components.iter().enumerate() {
        let slot = i as u8 + 1;
        let not = |why: u64, ty: u8| Verdict {
            discreet: false,
            slot,
            why: why as u8,
            ty,
        };
        match *c {
            Component::Empty | Component::Discreet { .. } => {}
            Component::NotDiscreet { ty, why } => return not(why as u64, ty),
            Component::Factory { n, gen } => match nested(n, gen) {
                Nested::Gone | Nested::Sealed(true) => {}
                Nested::Unsealed => return not(why::NESTED_UNSEALED, KeyType::Forwarder as u8),
                Nested::Sealed(false) => {
                    return not(why::NESTED_NOT_DISCREET, KeyType::Forwarder as u8)
                }
            },
        }
    }
    Verdict::DISCREET
}
