//! Key spec strings (`console`, `start:echo:7`, `range:pages:16`, …): the
//! syntax only; `lib.rs` resolves names to objects.

use stet_keys::{KeyType, Space};

/// Which node of a domain a `node:<dom>:<part>` key designates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Root,
    General,
    Annex,
}

/// A parsed key spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeySpec {
    Void,
    Service(KeyType),
    Number(u64),
    Start(String, u8),
    Domain(String),
    Meter(String),
    MeterNode(String),
    Space(String),
    SpaceNode(String),
    Node(String, Part),
    Fpu(String),
    HeapPage(String, u64),
    Range(Space, u32),
    Supply(usize),
    Forwarder(String, u32),
    Program(String),
    Programs(Vec<String>),
    File(String),
    Text(String),
    FreshNode,
    FreshPage,
    IoPorts(u16, u32),
    Irq(u8),
}

/// Most pages a `supply:<n>` node holds.
pub(crate) const MAX_SUPPLY: usize = 16;

/// A decimal or `0x`-hexadecimal `u64`.
pub(crate) fn parse_number(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u64::from_str_radix(hex, 16).ok()
        }
        Some(_) => None,
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    };
    r.ok_or_else(|| format!("bad number {s:?} (decimal or 0x-hex, at most 2^64 - 1)"))
}

fn parse_info(s: &str) -> Result<u8, String> {
    let n = parse_number(s)?;
    u8::try_from(n).map_err(|_| format!("key info {n} does not fit a byte"))
}

fn name(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("missing name".into())
    } else {
        Ok(s.into())
    }
}

/// A keeper: `<domain>` or `<domain>:<info>`, meaning a start key.
pub(crate) fn parse_start(s: &str) -> Result<(String, u8), String> {
    match s.split_once(':') {
        None => Ok((name(s)?, 0)),
        Some((d, info)) => Ok((name(d)?, parse_info(info)?)),
    }
}

/// Parses one key spec.
pub(crate) fn parse_key(s: &str) -> Result<KeySpec, String> {
    // Text is taken verbatim, colons and all.
    if let Some(t) = s.strip_prefix("text:") {
        if t.len() > 4096 {
            return Err("text:<…> holds at most 4096 bytes".into());
        }
        return Ok(KeySpec::Text(t.into()));
    }
    let parts: Vec<&str> = s.split(':').collect();
    let ks = match parts.as_slice() {
        ["void"] => KeySpec::Void,
        ["console"] => KeySpec::Service(KeyType::Console),
        ["sleep"] => KeySpec::Service(KeyType::Sleep),
        ["discrim"] => KeySpec::Service(KeyType::Discrim),
        ["keybits"] => KeySpec::Service(KeyType::KeyBits),
        ["checkpoint"] => KeySpec::Service(KeyType::Checkpoint),
        ["journal"] => KeySpec::Service(KeyType::Journal),
        ["sysinfo"] => KeySpec::Service(KeyType::SysInfo),
        ["number", n] => KeySpec::Number(parse_number(n)?),
        ["start", d] => KeySpec::Start(name(d)?, 0),
        ["start", d, info] => KeySpec::Start(name(d)?, parse_info(info)?),
        ["domain", d] => KeySpec::Domain(name(d)?),
        ["meter", m] => KeySpec::Meter(name(m)?),
        ["meter-node", m] => KeySpec::MeterNode(name(m)?),
        ["space", d] => KeySpec::Space(name(d)?),
        ["space-node", d] => KeySpec::SpaceNode(name(d)?),
        ["node", d, part] => {
            let part = match *part {
                "root" => Part::Root,
                "general" => Part::General,
                "annex" => Part::Annex,
                other => {
                    return Err(format!(
                        "unknown node part {other:?} (root, general or annex)"
                    ))
                }
            };
            KeySpec::Node(name(d)?, part)
        }
        ["fpu", d] => KeySpec::Fpu(name(d)?),
        ["heap-page", d, i] => KeySpec::HeapPage(name(d)?, parse_number(i)?),
        ["range", space, n] => {
            let space = match *space {
                "pages" => Space::Page,
                "nodes" => Space::Node,
                other => return Err(format!("unknown range space {other:?} (pages or nodes)")),
            };
            let n = parse_number(n)?;
            match u32::try_from(n) {
                Ok(n) if n > 0 => KeySpec::Range(space, n),
                _ => return Err(format!("range of {n} objects (1 to 2^32 - 1)")),
            }
        }
        ["supply", n] => {
            let n = parse_number(n)?;
            if n > MAX_SUPPLY as u64 {
                return Err(format!("supply of {n} pages (at most {MAX_SUPPLY})"));
            }
            KeySpec::Supply(n as usize)
        }
        ["forwarder", d, data] => {
            let n = parse_number(data)?;
            match u32::try_from(n) {
                Ok(n) => KeySpec::Forwarder(name(d)?, n),
                Err(_) => return Err(format!("forwarder data word {n} does not fit 32 bits")),
            }
        }
        ["program", p] => KeySpec::Program(name(p)?),
        ["file", f] => KeySpec::File(name(f)?),
        ["programs", ps @ ..] if !ps.is_empty() && ps.len() <= 16 => {
            KeySpec::Programs(ps.iter().map(|p| name(p)).collect::<Result<_, _>>()?)
        }
        ["programs", ..] => return Err("programs:<a>:<b>… names 1 to 16 programs".into()),
        ["ioports", base, count] => {
            let (base, count) = (parse_number(base)?, parse_number(count)?);
            if base >= 1 << 16 || count == 0 || base + count > 1 << 16 {
                return Err(format!(
                    "ports {base:#x}+{count}: need 1 or more ports, all below 0x10000"
                ));
            }
            KeySpec::IoPorts(base as u16, count as u32)
        }
        ["irq", n] => {
            let n = parse_number(n)?;
            if n >= stet_keys::IRQ_LINES as u64 {
                return Err(format!(
                    "irq {n}: ISA lines are 0 to {}",
                    stet_keys::IRQ_LINES - 1
                ));
            }
            KeySpec::Irq(n as u8)
        }
        ["fresh-node"] => KeySpec::FreshNode,
        ["fresh-page"] => KeySpec::FreshPage,
        _ => return Err(format!("unknown key spec {s:?}")),
    };
    Ok(ks)
}
