//! The server loop of a supervised service: receive orders, answer them,
//! let heartbeats through, and end in a way the keeper can see.
//!
//! A service built by a factory and supervised by the reincarnation
//! service (`stet_abi::service::rs`) gets the heartbeat order `PING` by
//! *send*; it answers simply by being ready for the next message again.
//! When its main function ends it does not go idle like other programs
//! (the reincarnation service could not tell that from a quiet service):
//! [`exit`] traps with `int3`, so the keeper hears an exception with
//! vector 3 and the exit code in `rdi`.

use crate::key::{wait, Answer, Msg, Slot};
use stet_abi::service::rs::PING;

/// What a handler answers: result code, words, reply string length (in
/// the output buffer), key slot to send (0: none).
pub type Reply = (u64, [u64; 4], usize, Slot);

/// Serves forever: each message goes to `handle` (with its string in
/// `input` and an output buffer), its answer goes back through the resume
/// key in `resume`; received keys land in `recv`.
pub fn serve(
    recv: [Slot; 4],
    resume: Slot,
    input: &mut [u8],
    output: &mut [u8],
    mut handle: impl FnMut(&Answer, &[u8], &mut [u8]) -> Reply,
) -> ! {
    let mut a = wait(recv, resume, input);
    loop {
        let (code, w, n, key) = if a.code == PING {
            (0, [0; 4], 0, 0)
        } else {
            let len = a.len.min(input.len());
            // The input is copied out so the handler may use both buffers.
            let (inp, out) = (&input[..len], &mut *output);
            handle(&a, inp, out)
        };
        a = Msg::new(resume, code)
            .words(w)
            .string(&output[..n])
            .keys([key, 0, 0, 0])
            .recv(recv)
            .resume_into(resume)
            .ret_into(input);
    }
}

/// Ends the service where its keeper sees it: `int3` with the code in
/// `rdi`. (If the keeper resumes it anyway, it traps again.)
pub fn exit(code: i64) -> ! {
    loop {
        crate::fault::breakpoint(code as u64);
    }
}
