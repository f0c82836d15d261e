//! Console output: `print!` and `println!` format into a stack buffer and
//! send it with one invocation of the console key.

use core::fmt;

/// A fixed buffer that flushes to the console when full.
pub struct Writer {
    buf: [u8; 256],
    len: usize,
}

impl Default for Writer {
    fn default() -> Self {
        Self::new()
    }
}

impl Writer {
    /// An empty buffer.
    pub const fn new() -> Self {
        Writer {
            buf: [0; 256],
            len: 0,
        }
    }

    /// Sends what is buffered.
    pub fn flush(&mut self) {
        if self.len > 0 {
            crate::kernel::console_write(&self.buf[..self.len]);
            self.len = 0;
        }
    }
}

impl fmt::Write for Writer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

/// Prints formatted text.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let mut w = $crate::io::Writer::new();
        let _ = write!(w, $($arg)*);
        w.flush();
    }};
}

/// Prints formatted text and a newline.
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let mut w = $crate::io::Writer::new();
        let _ = writeln!(w, $($arg)*);
        w.flush();
    }};
}
