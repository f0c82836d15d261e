//! Kernel self-tests chosen with `selftest=` on the command line. Most
//! prove a protection works by tripping it; `disk` and `diskread` exercise
//! the disk driver (`disk.rs`). The system tests check the report and the
//! exit status. Only the test kernel (the `testing` feature) has them; the
//! kernel users boot reports `selftest=` and ignores it (`main.rs`).

mod disk;

use crate::arch::{self, selftest as hw};
use crate::kernel::Kernel;
use crate::kprintln;
use stet_kconfig::SelfTest;

/// Runs self-test `t`. Faulting tests never return.
pub fn run(k: &mut Kernel, t: SelfTest) {
    match t {
        SelfTest::KernelFault => {
            kprintln!("selftest kfault: reading an unmapped kernel address");
            let v = hw::touch_unmapped_kernel();
            kprintln!("selftest kfault: FAILED, read {v} without a fault");
        }
        SelfTest::Smep => {
            let Some(page) = hw::map_user_ret_page(&mut k.pool) else {
                crate::fatal(format_args!("selftest smep: out of memory"));
            };
            kprintln!("selftest smep: kernel calls user page {:#x}", hw::USER_PAGE);
            hw::call_user_page(&page);
            kprintln!("selftest smep: FAILED, the kernel executed a user page");
        }
        SelfTest::Smap => {
            let Some(page) = hw::map_user_ret_page(&mut k.pool) else {
                crate::fatal(format_args!("selftest smap: out of memory"));
            };
            kprintln!("selftest smap: kernel reads user page {:#x}", hw::USER_PAGE);
            let v = hw::read_user_page(&page);
            kprintln!("selftest smap: FAILED, the kernel read {v:#x} from a user page");
        }
        SelfTest::StackOverflow => {
            kprintln!(
                "selftest overflow: recursing into the stack guard page at {:#x}",
                hw::stack_guard()
            );
            let v = hw::overflow_stack(0);
            kprintln!("selftest overflow: FAILED, recursion returned {v}");
        }
        SelfTest::Hang => {
            kprintln!("selftest hang: spinning forever with interrupts off");
            hw::hang()
        }
        SelfTest::Disk => disk::run(k, true),
        SelfTest::DiskRead => disk::run(k, false),
        SelfTest::LateAlloc => {
            let r = k.bootmem.as_mut().map(|b| b.alloc(4096, 4096));
            match r {
                Some(Err(e)) => kprintln!("selftest alloc: late allocation refused: {e:?}"),
                other => kprintln!("selftest alloc: FAILED, late allocation returned {other:?}"),
            }
            return;
        }
    }
    arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
}
