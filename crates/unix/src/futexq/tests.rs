//! The private futex queue's rules, against futex(2).

use super::*;
use std::vec::Vec;

fn woken(q: &mut Queue, addr: u64, n: u32, bits: u32) -> Vec<u16> {
    let mut v = Vec::new();
    q.wake(addr, n, bits, |t| v.push(t)).unwrap();
    v
}

#[test]
fn wake_is_fifo_and_counts() {
    let mut q = Queue::new();
    for t in [3, 1, 2] {
        q.wait(t, 0x1000, MATCH_ANY, u64::MAX).unwrap();
    }
    q.wait(9, 0x2000, MATCH_ANY, u64::MAX).unwrap();
    assert_eq!(woken(&mut q, 0x1000, 2, MATCH_ANY), [3, 1]);
    assert_eq!(woken(&mut q, 0x1000, 5, MATCH_ANY), [2]);
    assert_eq!(woken(&mut q, 0x1000, 5, MATCH_ANY), Vec::<u16>::new());
    assert_eq!(q.of(9).map(|w| w.addr), Some(0x2000));
    assert!(!q.is_empty());
}

#[test]
fn bitsets_select_waiters() {
    let mut q = Queue::new();
    q.wait(1, 0x10, 0b01, u64::MAX).unwrap();
    q.wait(2, 0x10, 0b10, u64::MAX).unwrap();
    assert_eq!(woken(&mut q, 0x10, 9, 0b10), [2]);
    assert_eq!(q.wait(3, 0x10, 0, u64::MAX), Err(EINVAL));
    assert_eq!(q.wake(0x10, 1, 0, |_| {}), Err(EINVAL));
    assert_eq!(woken(&mut q, 0x10, 9, MATCH_ANY), [1]);
}

#[test]
fn requeue_moves_the_rest() {
    let mut q = Queue::new();
    for t in 1..=8 {
        q.wait(t, 0xa0, MATCH_ANY, u64::MAX).unwrap();
    }
    let mut w = Vec::new();
    // pthread_cond_broadcast: wake one, move the rest to the mutex.
    assert_eq!(q.requeue(0xa0, 0xb0, 1, u32::MAX, |t| w.push(t)), 8);
    assert_eq!(w, [1]);
    assert_eq!(woken(&mut q, 0xa0, 9, MATCH_ANY), Vec::<u16>::new());
    assert_eq!(woken(&mut q, 0xb0, 2, MATCH_ANY), [2, 3], "order kept");
    assert_eq!(q.requeue(0xb0, 0xb0, 0, 2, |_| {}), 2);
    assert_eq!(q.requeue(0xb0, 0xc0, 0, 1, |_| {}), 1);
    assert_eq!(woken(&mut q, 0xc0, 9, MATCH_ANY), [4]);
}

#[test]
fn timeouts_and_cancel() {
    let mut q = Queue::new();
    q.wait(1, 0x10, MATCH_ANY, 500).unwrap();
    q.wait(2, 0x10, MATCH_ANY, 100).unwrap();
    q.wait(3, 0x10, MATCH_ANY, u64::MAX).unwrap();
    assert_eq!(q.next_deadline(), 100);
    let mut gone = Vec::new();
    q.expire(100, |t| gone.push(t));
    assert_eq!(gone, [2]);
    assert_eq!(q.next_deadline(), 500);
    assert!(q.cancel(1));
    assert!(!q.cancel(1));
    assert_eq!(q.next_deadline(), u64::MAX);
    // A second wait by the same thread replaces its first.
    q.wait(3, 0x20, MATCH_ANY, u64::MAX).unwrap();
    assert_eq!(woken(&mut q, 0x10, 9, MATCH_ANY), Vec::<u16>::new());
    assert_eq!(woken(&mut q, 0x20, 9, MATCH_ANY), [3]);
}

#[test]
fn a_thread_past_the_slots_is_refused() {
    let mut q = Queue::new();
    for t in 0..MAX_WAITERS as u16 {
        q.wait(t, 1, MATCH_ANY, u64::MAX).unwrap();
    }
    assert_eq!(q.wait(999, 1, MATCH_ANY, u64::MAX), Err(EINVAL));
}

#[test]
fn wake_op_decoding() {
    // FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_GT, 0): glibc's pthread_cond.
    let v = (1 << 28) | (4 << 24) | (1 << 12);
    let op = WakeOp::decode(v).unwrap();
    assert_eq!(op.apply(5), 6);
    assert!(op.passes(1) && !op.passes(0));
    // SET with a shifted argument: 1 << 4.
    let v = (1 << 31) | (4 << 12);
    assert_eq!(WakeOp::decode(v).unwrap().apply(7), 16);
    // Negative 12-bit arguments.
    let v = (1 << 28) | (0xfff << 12) | (2 << 24) | 0xfff;
    let op = WakeOp::decode(v).unwrap();
    assert_eq!(op.apply(5), 4);
    assert!(op.passes(-2i32 as u32) && !op.passes(0));
    assert_eq!(WakeOp::decode(5 << 28), Err(ENOSYS));
    assert_eq!(WakeOp::decode(6 << 24), Err(ENOSYS));
    // ANDN, OR, XOR.
    assert_eq!(WakeOp::decode((3 << 28) | (6 << 12)).unwrap().apply(7), 1);
    assert_eq!(WakeOp::decode((2 << 28) | (8 << 12)).unwrap().apply(1), 9);
    assert_eq!(WakeOp::decode((4 << 28) | (3 << 12)).unwrap().apply(1), 2);
}

/// A model of the queue: waiters in arrival order (the oldest first).
#[derive(Default)]
struct Model {
    w: Vec<Waiter>,
}

impl Model {
    fn wait(&mut self, thread: u16, addr: u64, bitset: u32, deadline: u64) -> Result<(), i64> {
        // A thread is one of a process's slots (fewer than MAX_WAITERS).
        if bitset == 0 || thread as usize >= MAX_WAITERS {
            return Err(EINVAL);
        }
        self.w.retain(|w| w.thread != thread);
        if self.w.len() == MAX_WAITERS {
            return Err(EINVAL);
        }
        self.w.push(Waiter {
            thread,
            addr,
            bitset,
            deadline,
            seq: 0,
        });
        Ok(())
    }

    fn wake(&mut self, addr: u64, n: u32, bitset: u32) -> Vec<u16> {
        let mut out = Vec::new();
        while (out.len() as u32) < n {
            let Some(i) = self
                .w
                .iter()
                .position(|w| w.addr == addr && w.bitset & bitset != 0)
            else {
                break;
            };
            out.push(self.w.remove(i).thread);
        }
        out
    }
}

proptest::proptest! {
    /// Whatever the order of waits, cancels, wakes, requeues and
    /// expiries, the queue wakes the same threads in the same order as
    /// the model, and agrees on who waits where.
    #[test]
    fn agrees_with_a_model(
        ops in proptest::collection::vec((0u8..5, 0u16..70, 0u64..3, 0u32..4, 0u64..4), 1..300)
    ) {
        let mut q = Queue::new();
        let mut m = Model::default();
        for (op, thread, addr, n, t) in ops {
            let bits = [MATCH_ANY, 1, 2, 0][n as usize];
            match op {
                0 => {
                    proptest::prop_assert_eq!(
                        q.wait(thread, addr, bits, t),
                        m.wait(thread, addr, bits, t)
                    );
                }
                1 => {
                    let had = m.w.iter().any(|w| w.thread == thread);
                    m.w.retain(|w| w.thread != thread);
                    proptest::prop_assert_eq!(q.cancel(thread), had);
                }
                2 => {
                    let mut got = Vec::new();
                    let r = q.wake(addr, n, bits, |x| got.push(x));
                    if bits == 0 {
                        proptest::prop_assert_eq!(r, Err(EINVAL));
                    } else {
                        proptest::prop_assert_eq!(got, m.wake(addr, n, bits));
                    }
                }
                3 => {
                    let to = (addr + 1) % 3;
                    let mut got = Vec::new();
                    let r = q.requeue(addr, to, n, 2, |x| got.push(x));
                    let woke = m.wake(addr, n, MATCH_ANY);
                    proptest::prop_assert_eq!(&got, &woke);
                    let mut moved = 0;
                    for w in m.w.iter_mut().filter(|w| w.addr == addr) {
                        if moved < 2 {
                            w.addr = to;
                            moved += 1;
                        }
                    }
                    proptest::prop_assert_eq!(r, woke.len() as u32 + moved);
                }
                _ => {
                    let mut got = Vec::new();
                    q.expire(t, |x| got.push(x));
                    got.sort_unstable();
                    let mut want: Vec<u16> =
                        m.w.iter().filter(|w| w.deadline <= t).map(|w| w.thread).collect();
                    want.sort_unstable();
                    m.w.retain(|w| w.deadline > t);
                    proptest::prop_assert_eq!(got, want);
                }
            }
            for w in &m.w {
                let got = q.of(w.thread).map(|x| (x.addr, x.bitset, x.deadline));
                proptest::prop_assert_eq!(got, Some((w.addr, w.bitset, w.deadline)));
            }
            proptest::prop_assert_eq!(q.is_empty(), m.w.is_empty());
            let next = m.w.iter().map(|w| w.deadline).min().unwrap_or(u64::MAX);
            proptest::prop_assert_eq!(q.next_deadline(), next);
        }
    }
}
