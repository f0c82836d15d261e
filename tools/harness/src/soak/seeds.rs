//! Seeds: a fresh one per soak, one per unit derived from it, and the
//! replay tokens that name a unit (`<campaign>/<variant>:<seed>[:<detail>]`).

use std::fmt;

use stet_prng::mix;

/// A seed no earlier soak used (the OS's random bytes; failing that the
/// clock and the process id).
pub fn fresh() -> u64 {
    use std::io::Read as _;
    let mut b = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    match random {
        Ok(()) => u64::from_le_bytes(b),
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            mix(t ^ u64::from(std::process::id()) << 32)
        }
    }
}

/// FNV-1a of a name: campaigns' seeds differ even for the same index.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The seed of unit `index` of `campaign` in the soak seeded `soak`.
pub fn unit(soak: u64, campaign: &str, index: u64) -> u64 {
    mix(soak ^ mix(name_hash(campaign)) ^ mix(index.wrapping_add(1)))
}

/// What names one unit for a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The campaign (`kfuzz`, `cuts`, …).
    pub campaign: String,
    /// Its variant (`plain`, `store`, …).
    pub variant: String,
    /// The unit's seed.
    pub seed: u64,
    /// A part of the unit (a batch of the system-call fuzzer, a flip).
    pub detail: Option<u64>,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}:{:#x}", self.campaign, self.variant, self.seed)?;
        if let Some(d) = self.detail {
            write!(f, ":{d}")?;
        }
        Ok(())
    }
}

fn number(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("{s:?} is not a number"))
}

impl std::str::FromStr for Token {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("replay {s:?}: want <campaign>/<variant>:<seed>[:<detail>]");
        let (name, rest) = s.split_once(':').ok_or_else(bad)?;
        let (campaign, variant) = name.split_once('/').ok_or_else(bad)?;
        if campaign.is_empty() || variant.is_empty() {
            return Err(bad());
        }
        let (seed, detail) = match rest.split_once(':') {
            Some((seed, detail)) => (seed, Some(number(detail)?)),
            None => (rest, None),
        };
        Ok(Token {
            campaign: campaign.into(),
            variant: variant.into(),
            seed: number(seed)?,
            detail,
        })
    }
}

/// The command that replays `token`.
pub fn replay_command(token: &Token) -> String {
    format!("make soak REPLAY={token}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_seeds_differ_by_campaign_index_and_soak() {
        let a = unit(1, "kfuzz", 0);
        assert_eq!(a, unit(1, "kfuzz", 0));
        assert_ne!(a, unit(1, "kfuzz", 1));
        assert_ne!(a, unit(1, "cuts", 0));
        assert_ne!(a, unit(2, "kfuzz", 0));
        // Pinned: a printed soak seed must give the same units everywhere.
        assert_eq!(unit(1, "kfuzz", 0), 0x99b7_67b9_9e74_014a);
        let many: std::collections::HashSet<u64> = (0..1000).map(|i| unit(7, "flips", i)).collect();
        assert_eq!(many.len(), 1000);
    }

    #[test]
    fn fresh_seeds_are_fresh() {
        assert_ne!(fresh(), fresh());
    }

    #[test]
    fn tokens_round_trip() {
        let t = Token {
            campaign: "sysfuzz".into(),
            variant: "full".into(),
            seed: 0xbeef,
            detail: Some(12),
        };
        assert_eq!(t.to_string(), "sysfuzz/full:0xbeef:12");
        assert_eq!("sysfuzz/full:0xbeef:12".parse::<Token>(), Ok(t.clone()));
        let t2 = Token { detail: None, ..t };
        assert_eq!("sysfuzz/full:48879".parse::<Token>(), Ok(t2.clone()));
        assert_eq!(replay_command(&t2), "make soak REPLAY=sysfuzz/full:0xbeef");
        for bad in [
            "kfuzz",
            "kfuzz:1",
            "kfuzz/:1",
            "/x:1",
            "kfuzz/plain:zz",
            "a/b:1:x",
        ] {
            assert!(bad.parse::<Token>().is_err(), "{bad}");
        }
    }
}
