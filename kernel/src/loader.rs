//! Starts the programs in the boot image: validates each ELF, builds its
//! address space (segments copied into fresh frames, demand-zero stack and
//! heap) and makes it ready to run.

use crate::arch::entry::TrapFrame;
use crate::arch::fpu::FpuState;
use crate::arch::paging::UserPerm;
use crate::arch::phys;
use crate::kernel::Kernel;
use crate::kprintln;
use crate::task::State;
use crate::vm::{Backing, Region, Space};
use stet_abi::layout;
use stet_bootimage::{Image, Kind};
use stet_physmem::pool::FramePool;

/// Starts every `Program` entry of the image in `module`.
pub fn start_programs(k: &mut Kernel, module: &'static [u8]) {
    let image = match Image::parse(module) {
        Ok(i) => i,
        Err(e) => {
            kprintln!("boot: the program image is unusable: {e:?}");
            return;
        }
    };
    for entry in image.entries().filter(|e| e.kind == Kind::Program) {
        match load(k, entry.name, entry.data) {
            Ok(i) => kprintln!("kernel: started program {} '{}'", i, entry.name),
            Err(why) => kprintln!("kernel: cannot start '{}': {}", entry.name, why),
        }
    }
}

fn load(k: &mut Kernel, name: &'static str, file: &[u8]) -> Result<usize, &'static str> {
    let slot = k
        .tasks
        .iter()
        .position(|t| t.state == State::Free)
        .ok_or("program table full")?;
    let prog = stet_elfimage::parse(file).map_err(|e| match e {
        stet_elfimage::Error::WriteExecute => "a segment is writable and executable",
        stet_elfimage::Error::BadAddress => "a segment lies outside user space",
        _ => "not a valid static x86_64 ELF executable",
    })?;
    let pool = k.pool();
    let mut space = Space::new(pool).ok_or("out of memory")?;
    if let Err(e) = fill(&mut space, &prog, file, pool) {
        space.destroy(pool);
        return Err(e);
    }
    let t = &mut k.tasks[slot];
    t.frame = TrapFrame::new_user(prog.entry, layout::STACK_TOP, slot as u64);
    t.fpu = FpuState::initial();
    t.name = name;
    t.space = Some(space);
    t.ticks = 0;
    t.preemptions = 0;
    t.state = State::Ready;
    Ok(slot)
}

fn fill(
    space: &mut Space,
    prog: &stet_elfimage::Program,
    file: &[u8],
    pool: &mut FramePool<'_>,
) -> Result<(), &'static str> {
    for seg in prog.segments() {
        let (start, end) = seg.page_span();
        let perm = UserPerm {
            write: seg.perm.write,
            exec: seg.perm.exec,
        };
        space
            .add_region(Region {
                start,
                end,
                perm,
                backing: Backing::Image,
            })
            .map_err(|_| "overlapping segments")?;
        let data = &file[seg.file_offset as usize..(seg.file_offset + seg.file_len) as usize];
        let mut page = start;
        while page < end {
            let f = pool.alloc().ok_or("out of memory")?;
            phys::zero_frame(f);
            // The part of the file's bytes that lands in this page.
            let lo = seg.vaddr.max(page);
            let hi = (seg.vaddr + seg.file_len).min(page + 4096);
            if lo < hi {
                let from = (lo - seg.vaddr) as usize;
                phys::write_frame(
                    f,
                    (lo - page) as usize,
                    &data[from..from + (hi - lo) as usize],
                );
            }
            if space.root.map(page, f, perm, pool).is_err() {
                let _ = pool.free(f);
                return Err("out of memory");
            }
            page += 4096;
        }
    }
    let rw = UserPerm {
        write: true,
        exec: false,
    };
    for (start, size) in [
        (layout::STACK_TOP - layout::STACK_SIZE, layout::STACK_SIZE),
        (layout::HEAP_START, layout::HEAP_SIZE),
    ] {
        space
            .add_region(Region {
                start,
                end: start + size,
                perm: rw,
                backing: Backing::DemandZero,
            })
            .map_err(|_| "the program overlaps its stack or heap")?;
    }
    Ok(())
}
