//! The one system call: invoke a key. Registers as in docs/ABI.md and
//! `stet_abi::invoke`; `syscall` clobbers `rcx` and `r11`, the kernel
//! writes the receive buffer.
//!
//! The kernel writes whatever the sender sends (at most
//! `stet_abi::MAX_STRING` bytes) into the receive buffer, so the buffer is
//! typed ([`Recv`]): bytes the caller lends mutably, or memory that holds
//! no Rust object of this program, checked. Only [`raw_unchecked`] takes a
//! bare address, and it is an `unsafe fn`.
#![allow(unsafe_code)]

use core::marker::PhantomData;
use stet_abi::layout::STACK_TOP;
use stet_abi::MAX_STRING;

/// The registers of an invocation (what goes in) and of the message that
/// comes back (what comes out), in ABI order.
#[derive(Clone, Copy, Debug, Default)]
pub struct Regs {
    /// `rax`: control word in, key info | source << 8 out.
    pub rax: u64,
    /// `rdi`: order code in, order or result code out.
    pub rdi: u64,
    /// `rsi`, `rdx`, `r10`, `r8`: data words.
    pub w: [u64; 4],
    /// `r9`: string address in, full string length out.
    pub r9: u64,
}

/// Where the kernel may write the string of the message that comes back:
/// bytes the caller lends mutably for the call ([`Recv::bytes`],
/// [`Recv::words`]), or memory that is not this program's Rust memory
/// ([`Recv::foreign`], `crate::window::Window::recv`), or nowhere. Its
/// fields are private: only these constructors make one.
#[derive(Debug)]
pub struct Recv<'a> {
    addr: u64,
    cap: u64,
    /// Made by `foreign`: the stack below the invoker's frame is checked
    /// again when it is used (`raw`).
    foreign: bool,
    _lent: PhantomData<&'a mut [u8]>,
}

impl<'a> Recv<'a> {
    /// Nowhere (capacity 0).
    pub const NONE: Recv<'static> = Recv {
        addr: 0,
        cap: 0,
        foreign: false,
        _lent: PhantomData,
    };

    /// All of `buf`.
    #[inline]
    pub fn bytes(buf: &'a mut [u8]) -> Recv<'a> {
        Recv {
            addr: buf.as_mut_ptr() as u64,
            cap: buf.len() as u64,
            foreign: false,
            _lent: PhantomData,
        }
    }

    /// All of `words`, as bytes (the kernel writes little-endian words,
    /// such as a fault's register block, straight into them; every byte
    /// pattern is a valid `u64`).
    #[inline]
    pub fn words(words: &'a mut [u64]) -> Recv<'a> {
        Recv {
            addr: words.as_mut_ptr() as u64,
            cap: core::mem::size_of_val(words) as u64,
            foreign: false,
            _lent: PhantomData,
        }
    }

    /// `buf` with capacity `cap` as the kernel sees it: a capacity past the
    /// buffer is allowed only when the buffer holds the longest string the
    /// kernel writes (`MAX_STRING` bytes), so the kernel stays inside it.
    pub fn bytes_cap(buf: &'a mut [u8], cap: u64) -> Option<Recv<'a>> {
        let ok = cap <= buf.len() as u64 || buf.len() >= MAX_STRING;
        ok.then_some(Recv {
            addr: buf.as_mut_ptr() as u64,
            cap,
            foreign: false,
            _lent: PhantomData,
        })
    }

    /// `cap` bytes at `addr`, if no byte the kernel could write there (the
    /// first `MAX_STRING`) is this program's Rust memory: its data and bss,
    /// its live stack (from the stack pointer up to `STACK_TOP`: below it
    /// nothing lives, there is no red zone, and `raw` checks again where
    /// it is used), or its heap (root slot 1) when `crate::carry` keeps a
    /// value there. Whatever else is there — a window onto another domain,
    /// the program's own read-only image, nothing, a kernel address, the
    /// heap as shared words (`crate::mem`: memory others may write at any
    /// time anyway) — the kernel writes it or refuses (`BAD_BUFFER`), and
    /// no Rust value breaks either way.
    pub fn foreign(addr: u64, cap: u64) -> Option<Recv<'static>> {
        let r = Recv {
            addr,
            cap,
            foreign: true,
            _lent: PhantomData,
        };
        let (data, data_end) = crate::image::writable();
        let heap = if crate::mem::carried() {
            (1 << 44, 2 << 44)
        } else {
            (0, 0)
        };
        let own = [(data, data_end), heap];
        (!r.overlaps(&own) && !r.overlaps_live_stack()).then_some(r)
    }

    /// Whether any byte the kernel could write overlaps one of `ranges`.
    fn overlaps(&self, ranges: &[(u64, u64)]) -> bool {
        let end = self.addr.saturating_add(self.cap.min(MAX_STRING as u64));
        self.cap != 0 && ranges.iter().any(|&(s, e)| self.addr < e && s < end)
    }

    /// Whether it overlaps the stack in use: from the stack pointer of the
    /// frame this is inlined into up to `STACK_TOP`.
    #[inline(always)]
    fn overlaps_live_stack(&self) -> bool {
        let rsp: u64;
        // SAFETY: reading the stack pointer has no effects.
        unsafe {
            core::arch::asm!("mov {}, rsp", out(reg) rsp, options(nomem, nostack, preserves_flags))
        };
        self.overlaps(&[(rsp, STACK_TOP)])
    }

    /// `cap` bytes at `addr` in a window (`crate::window`), whose
    /// constructor checked that they hold no Rust object.
    pub(crate) fn window(addr: u64, cap: u64) -> Recv<'static> {
        Recv {
            addr,
            cap,
            foreign: false,
            _lent: PhantomData,
        }
    }
}

/// Invokes with `regs`; the answer's string goes to `recv`.
#[inline(always)]
pub fn raw(regs: Regs, recv: Recv<'_>) -> Regs {
    // Frames may have grown down over a foreign buffer since it was made.
    assert!(
        !recv.foreign || !recv.overlaps_live_stack(),
        "invoke: a receive buffer in the stack in use"
    );
    let (buf, cap) = (recv.addr, recv.cap);
    // SAFETY: `Recv`'s constructors are the only way to make one: bytes
    // borrowed mutably for this call (the kernel writes at most `cap` of
    // them, and `cap` is inside the buffer unless the buffer holds
    // `MAX_STRING` bytes, the most the kernel writes), memory checked to
    // hold no Rust value (the live stack checked again just above), a
    // window, or nothing.
    unsafe { raw_unchecked(regs, buf, cap) }
}

/// Invokes with `regs`, the answer's string going to `cap` bytes at `buf`.
///
/// # Safety
/// The kernel may write any bytes into the first `min(cap, MAX_STRING)`
/// bytes at `buf` (if they are writable memory of this domain): the caller
/// must make sure no Rust value there is read afterwards as anything the
/// bytes could break (a live reference other than the caller's own
/// `&mut [u8]`-like one, or a value with invalid bit patterns).
#[inline(always)]
pub unsafe fn raw_unchecked(regs: Regs, buf: u64, cap: u64) -> Regs {
    let mut r = regs;
    // SAFETY: the kernel reads the registers named here, writes at most
    // `cap` bytes at `buf` (the caller's contract), clobbers rcx and r11
    // like the CPU, and never touches the stack.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") r.rax,
            inlateout("rdi") r.rdi,
            inlateout("rsi") r.w[0],
            inlateout("rdx") r.w[1],
            inlateout("r10") r.w[2],
            inlateout("r8") r.w[3],
            inlateout("r9") r.r9,
            in("r12") buf,
            in("r13") cap,
            out("rcx") _,
            out("r11") _,
            options(nostack),
        );
    }
    r
}
