//! Builds Stet's big bang image (the `stet-bigbang` format) from a domain
//! spec ([`Spec`], usually TOML) and program ELF files: meters, domains
//! (root, general keys, register annex, FPU page), their address spaces
//! and the keys between them. `docs/IMAGE.md` describes the spec and the
//! objects built; the layouts follow `stet_abi::domain` exactly.
//!
//! Object identities: nodes and pages are numbered from 0 upward in the
//! order they are made: the prime meter (node 0), the other meters, then per
//! domain its root, general, annex and address-space root nodes and its FPU
//! page; then each domain's segment nodes and pages; then the fresh objects
//! of key specs; ranges last. Every object the image stores is at
//! [`VERSION`]; objects whose contents are zero (stack, heap, bss pages,
//! fresh objects, supplies) are not stored and are at version 0, the
//! version of every object the image does not list.

pub mod fixture;
mod keyspec;
mod space;
mod spec;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use stet_abi::domain::{self, root, state, Reg};
use stet_abi::layout;
use stet_bigbang::{Builder, PAGE_SIZE, SLOTS};
use stet_keys::{rights, Key, Space};

use keyspec::{KeySpec, Part};
pub use space::ROOT_LSS;
pub use spec::{DomainSpec, MeterSpec, RunState, Spec, DEFAULT_STACK_PAGES, PRIME, SHORTHAND_KEYS};

/// Version of every object the image stores.
pub const VERSION: u32 = 1;
/// Most general keys a domain is given (slots 1..=15).
pub const MAX_KEYS: usize = SLOTS - 1;
/// Most stack pages (`layout::STACK_SIZE`).
pub const MAX_STACK_PAGES: u64 = layout::STACK_SIZE / PAGE_SIZE as u64;
/// Most heap pages: 1 GiB. Larger than `layout::HEAP_SIZE` (the area a
/// segment keeper grows): an image may hold a heap bigger than RAM (the
/// store pages it), and its zero pages cost the image nothing but the
/// segment nodes over them.
pub const MAX_HEAP_PAGES: u64 = 1 << 18;
/// Initial `rflags`: IF and the always-one bit 1.
pub const RFLAGS: u64 = 0x202;

/// Node and page oid counters, and the image being built.
pub(crate) struct Objects {
    pub b: Builder,
    next_node: u64,
    next_page: u64,
    /// Forwarder nodes made so far, by (domain, data word): every
    /// `forwarder:<dom>:<data>` names the same one.
    forwarders: HashMap<(String, u32), u64>,
    /// Program nodes made so far, by program: every `program:<name>`
    /// names the same one.
    programs: HashMap<String, u64>,
    /// File nodes made so far, by file name (`file:<name>`).
    files: HashMap<String, u64>,
}

impl Objects {
    /// A fresh node oid.
    pub fn node(&mut self) -> u64 {
        self.nodes(1)
    }

    /// A fresh page oid.
    pub fn page(&mut self) -> u64 {
        self.pages(1)
    }

    /// The first of `n` fresh node oids.
    pub fn nodes(&mut self, n: u64) -> u64 {
        let first = self.next_node;
        self.next_node += n;
        first
    }

    /// The first of `n` fresh page oids.
    pub fn pages(&mut self, n: u64) -> u64 {
        let first = self.next_page;
        self.next_page += n;
        first
    }
}

/// Where a meter ended up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeterInfo {
    /// Its name (`prime` first).
    pub name: String,
    /// Its node.
    pub node: u64,
}

/// Where a domain ended up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainInfo {
    /// Its name.
    pub name: String,
    /// Its program.
    pub program: String,
    /// Root node.
    pub root: u64,
    /// General-keys node.
    pub general: u64,
    /// Register annex node.
    pub annex: u64,
    /// Address-space root node.
    pub space_root: u64,
    /// The key in its root's SPACE slot.
    pub space_key: Key,
    /// Segment nodes below the address-space root.
    pub segment_nodes: usize,
    /// FPU page.
    pub fpu: u64,
    /// Entry point.
    pub entry: u64,
    /// Program pages stored in the image.
    pub stored_pages: usize,
    /// Zero pages of its space (bss, stack, heap; not stored).
    pub zero_pages: usize,
    /// Whether it is in the run list.
    pub runs: bool,
}

/// A built image.
#[derive(Clone, Debug)]
pub struct Built {
    /// The image bytes.
    pub image: Vec<u8>,
    /// Meters, prime first.
    pub meters: Vec<MeterInfo>,
    /// Domains, in spec order.
    pub domains: Vec<DomainInfo>,
}

impl Built {
    /// A human-readable account of the image.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        match stet_bigbang::Image::parse(&self.image) {
            Ok(image) => {
                let h = image.header();
                let _ = writeln!(
                    s,
                    "big bang image: {} bytes, {} nodes and {} pages stored, {} running; \
                     object_nodes {} object_pages {} (first free node {}, page {})",
                    self.image.len(),
                    h.node_count,
                    h.page_count,
                    h.run_count,
                    h.object_nodes,
                    h.object_pages,
                    h.first_free_node,
                    h.first_free_page
                );
            }
            Err(e) => {
                let _ = writeln!(s, "big bang image: INVALID: {e}");
            }
        }
        for m in &self.meters {
            let _ = writeln!(s, "meter {}: node {}", m.name, m.node);
        }
        for d in &self.domains {
            let _ = writeln!(
                s,
                "domain {} ({}): root node {}, general {}, annex {}, space {} (+{} segment nodes), \
                 fpu page {}; entry {:#x}, {} pages stored, {} zero pages; {}",
                d.name,
                d.program,
                d.root,
                d.general,
                d.annex,
                d.space_root,
                d.segment_nodes,
                d.fpu,
                d.entry,
                d.stored_pages,
                d.zero_pages,
                if d.runs { "runs" } else { "does not run" }
            );
        }
        s
    }
}

/// A program loader reading `<dir>/<name>`.
pub fn load_dir(dir: impl Into<PathBuf>) -> impl FnMut(&str) -> Result<Vec<u8>> {
    let dir = dir.into();
    move |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).with_context(|| format!("reading program {}", path.display()))
    }
}

/// The objects every name resolves to, fixed before anything else is made.
struct Names {
    meters: Vec<MeterInfo>,
    domains: Vec<Fixed>,
    domain_index: HashMap<String, usize>,
}

/// A domain's fixed objects.
struct Fixed {
    root: u64,
    general: u64,
    annex: u64,
    space_root: u64,
    space_key: Key,
    fpu: u64,
    /// Its heap's first page oid and page count, once its space is built.
    heap: Option<(u64, u64)>,
}

type Res<T> = std::result::Result<T, String>;

impl Names {
    fn domain(&self, name: &str) -> Res<&Fixed> {
        self.domain_index
            .get(name)
            .map(|&i| &self.domains[i])
            .ok_or_else(|| format!("unknown domain {name:?}"))
    }

    fn meter(&self, name: &str) -> Res<u64> {
        self.meters
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.node)
            .ok_or_else(|| format!("unknown meter {name:?}"))
    }

    /// A keeper: `<domain>[:<info>]`.
    fn start(&self, s: &str) -> Res<Key> {
        let (name, info) = keyspec::parse_start(s)?;
        Ok(Key::start(self.domain(&name)?.root, VERSION, info))
    }

    /// An optional keeper, or void.
    fn keeper(&self, what: &str, s: &Option<String>) -> Result<Key> {
        match s {
            Some(k) => self.start(k).map_err(|e| anyhow!("{what} {k:?}: {e}")),
            None => Ok(Key::VOID),
        }
    }

    /// Resolves a key spec; `None` for a range (allocated last).
    fn resolve(&self, ks: &KeySpec, objs: &mut Objects) -> Res<Option<Key>> {
        let key = match ks {
            KeySpec::Void => Key::VOID,
            KeySpec::Service(t) => Key::service(*t),
            KeySpec::Number(n) => Key::number(*n, 0),
            KeySpec::Start(d, info) => Key::start(self.domain(d)?.root, VERSION, *info),
            KeySpec::Domain(d) => Key::domain(self.domain(d)?.root, VERSION),
            KeySpec::Meter(m) => Key::meter(self.meter(m)?, VERSION),
            KeySpec::MeterNode(m) => Key::node(self.meter(m)?, VERSION, 0),
            KeySpec::Space(d) => self.domain(d)?.space_key,
            KeySpec::SpaceNode(d) => Key::node(self.domain(d)?.space_root, VERSION, 0),
            KeySpec::Node(d, part) => {
                let d = self.domain(d)?;
                let oid = match part {
                    Part::Root => d.root,
                    Part::General => d.general,
                    Part::Annex => d.annex,
                };
                Key::node(oid, VERSION, 0)
            }
            KeySpec::Fpu(d) => Key::page(self.domain(d)?.fpu, VERSION, false),
            KeySpec::HeapPage(d, i) => match self.domain(d)?.heap {
                Some((first, n)) if *i < n => Key::page(first + i, 0, false),
                h => {
                    let n = h.map_or(0, |(_, n)| n);
                    return Err(format!(
                        "domain {d:?} has no heap page {i} (heap_pages = {n})"
                    ));
                }
            },
            KeySpec::Range(..) | KeySpec::Program(_) | KeySpec::Programs(_) | KeySpec::File(_) => {
                return Ok(None)
            }
            KeySpec::Text(t) => {
                let oid = objs.page();
                let mut data = [0u8; PAGE_SIZE];
                data[..t.len()].copy_from_slice(t.as_bytes());
                objs.b.page(oid, VERSION, &data);
                Key::page(oid, VERSION, true)
            }
            KeySpec::Supply(n) => {
                let node = objs.node();
                let first = objs.pages(*n as u64);
                let mut slots = [Key::VOID; SLOTS];
                for (j, slot) in slots.iter_mut().take(*n).enumerate() {
                    *slot = Key::page(first + j as u64, 0, false);
                }
                // The node holds keys, so it is stored (its pages are zero).
                objs.b.node(node, VERSION, slots);
                Key::node(node, VERSION, 0)
            }
            KeySpec::Forwarder(d, data) => {
                let target = Key::start(self.domain(d)?.root, VERSION, 0);
                let node = match objs.forwarders.get(&(d.clone(), *data)) {
                    Some(&n) => n,
                    None => {
                        let n = objs.node();
                        let mut slots = [Key::VOID; SLOTS];
                        slots[0] = target;
                        slots[1] = Key::number(*data as u64, 0);
                        objs.b.node(n, VERSION, slots);
                        objs.forwarders.insert((d.clone(), *data), n);
                        n
                    }
                };
                Key::forwarder(node, VERSION)
            }
            KeySpec::FreshNode => Key::node(objs.node(), 0, 0),
            KeySpec::FreshPage => Key::page(objs.page(), 0, false),
            KeySpec::IoPorts(base, count) => Key::ioports(*base, *count).ok_or("bad port range")?,
            KeySpec::Irq(n) => Key::irq(*n).ok_or("bad irq line")?,
        };
        Ok(Some(key))
    }
}

/// Builds the image of `spec`, reading each program's ELF bytes with
/// `load` (called once per distinct program name).
pub fn build(spec: &Spec, mut load: impl FnMut(&str) -> Result<Vec<u8>>) -> Result<Built> {
    check_names(spec)?;
    let mut objs = Objects {
        b: Builder::new(),
        next_node: 0,
        next_page: stet_bigbang::KERNEL_PAGES,
        forwarders: HashMap::new(),
        programs: HashMap::new(),
        files: HashMap::new(),
    };

    // Every name's objects first: meters, then each domain's fixed nodes
    // and FPU page.
    let mut meters = vec![MeterInfo {
        name: PRIME.into(),
        node: objs.node(),
    }];
    for m in &spec.meter {
        meters.push(MeterInfo {
            name: m.name.clone(),
            node: objs.node(),
        });
    }
    let fixed: Vec<Fixed> = spec
        .domain
        .iter()
        .map(|d| {
            let first = objs.nodes(4);
            let keeper = d.segment_keeper.is_some();
            Fixed {
                root: first,
                general: first + 1,
                annex: first + 2,
                space_root: first + 3,
                space_key: Key::segment(
                    first + 3,
                    VERSION,
                    ROOT_LSS,
                    if keeper { rights::KEEPER } else { 0 },
                ),
                fpu: objs.page(),
                heap: None,
            }
        })
        .collect();
    let mut names = Names {
        meters,
        domain_index: spec
            .domain
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.clone(), i))
            .collect(),
        domains: fixed,
    };

    // Meter nodes.
    let prime = meter_node(Key::VOID, Key::VOID, u64::MAX);
    objs.b.node(names.meters[0].node, VERSION, prime);
    for (i, m) in spec.meter.iter().enumerate() {
        let what = || format!("meter {:?}", m.name);
        check_meter_chain(spec, i).with_context(what)?;
        let superior = names
            .meter(&m.superior)
            .map_err(|e| anyhow!("superior: {e}"))
            .with_context(what)?;
        let keeper = names.keeper("keeper", &m.keeper).with_context(what)?;
        let time = m.time.unwrap_or(u64::MAX);
        let node = meter_node(Key::meter(superior, VERSION), keeper, time);
        objs.b.node(names.meters[i + 1].node, VERSION, node);
    }

    // Address spaces, root nodes, annexes and FPU pages.
    let mut files: HashMap<String, Vec<u8>> = HashMap::new();
    let mut domains = Vec::new();
    let mut heaps = Vec::new();
    for (i, (d, f)) in spec.domain.iter().zip(&names.domains).enumerate() {
        let what = || format!("domain {:?}", d.name);
        if !files.contains_key(&d.program) {
            let bytes = load(&d.program).with_context(what)?;
            files.insert(d.program.clone(), bytes);
        }
        let file = &files[&d.program];
        let program = stet_elfimage::parse(file)
            .map_err(|e| anyhow!("program {:?} is not a valid user ELF: {e:?}", d.program))
            .with_context(what)?;
        if d.stack_pages > MAX_STACK_PAGES || d.heap_pages > MAX_HEAP_PAGES {
            return Err(anyhow!(
                "stack_pages must be at most {MAX_STACK_PAGES} and heap_pages at most {MAX_HEAP_PAGES}"
            ))
            .with_context(what);
        }
        let space = space::build(&mut objs, &program, file, d.stack_pages, d.heap_pages)
            .with_context(what)?;
        heaps.push(space.heap_first.map(|first| (first, d.heap_pages)));
        let mut space_root = space.root;
        if d.segment_keeper.is_some() {
            space_root[domain::SEGMENT_KEEPER_SLOT] = names
                .keeper("segment_keeper", &d.segment_keeper)
                .with_context(what)?;
        }
        objs.b.node(f.space_root, VERSION, space_root);

        let mut slots = [Key::VOID; SLOTS];
        let run_state = match d.state {
            RunState::Running => state::RUNNING,
            RunState::Available => state::AVAILABLE,
        };
        let mut flags = 0;
        if d.stopped {
            flags |= state::STOPPED;
        }
        if d.foreign {
            flags |= state::FOREIGN;
        }
        slots[root::STATE] = Key::number(run_state, flags);
        let meter = names
            .meter(&d.meter)
            .map_err(|e| anyhow!("meter: {e}"))
            .with_context(what)?;
        slots[root::METER] = Key::meter(meter, VERSION);
        slots[root::KEEPER] = names.keeper("keeper", &d.keeper).with_context(what)?;
        slots[root::SPACE] = f.space_key;
        slots[root::GENERAL] = Key::node(f.general, VERSION, 0);
        slots[root::ANNEX] = Key::node(f.annex, VERSION, 0);
        slots[root::FPU] = Key::page(f.fpu, VERSION, false);
        slots[root::RIP] = Key::number(program.entry, 0);
        slots[root::RFLAGS] = Key::number(RFLAGS, 0);
        slots[root::FS_BASE] = Key::number(0, 0);
        slots[root::GS_BASE] = Key::number(0, 0);
        slots[root::FAULT_INFO] = Key::number(0, 0);
        if let Some(text) = &d.ioports {
            slots[root::IOPORTS] = match keyspec::parse_key(text) {
                Ok(KeySpec::IoPorts(base, count)) => Key::ioports(base, count),
                Ok(_) => None,
                Err(e) => return Err(anyhow!("ioports {text:?}: {e}")).with_context(what),
            }
            .ok_or_else(|| anyhow!("ioports {text:?}: not an ioports:<base>:<count> key"))
            .with_context(what)?;
        }
        objs.b.node(f.root, VERSION, slots);

        let mut annex = [Key::number(0, 0); SLOTS];
        annex[Reg::Rsp as usize] = Key::number(layout::STACK_TOP, 0);
        annex[Reg::Rdi as usize] = Key::number(d.arg.unwrap_or(i as u64), 0);
        objs.b.node(f.annex, VERSION, annex);
        objs.b.page(f.fpu, VERSION, &fpu_page());

        let runs = d.state == RunState::Running && !d.stopped;
        if runs {
            objs.b.run(f.root);
        }
        objs.b.name(f.root, &d.name);
        domains.push(DomainInfo {
            name: d.name.clone(),
            program: d.program.clone(),
            root: f.root,
            general: f.general,
            annex: f.annex,
            space_root: f.space_root,
            space_key: f.space_key,
            segment_nodes: space.nodes,
            fpu: f.fpu,
            entry: program.entry,
            stored_pages: space.stored_pages,
            zero_pages: space.zero_pages,
            runs,
        });
    }

    for (f, heap) in names.domains.iter_mut().zip(heaps) {
        f.heap = heap;
    }

    // General keys; ranges wait until every other object has its oid.
    let mut generals = Vec::new();
    let mut ranges = Vec::new();
    for (i, d) in spec.domain.iter().enumerate() {
        let mut slots = [Key::VOID; SLOTS];
        for (j, text) in d.keys.iter().enumerate() {
            let slot = j + 1;
            let err = |e: String| anyhow!("domain {:?} key slot {slot} ({text:?}): {e}", d.name);
            let ks = keyspec::parse_key(text).map_err(err)?;
            if let KeySpec::Program(p) = &ks {
                slots[slot] = program_key(&mut objs, &mut files, &mut load, p)
                    .map_err(|e| err(format!("{e:#}")))?;
                continue;
            }
            if let KeySpec::File(f) = &ks {
                slots[slot] =
                    file_key(&mut objs, &mut load, f).map_err(|e| err(format!("{e:#}")))?;
                continue;
            }
            if let KeySpec::Programs(ps) = &ks {
                // A node whose slots hold the programs' sense keys in order
                // (how a shell is handed the demos it may start).
                let mut node_slots = [Key::VOID; SLOTS];
                for (k, p) in ps.iter().enumerate() {
                    node_slots[k] = program_key(&mut objs, &mut files, &mut load, p)
                        .map_err(|e| err(format!("{e:#}")))?;
                }
                let n = objs.node();
                objs.b.node(n, VERSION, node_slots);
                slots[slot] = Key::node(n, VERSION, 0);
                continue;
            }
            match names.resolve(&ks, &mut objs).map_err(err)? {
                Some(key) => slots[slot] = key,
                None => {
                    if let KeySpec::Range(space, n) = ks {
                        ranges.push((i, slot, space, n));
                    }
                }
            }
        }
        generals.push(slots);
    }
    for (i, slot, space, n) in ranges {
        let first = match space {
            Space::Node => objs.nodes(n as u64),
            Space::Page => objs.pages(n as u64),
        };
        generals[i][slot] = Key::range(space, first, n);
    }
    for (f, slots) in names.domains.iter().zip(generals) {
        objs.b.node(f.general, VERSION, slots);
    }

    objs.b.reserve(objs.next_node, objs.next_page);
    let image = objs
        .b
        .build()
        .map_err(|e| anyhow!("cannot build the image: {e}"))?;
    Ok(Built {
        image,
        meters: names.meters,
        domains,
    })
}

/// Most load segments a program template lists (program node slots 2..=15).
pub const MAX_TEMPLATE_SEGMENTS: usize = SLOTS - 2;

/// A sense key to the program node of `name` (made on first use, shared
/// after): slot 0 a read-only segment key (size code [`ROOT_LSS`]) to a
/// tree holding every load segment's pages under read-only page keys,
/// slot 1 `number(entry)`, slots 2.. one number per load segment: low =
/// its page-aligned start address, high = its page count << 1 | writable.
fn program_key(
    objs: &mut Objects,
    files: &mut HashMap<String, Vec<u8>>,
    load: &mut impl FnMut(&str) -> Result<Vec<u8>>,
    name: &str,
) -> Result<Key> {
    let sense = |oid| Key::node(oid, VERSION, rights::RO | rights::WEAK);
    if let Some(&oid) = objs.programs.get(name) {
        return Ok(sense(oid));
    }
    if !files.contains_key(name) {
        let bytes = load(name)?;
        files.insert(name.to_string(), bytes);
    }
    let file = &files[name];
    let program = stet_elfimage::parse(file)
        .map_err(|e| anyhow!("program {name:?} is not a valid user ELF: {e:?}"))?;
    let segments = program.segments();
    if segments.len() > MAX_TEMPLATE_SEGMENTS {
        bail!(
            "program {name:?} has {} load segments (a template lists at most {MAX_TEMPLATE_SEGMENTS})",
            segments.len()
        );
    }
    let node = objs.node();
    let root = objs.node();
    let built = space::template(objs, &program, file)?;
    objs.b.node(root, VERSION, built.root);
    let mut slots = [Key::VOID; SLOTS];
    slots[0] = Key::segment(root, VERSION, ROOT_LSS, rights::RO);
    slots[1] = Key::number(program.entry, 0);
    for (slot, seg) in slots[2..].iter_mut().zip(segments) {
        let (start, end) = seg.page_span();
        let count = (end - start) / PAGE_SIZE as u64;
        let high = u32::try_from(count << 1 | seg.perm.write as u64)
            .map_err(|_| anyhow!("program {name:?}: a segment of {count} pages"))?;
        *slot = Key::number(start, high);
    }
    objs.b.node(node, VERSION, slots);
    objs.programs.insert(name.to_string(), node);
    Ok(sense(node))
}

/// A sense key to the file node of `name` (made on first use, shared
/// after): slot 0 a read-only segment key of size code
/// [`stet_unix::layout::FILE_LSS`] to a tree of the file's bytes from
/// offset 0 (every page present, read-only; the tree rule of
/// [`space::fill`]), slot 1 `number(length)`. How the UNIX personality's
/// files look: a file is a segment.
fn file_key(
    objs: &mut Objects,
    load: &mut impl FnMut(&str) -> Result<Vec<u8>>,
    name: &str,
) -> Result<Key> {
    let sense = |oid| Key::node(oid, VERSION, rights::RO | rights::WEAK);
    if let Some(&oid) = objs.files.get(name) {
        return Ok(sense(oid));
    }
    let bytes = load(name)?;
    let lss = stet_unix::layout::FILE_LSS;
    if bytes.len() as u64 > 16u64.pow(lss as u32) * PAGE_SIZE as u64 {
        bail!("file {name:?} is too big");
    }
    let node = objs.node();
    let root = objs.node();
    let mut keyed = Vec::new();
    for (i, chunk) in bytes.chunks(PAGE_SIZE).enumerate() {
        let oid = objs.page();
        let mut data = [0u8; PAGE_SIZE];
        data[..chunk.len()].copy_from_slice(chunk);
        objs.b.page(oid, VERSION, &data);
        keyed.push((i as u64, Key::page(oid, VERSION, true)));
    }
    let mut nodes = 0;
    let slots = space::fill(objs, lss, 0, &keyed, &mut nodes);
    objs.b.node(root, VERSION, slots);
    let mut f = [Key::VOID; SLOTS];
    f[0] = Key::segment(root, VERSION, lss, rights::RO);
    f[1] = Key::number(bytes.len() as u64, 0);
    objs.b.node(node, VERSION, f);
    objs.files.insert(name.to_string(), node);
    Ok(sense(node))
}

/// A meter node.
fn meter_node(superior: Key, keeper: Key, time: u64) -> [Key; SLOTS] {
    let mut slots = [Key::VOID; SLOTS];
    slots[domain::meter::SUPERIOR] = superior;
    slots[domain::meter::KEEPER] = keeper;
    slots[domain::meter::TIME] = Key::number(time, 0);
    slots[domain::meter::USED] = Key::number(0, 0);
    slots
}

/// The FPU page of a fresh domain: an FXSAVE/XSAVE image in its reset
/// state (FCW 0x037f, MXCSR 0x1f80, MXCSR_MASK 0xffff, XSTATE_BV = x87|SSE).
pub fn fpu_page() -> [u8; PAGE_SIZE] {
    let mut p = [0u8; PAGE_SIZE];
    p[0..2].copy_from_slice(&0x037fu16.to_le_bytes());
    p[24..28].copy_from_slice(&0x1f80u32.to_le_bytes());
    p[28..32].copy_from_slice(&0xffffu32.to_le_bytes());
    p[512..520].copy_from_slice(&3u64.to_le_bytes());
    p
}

/// Names: unique, 1..=23 bytes, no `:` or NUL; no meter called `prime`.
fn check_names(spec: &Spec) -> Result<()> {
    fn valid(name: &str) -> bool {
        !name.is_empty() && name.len() <= stet_bigbang::MAX_NAME && !name.contains([':', '\0'])
    }
    let mut seen = std::collections::HashSet::new();
    for m in &spec.meter {
        if !valid(&m.name) {
            bail!(
                "bad meter name {:?} (1 to {} bytes, no ':')",
                m.name,
                stet_bigbang::MAX_NAME
            );
        }
        if m.name == PRIME || !seen.insert(m.name.as_str()) {
            bail!("duplicate meter name {:?}", m.name);
        }
    }
    let mut seen = std::collections::HashSet::new();
    for d in &spec.domain {
        if !valid(&d.name) {
            bail!(
                "bad domain name {:?} (1 to {} bytes, no ':')",
                d.name,
                stet_bigbang::MAX_NAME
            );
        }
        if !seen.insert(d.name.as_str()) {
            bail!("duplicate domain name {:?}", d.name);
        }
        if d.keys.len() > MAX_KEYS {
            bail!(
                "domain {:?} has {} keys (at most {MAX_KEYS})",
                d.name,
                d.keys.len()
            );
        }
    }
    Ok(())
}

/// Meter `i`'s chain of superiors must reach `prime` without a cycle
/// (unknown names are reported when keys are made).
fn check_meter_chain(spec: &Spec, i: usize) -> Result<()> {
    let mut name = spec.meter[i].superior.as_str();
    for _ in 0..=spec.meter.len() {
        if name == PRIME {
            return Ok(());
        }
        match spec.meter.iter().find(|m| m.name == name) {
            Some(m) => name = m.superior.as_str(),
            None => return Ok(()),
        }
    }
    bail!("its chain of superior meters is a cycle")
}

/// Reads a spec file.
pub fn load_spec(path: &Path) -> Result<Spec> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Spec::parse(&text).with_context(|| format!("parsing {}", path.display()))
}
