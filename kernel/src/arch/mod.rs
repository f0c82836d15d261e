//! Everything that touches the hardware directly. This is where the kernel's
//! assembly and nearly all of its `unsafe` code live; the rest of the kernel
//! calls the safe functions exported here.
pub mod x86_64;
pub use self::x86_64::*;
