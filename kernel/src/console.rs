//! Kernel printing: `kprint!` and `kprintln!` on the serial console.

/// Prints to the kernel console.
#[macro_export]
macro_rules! kprint {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let _ = write!($crate::arch::serial::Console, $($arg)*);
    }};
}

/// Prints a line to the kernel console.
#[macro_export]
macro_rules! kprintln {
    () => { $crate::kprint!("\n") };
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let _ = writeln!($crate::arch::serial::Console, $($arg)*);
    }};
}
