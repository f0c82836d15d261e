use super::msg::{choose, Message, Received, Sent};
use super::sem::{Outcome, Woken};
use super::*;
use std::vec;
use std::vec::Vec;
use stet_unix::sysv::errno::{EIDRM, ENOMSG};
use stet_unix::sysv::*;

const ROOT: Cred = Cred::ROOT;

fn user(uid: u32) -> Cred {
    Cred::user(uid, uid)
}

fn op(num: u16, op: i16, flg: u32) -> SemBuf {
    SemBuf {
        num,
        op,
        flg: flg as u16,
    }
}

fn all_live(_: u32) -> Live {
    Live::Answer
}

/// A new set of `n` by `c` → its id.
fn new_set(ipc: &mut Ipc, key: i32, n: i64, mode: u32, c: &Cred) -> i64 {
    assert_eq!(
        ipc.sem_lookup(key, n, IPC_CREAT | mode, c),
        Ok(Found::Create)
    );
    ipc.sem_create(key, n, IPC_CREAT | mode, c, 100).unwrap() as i64
}

fn val(ipc: &Ipc, id: i64, n: usize) -> u16 {
    ipc.sem.get(id).unwrap().obj.vals[n]
}

#[test]
fn get_by_key_follows_linux() {
    let mut ipc = Ipc::default();
    // A key with no object: ENOENT without IPC_CREAT.
    assert_eq!(ipc.msg_lookup(7, 0o600, &ROOT), Err(ENOENT));
    assert_eq!(
        ipc.msg_lookup(7, IPC_CREAT | 0o600, &ROOT),
        Ok(Found::Create)
    );
    let id = ipc
        .msg_create(7, IPC_CREAT | 0o640, &user(1000), 5)
        .unwrap();
    assert_eq!(id, 0);
    // Found again, whatever IPC_CREAT says; EEXIST with IPC_EXCL.
    assert_eq!(ipc.msg_lookup(7, 0, &user(1000)), Ok(Found::Existing(0)));
    assert_eq!(
        ipc.msg_lookup(7, IPC_CREAT, &user(1000)),
        Ok(Found::Existing(0))
    );
    assert_eq!(
        ipc.msg_lookup(7, IPC_CREAT | IPC_EXCL, &user(1000)),
        Err(EEXIST)
    );
    // The mode asked is checked: another user of another group may not.
    assert_eq!(ipc.msg_lookup(7, 0o400, &user(2000)), Err(EACCES));
    assert_eq!(ipc.msg_lookup(7, 0, &user(2000)), Ok(Found::Existing(0)));
    // IPC_PRIVATE always makes a new one.
    assert_eq!(ipc.msg_lookup(IPC_PRIVATE, 0, &ROOT), Ok(Found::Create));
    let p = ipc.msg_create(IPC_PRIVATE, 0, &ROOT, 5).unwrap();
    assert_eq!(p, 1);
    let e = ipc.msg.get(0).unwrap();
    assert_eq!(
        (e.perm.key, e.perm.uid, e.perm.cuid, e.perm.mode),
        (7, 1000, 1000, 0o640)
    );
}

#[test]
fn ids_of_removed_objects_stay_invalid() {
    let mut ipc = Ipc::default();
    let a = ipc.msg_create(0, 0o600, &ROOT, 0).unwrap();
    let b = ipc.msg_create(0, 0o600, &ROOT, 0).unwrap();
    assert_eq!((a, b), (0, 1));
    let mut out = [0u8; 256];
    assert_eq!(
        ipc.msg_ctl(a as i64, IPC_RMID, &[], &mut out, &ROOT, 0),
        Ok((0, 0))
    );
    assert_eq!(ipc.msg.get(a as i64).err(), Some(EINVAL));
    // The slot again, with the next sequence.
    let c = ipc.msg_create(0, 0o600, &ROOT, 0).unwrap();
    assert_eq!(c, 32768);
    assert_eq!(ipc.msg.get(a as i64).err(), Some(EINVAL));
    assert_eq!(ipc.msg.get(-1).err(), Some(EINVAL));
    assert_eq!(ipc.msg.max_index(), 1);
    // *_STAT names the index and answers the id.
    assert_eq!(
        ipc.msg_ctl(0, MSG_STAT, &[], &mut out, &ROOT, 0),
        Ok((32768, 120))
    );
    assert_eq!(
        ipc.msg_ctl(2, MSG_STAT, &[], &mut out, &ROOT, 0),
        Err(EINVAL)
    );
}

#[test]
fn caps_bound_each_user() {
    let mut ipc = Ipc::new(Caps {
        objects: 2,
        sems: 10,
        msg_bytes: 200,
        shm_bytes: 3 * 4096,
    });
    let u = user(1000);
    for _ in 0..2 {
        ipc.msg_create(0, 0o600, &u, 0).unwrap();
    }
    assert_eq!(ipc.msg_lookup(0, 0o600, &u), Err(ENOSPC));
    // Another user still may.
    assert_eq!(ipc.msg_lookup(0, 0o600, &user(1001)), Ok(Found::Create));
    // Semaphores in all.
    new_set(&mut ipc, 0, 6, 0o600, &u);
    assert_eq!(ipc.sem_lookup(0, 5, 0o600, &u), Err(ENOSPC));
    assert_eq!(ipc.sem_lookup(0, 4, 0o600, &u), Ok(Found::Create));
    // Segment sizes, by pages.
    assert_eq!(
        ipc.shm_lookup(0, 2 * 4096 + 1, 0o600, &u),
        Ok(Found::Create)
    );
    ipc.shm_create(0, 4096, 0o600, &u, 9, 9, 1, 0).unwrap();
    assert_eq!(ipc.shm_lookup(0, 2 * 4096 + 1, 0o600, &u), Err(ENOMEM));
    assert_eq!(ipc.shm_lookup(0, 2 * 4096, 0o600, &u), Ok(Found::Create));
    // Message heap: text and a header each.
    let q = 0;
    assert_eq!(
        ipc.msg_send(q, 1, &[0; 100], IPC_NOWAIT, &u, 1, 0),
        Ok(Sent::Done)
    );
    assert_eq!(
        ipc.msg_send(q, 1, &[0; 60], IPC_NOWAIT, &u, 1, 0),
        Err(EAGAIN)
    );
    assert_eq!(ipc.msg_send(q, 1, &[0; 4], 0, &u, 1, 0), Ok(Sent::Done));
}

#[test]
fn shm_sizes_and_removal() {
    let mut ipc = Ipc::default();
    let u = user(1000);
    assert_eq!(ipc.shm_lookup(0, 0, IPC_CREAT | 0o600, &u), Err(EINVAL));
    assert_eq!(
        ipc.shm_lookup(0, limit::SHMMAX + 1, IPC_CREAT, &u),
        Err(EINVAL)
    );
    let id = ipc
        .shm_create(5, 10000, IPC_CREAT | 0o600, &u, 40, 3, 77, 9)
        .unwrap() as i64;
    // A bigger size than the key's segment: EINVAL; smaller or 0 finds it.
    assert_eq!(ipc.shm_lookup(5, 10001, 0o600, &u), Err(EINVAL));
    assert_eq!(
        ipc.shm_lookup(5, 0, 0o600, &u),
        Ok(Found::Existing(id as i32))
    );
    // Attaching asks read and write, or read only.
    let other = user(2000);
    assert_eq!(ipc.shm_attach(id, 0, &other, 2, 10).err(), Some(EACCES));
    let s = ipc.shm_attach(id, SHM_RDONLY, &u, 78, 11).unwrap();
    assert_eq!(
        (s.segsz, s.ino, s.atime, s.lpid, s.cpid),
        (10000, 40, 11, 78, 77)
    );
    // Stat: nattch from the caller.
    let mut b = [0u8; 112];
    assert_eq!(
        ipc.shm_ctl(id, IPC_STAT, &mut b, &u, 12, |_| 2),
        Ok((0, None))
    );
    assert_eq!(
        (get64(&b, off::SHM_SEGSZ), get64(&b, off::SHM_NATTCH)),
        (10000, 2)
    );
    assert_eq!(get32(&b, off::SHM_CPID), 77);
    assert_eq!(
        ipc.shm_ctl(id, IPC_STAT, &mut b, &other, 12, |_| 2),
        Err(EACCES)
    );
    assert_eq!(
        ipc.shm_ctl(id, IPC_RMID, &mut b, &other, 12, |_| 2),
        Err(EPERM)
    );
    assert_eq!(ipc.shm_ctl(id, 99, &mut b, &u, 12, |_| 2), Err(EINVAL));
    // Removed while attached: marked, keyless, still there.
    assert_eq!(
        ipc.shm_ctl(id, IPC_RMID, &mut b, &u, 12, |_| 1),
        Ok((0, None))
    );
    let e = ipc.shm.get(id).unwrap();
    assert_eq!(
        (e.perm.key, e.perm.mode & SHM_DEST),
        (IPC_PRIVATE, SHM_DEST)
    );
    assert_eq!(ipc.shm_lookup(5, 0, 0o600, &u), Err(ENOENT));
    // A detach that leaves one: still there; the last: gone, its fid back.
    assert_eq!(ipc.shm_detached(40, 1, 78, 13), None);
    assert_eq!(ipc.shm.get(id).unwrap().obj.dtime, 13);
    assert_eq!(ipc.shm_detached(40, 0, 78, 14), Some(3));
    assert_eq!(ipc.shm.get(id).err(), Some(EINVAL));
    // Removed with no attaches: gone at once.
    let id = ipc.shm_create(0, 1, 0o600, &u, 41, 4, 77, 9).unwrap() as i64;
    assert_eq!(
        ipc.shm_ctl(id, IPC_RMID, &mut b, &u, 12, |_| 0),
        Ok((0, Some(4)))
    );
    assert_eq!(ipc.shm_usage(), (0, 0));
}

#[test]
fn shm_lock_and_set() {
    let mut ipc = Ipc::default();
    let u = user(1000);
    let id = ipc.shm_create(0, 4096, 0o600, &u, 40, 3, 77, 9).unwrap() as i64;
    let mut b = [0u8; 112];
    assert_eq!(
        ipc.shm_ctl(id, SHM_LOCK, &mut b, &user(5), 1, |_| 0),
        Err(EPERM)
    );
    assert_eq!(
        ipc.shm_ctl(id, SHM_LOCK, &mut b, &u, 1, |_| 0),
        Ok((0, None))
    );
    assert_eq!(ipc.shm.get(id).unwrap().perm.mode, SHM_LOCKED | 0o600);
    b[off::UID..off::UID + 4].copy_from_slice(&3000u32.to_le_bytes());
    b[off::MODE..off::MODE + 4].copy_from_slice(&0o666u32.to_le_bytes());
    assert_eq!(
        ipc.shm_ctl(id, IPC_SET, &mut b, &u, 20, |_| 0),
        Ok((0, None))
    );
    let e = ipc.shm.get(id).unwrap();
    assert_eq!(
        (e.perm.uid, e.perm.mode, e.obj.ctime),
        (3000, SHM_LOCKED | 0o666, 20)
    );
    assert_eq!(ipc.shm_usage(), (1, 1));
}

#[test]
fn semget_rules() {
    let mut ipc = Ipc::default();
    assert_eq!(ipc.sem_lookup(0, -1, IPC_CREAT, &ROOT), Err(EINVAL));
    assert_eq!(ipc.sem_lookup(0, 32001, IPC_CREAT, &ROOT), Err(EINVAL));
    assert_eq!(ipc.sem_lookup(0, 0, IPC_CREAT, &ROOT), Err(EINVAL));
    let id = new_set(&mut ipc, 9, 3, 0o600, &ROOT);
    assert_eq!(ipc.sem_lookup(9, 4, 0, &ROOT), Err(EINVAL));
    assert_eq!(
        ipc.sem_lookup(9, 0, 0, &ROOT),
        Ok(Found::Existing(id as i32))
    );
    assert_eq!(ipc.sem_usage(), (1, 3));
}

#[test]
fn semop_all_or_nothing() {
    let mut ipc = Ipc::default();
    let u = user(1000);
    let id = new_set(&mut ipc, 0, 2, 0o600, &u);
    // Both or neither: the second cannot be done, so the first is undone.
    let r = ipc.semop(id, &[op(0, 1, 0), op(1, -1, 0)], &u, 5, 50);
    assert_eq!(r, Ok(Outcome::Block(1)));
    assert_eq!(val(&ipc, id, 0), 0);
    let r = ipc.semop(id, &[op(0, 1, 0), op(1, -1, IPC_NOWAIT)], &u, 5, 50);
    assert_eq!(r, Err(EAGAIN));
    // The same semaphore twice, in order.
    assert_eq!(
        ipc.semop(id, &[op(0, 2, 0), op(0, -1, 0)], &u, 5, 50),
        Ok(Outcome::Done)
    );
    assert_eq!(val(&ipc, id, 0), 1);
    let set = &ipc.sem.get(id).unwrap().obj;
    assert_eq!((set.pids[0], set.pids[1], set.otime), (5, 0, 50));
    // Wait for zero.
    assert_eq!(ipc.semop(id, &[op(1, 0, 0)], &u, 5, 50), Ok(Outcome::Done));
    assert_eq!(
        ipc.semop(id, &[op(0, 0, 0)], &u, 5, 50),
        Ok(Outcome::Block(0))
    );
    // Past SEMVMX: ERANGE, nothing changed.
    assert_eq!(
        ipc.semop(id, &[op(1, 1, 0), op(0, 32767, 0)], &u, 5, 50),
        Err(ERANGE)
    );
    assert_eq!((val(&ipc, id, 0), val(&ipc, id, 1)), (1, 0));
}

#[test]
fn semop_argument_errors() {
    let mut ipc = Ipc::default();
    let u = user(1000);
    let id = new_set(&mut ipc, 0, 2, 0o600, &u);
    assert_eq!(ipc.semop(id, &[], &u, 5, 0), Err(EINVAL));
    assert_eq!(ipc.semop(-1, &[op(0, 1, 0)], &u, 5, 0), Err(EINVAL));
    assert_eq!(ipc.semop(id + 1, &[op(0, 1, 0)], &u, 5, 0), Err(EINVAL));
    assert_eq!(ipc.semop(id, &vec![op(0, 0, 0); 501], &u, 5, 0), Err(E2BIG));
    assert_eq!(ipc.semop(id, &[op(2, 1, 0)], &u, 5, 0), Err(EFBIG));
    let other = user(2000);
    assert_eq!(ipc.semop(id, &[op(0, 1, 0)], &other, 5, 0), Err(EACCES));
    assert_eq!(
        ipc.semop(id, &[op(0, 0, IPC_NOWAIT)], &other, 5, 0),
        Err(EACCES)
    );
}

#[test]
fn undo_at_exit() {
    let mut ipc = Ipc::default();
    let id = new_set(&mut ipc, 0, 2, 0o666, &ROOT);
    let mut out = [0u8; 64];
    ipc.sem_ctl(id, 0, SETVAL, 5, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    // Process 7 takes 2 with SEM_UNDO and gives 1 back without.
    assert_eq!(
        ipc.semop(id, &[op(0, -2, SEM_UNDO)], &ROOT, 7, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(
        ipc.semop(id, &[op(1, 3, SEM_UNDO)], &ROOT, 7, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(
        ipc.semop(id, &[op(0, 1, 0)], &ROOT, 7, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(ipc.undo[0].adj, [2, -3]);
    // Another's end changes nothing.
    assert_eq!(ipc.exit(8, 0), Vec::<i32>::new());
    assert_eq!(ipc.exit(7, 0), vec![id as i32]);
    assert_eq!((val(&ipc, id, 0), val(&ipc, id, 1)), (6, 0));
    assert_eq!(ipc.sem.get(id).unwrap().obj.pids[0], 7);
    assert!(ipc.undo.is_empty());
    // Clamped at 0: the value was taken below what undo gives back.
    assert_eq!(
        ipc.semop(id, &[op(1, 2, SEM_UNDO)], &ROOT, 9, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(
        ipc.semop(id, &[op(1, -2, 0)], &ROOT, 10, 0),
        Ok(Outcome::Done)
    );
    ipc.exit(9, 0);
    assert_eq!(val(&ipc, id, 1), 0);
    // SETVAL clears the semaphore's adjustments.
    assert_eq!(
        ipc.semop(id, &[op(1, 2, SEM_UNDO)], &ROOT, 11, 0),
        Ok(Outcome::Done)
    );
    ipc.sem_ctl(id, 1, SETVAL, 1, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    ipc.exit(11, 0);
    assert_eq!(val(&ipc, id, 1), 1);
    // Adjustments past SEMAEM: ERANGE.
    ipc.sem_ctl(id, 1, SETVAL, 32767, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    assert_eq!(
        ipc.semop(id, &[op(1, -32767, SEM_UNDO)], &ROOT, 12, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(
        ipc.semop(id, &[op(1, 32767, 0)], &ROOT, 12, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(
        ipc.semop(id, &[op(1, -2, SEM_UNDO)], &ROOT, 12, 0),
        Err(ERANGE)
    );
}

#[test]
fn parked_operations_go_in_order() {
    let mut ipc = Ipc::default();
    let id = new_set(&mut ipc, 0, 2, 0o666, &ROOT);
    let mut out = [0u8; 8];
    ipc.sem_ctl(id, 1, SETVAL, 1, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    // Three wait: 1 wants two of semaphore 0, 2 wants one, 3 waits for
    // semaphore 1 to be zero.
    for (t, pid, sops) in [
        (1, 11, vec![op(0, -2, 0)]),
        (2, 12, vec![op(0, -1, SEM_UNDO)]),
        (3, 13, vec![op(0, 0, 0), op(1, 0, 0)]),
    ] {
        let r = ipc.semop(id, &sops, &ROOT, pid, 0);
        let blocking = if t == 3 { 1 } else { 0 };
        assert_eq!(r, Ok(Outcome::Block(blocking)));
        ipc.wait(
            t,
            pid,
            Wants::Sem {
                id: id as i32,
                sops,
                blocking,
            },
        )
        .unwrap();
    }
    assert_eq!(ipc.sem_waiting(id as i32, 0, false), 2);
    assert_eq!(ipc.sem_waiting(id as i32, 0, true), 0);
    assert_eq!(ipc.sem_waiting(id as i32, 1, true), 1);
    let ncnt = ipc
        .sem_ctl(id, 0, GETNCNT, 0, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    assert_eq!(ncnt.ret, 2);
    let zcnt = ipc
        .sem_ctl(id, 1, GETZCNT, 0, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    assert_eq!(zcnt.ret, 1);
    // Semaphore 1 to zero: 3 goes.
    ipc.sem_ctl(id, 1, SETVAL, 0, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    assert_eq!(
        ipc.sem_update(id as i32, 3, all_live),
        vec![(3, Woken::Done)]
    );
    // One: the first still waits (wants two), the second goes.
    assert_eq!(
        ipc.semop(id, &[op(0, 1, 0)], &ROOT, 20, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(
        ipc.sem_update(id as i32, 4, all_live),
        vec![(2, Woken::Done)]
    );
    assert_eq!(val(&ipc, id, 0), 0);
    assert_eq!(ipc.undo[0].adj[0], 1);
    assert_eq!(ipc.sem.get(id).unwrap().obj.pids[0], 12);
    // Three: the first takes two; one is left.
    assert_eq!(
        ipc.semop(id, &[op(0, 3, 0)], &ROOT, 20, 0),
        Ok(Outcome::Done)
    );
    assert_eq!(
        ipc.sem_update(id as i32, 4, all_live),
        vec![(1, Woken::Done)]
    );
    assert_eq!(val(&ipc, id, 0), 1);
    assert!(ipc.pending.is_empty());
}

#[test]
fn gone_and_retrying_waiters() {
    let mut ipc = Ipc::default();
    let id = new_set(&mut ipc, 0, 1, 0o666, &ROOT);
    for t in [1, 2, 3] {
        ipc.wait(
            t,
            t,
            Wants::Sem {
                id: id as i32,
                sops: vec![op(0, -1, 0)],
                blocking: 0,
            },
        )
        .unwrap();
    }
    ipc.semop(id, &[op(0, 1, 0)], &ROOT, 9, 0).unwrap();
    // 1 is gone (a signal ended it), 2 will ask again: told, nothing
    // taken for it; 3 takes the one.
    let live = |t| match t {
        1 => Live::Gone,
        2 => Live::Retry,
        _ => Live::Answer,
    };
    assert_eq!(
        ipc.sem_update(id as i32, 0, live),
        vec![(2, Woken::Retry), (3, Woken::Done)]
    );
    assert_eq!(val(&ipc, id, 0), 0);
    assert!(ipc.pending.is_empty());
    // Removal takes every wait on the set (each answers EIDRM).
    ipc.wait(
        4,
        4,
        Wants::Sem {
            id: id as i32,
            sops: vec![op(0, -1, 0)],
            blocking: 0,
        },
    )
    .unwrap();
    ipc.wait(5, 5, Wants::Send { id: 0 }).unwrap();
    let mut out = [0u8; 8];
    ipc.sem_ctl(id, 0, IPC_RMID, 0, &[], &mut out, &ROOT, 1, 0)
        .unwrap();
    let idrm = ipc.take_waits(|w| matches!(w, Wants::Sem { id: s, .. } if *s as i64 == id));
    assert_eq!(idrm, [4]);
    assert_eq!(ipc.pending.len(), 1);
    let _ = EIDRM;
}

#[test]
fn semctl_commands() {
    let mut ipc = Ipc::default();
    let u = user(1000);
    let id = new_set(&mut ipc, 3, 3, 0o640, &u);
    let mut out = [0u8; 4096];
    let c = |ipc: &mut Ipc, num, cmd, arg, inp: &[u8], who: &Cred, out: &mut [u8]| {
        ipc.sem_ctl(id, num, cmd, arg, inp, out, who, 42, 77)
    };
    assert_eq!(
        c(&mut ipc, 0, SETVAL, 32768, &[], &u, &mut out),
        Err(ERANGE)
    );
    assert_eq!(
        c(&mut ipc, 0, SETVAL, (-1i64) as u64, &[], &u, &mut out),
        Err(ERANGE)
    );
    assert_eq!(c(&mut ipc, 3, SETVAL, 1, &[], &u, &mut out), Err(EINVAL));
    assert_eq!(c(&mut ipc, -1, GETVAL, 0, &[], &u, &mut out), Err(EINVAL));
    assert_eq!(
        c(&mut ipc, 1, SETVAL, 9, &[], &user(2000), &mut out),
        Err(EACCES)
    );
    assert!(
        c(&mut ipc, 1, SETVAL, 9, &[], &u, &mut out)
            .unwrap()
            .changed
    );
    assert_eq!(c(&mut ipc, 1, GETVAL, 0, &[], &u, &mut out).unwrap().ret, 9);
    assert_eq!(
        c(&mut ipc, 1, GETPID, 0, &[], &u, &mut out).unwrap().ret,
        42
    );
    // SETALL: the size first, then the values.
    assert_eq!(
        c(&mut ipc, 0, SETALL, 0, &[], &u, &mut out).unwrap().nsems,
        3
    );
    assert_eq!(
        c(&mut ipc, 0, SETALL, 1, &[1, 0, 2, 0], &u, &mut out),
        Err(EINVAL)
    );
    assert_eq!(
        c(&mut ipc, 0, SETALL, 1, &[1, 0, 2, 0, 0, 0x80], &u, &mut out),
        Err(ERANGE)
    );
    assert!(
        c(&mut ipc, 0, SETALL, 1, &[1, 0, 2, 0, 3, 0], &u, &mut out)
            .unwrap()
            .changed
    );
    let g = c(&mut ipc, 0, GETALL, 0, &[], &u, &mut out).unwrap();
    assert_eq!((g.len, g.nsems, &out[..6]), (6, 3, &[1, 0, 2, 0, 3, 0][..]));
    let g = c(&mut ipc, 0, GETALL, 2, &[], &u, &mut out).unwrap();
    assert_eq!((g.len, &out[..2]), (2, &[3, 0][..]));
    // Stat and set.
    let s = c(&mut ipc, 0, IPC_STAT, 0, &[], &u, &mut out).unwrap();
    assert_eq!(
        (
            s.len,
            get64(&out, off::SEM_NSEMS),
            get64(&out, off::SEM_CTIME)
        ),
        (104, 3, 77)
    );
    assert_eq!(
        c(&mut ipc, 0, IPC_STAT, 0, &[], &user(2000), &mut out),
        Err(EACCES)
    );
    let mut perm = [0u8; 104];
    perm[off::UID..off::UID + 4].copy_from_slice(&2000u32.to_le_bytes());
    perm[off::MODE..off::MODE + 4].copy_from_slice(&0o600u32.to_le_bytes());
    assert_eq!(
        c(&mut ipc, 0, IPC_SET, 0, &perm, &user(2000), &mut out),
        Err(EPERM)
    );
    assert!(c(&mut ipc, 0, IPC_SET, 0, &perm, &u, &mut out).is_ok());
    // The new owner reads; the creator still may change it.
    assert!(c(&mut ipc, 0, GETVAL, 0, &[], &user(2000), &mut out).is_ok());
    assert!(c(&mut ipc, 0, IPC_RMID, 0, &[], &user(3000), &mut out).is_err());
    assert_eq!(c(&mut ipc, 0, 99, 0, &[], &u, &mut out), Err(EINVAL));
    assert!(c(&mut ipc, 0, IPC_RMID, 0, &[], &u, &mut out).is_ok());
    assert_eq!(c(&mut ipc, 0, GETVAL, 0, &[], &u, &mut out), Err(EINVAL));
}

fn m(mtype: i64, text: &[u8]) -> Message {
    Message {
        mtype,
        text: text.to_vec(),
    }
}

#[test]
fn choosing_by_type() {
    let q = [m(3, b"a"), m(1, b"b"), m(2, b"c"), m(1, b"d")];
    assert_eq!(choose(&q, 0, 0), Some(0));
    assert_eq!(choose(&q, 1, 0), Some(1));
    assert_eq!(choose(&q, 5, 0), None);
    assert_eq!(choose(&q, 3, MSG_EXCEPT), Some(1));
    assert_eq!(choose(&q, 1, MSG_EXCEPT), Some(0));
    // The first of the lowest type up to |msgtyp|.
    assert_eq!(choose(&q, -2, 0), Some(1));
    assert_eq!(choose(&q, -3, 0), Some(1));
    assert_eq!(choose(&[m(3, b""), m(2, b"")], -3, 0), Some(1));
    assert_eq!(choose(&q, i64::MIN, 0), Some(1));
    assert_eq!(choose(&[m(3, b"")], -2, 0), None);
    assert_eq!(choose(&q, 2, MSG_COPY), Some(2));
    assert_eq!(choose(&q, 4, MSG_COPY), None);
    assert_eq!(choose(&[], 0, 0), None);
}

#[test]
fn send_and_receive() {
    let mut ipc = Ipc::default();
    let u = user(1000);
    let q = ipc.msg_create(0, 0o600, &u, 1).unwrap() as i64;
    assert_eq!(ipc.msg_send(q, 0, b"x", 0, &u, 5, 2), Err(EINVAL));
    assert_eq!(ipc.msg_send(q, 1, &[0; 8193], 0, &u, 5, 2), Err(EINVAL));
    assert_eq!(ipc.msg_send(q, 1, b"x", 0, &user(2), 5, 2), Err(EACCES));
    assert_eq!(ipc.msg_send(q, 2, b"hello", 0, &u, 5, 2), Ok(Sent::Done));
    assert_eq!(ipc.msg_send(q, 1, b"hi", 0, &u, 5, 3), Ok(Sent::Done));
    let st = &ipc.msg.get(q).unwrap().obj;
    assert_eq!((st.cbytes, st.msgs.len(), st.lspid, st.stime), (7, 2, 5, 3));
    // Too long for the buffer: E2BIG, and it stays; MSG_NOERROR cuts it.
    assert_eq!(ipc.msg_receive(q, 2, 3, 0, &u, 6, 4), Err(E2BIG));
    assert_eq!(
        ipc.msg_receive(q, 2, 3, MSG_NOERROR, &u, 6, 4),
        Ok(Received::Msg(m(2, b"hel")))
    );
    assert_eq!(ipc.msg_receive(q, 2, 3, IPC_NOWAIT, &u, 6, 4), Err(ENOMSG));
    assert_eq!(ipc.msg_receive(q, 2, 3, 0, &u, 6, 4), Ok(Received::Empty));
    assert_eq!(ipc.msg_receive(q, 0, 100, 0, &user(2), 6, 4), Err(EACCES));
    // MSG_COPY leaves it; it needs IPC_NOWAIT and no MSG_EXCEPT.
    assert_eq!(ipc.msg_receive(q, 0, 100, MSG_COPY, &u, 6, 4), Err(EINVAL));
    assert_eq!(
        ipc.msg_receive(q, 0, 100, MSG_COPY | IPC_NOWAIT | MSG_EXCEPT, &u, 6, 4),
        Err(EINVAL)
    );
    assert_eq!(
        ipc.msg_receive(q, 0, 100, MSG_COPY | IPC_NOWAIT, &u, 6, 4),
        Ok(Received::Msg(m(1, b"hi")))
    );
    assert_eq!(
        ipc.msg_receive(q, 0, 100, 0, &u, 6, 5),
        Ok(Received::Msg(m(1, b"hi")))
    );
    let st = &ipc.msg.get(q).unwrap().obj;
    assert_eq!((st.cbytes, st.msgs.len(), st.lrpid, st.rtime), (0, 0, 6, 5));
}

#[test]
fn a_full_queue_holds_senders() {
    let mut ipc = Ipc::default();
    let q = ipc.msg_create(0, 0o600, &ROOT, 1).unwrap() as i64;
    let mut b = [0u8; 120];
    b[off::MODE..off::MODE + 4].copy_from_slice(&0o600u32.to_le_bytes());
    b[off::MSG_QBYTES..off::MSG_QBYTES + 8].copy_from_slice(&10u64.to_le_bytes());
    let mut out = [0u8; 120];
    assert_eq!(ipc.msg_ctl(q, IPC_SET, &b, &mut out, &ROOT, 0), Ok((0, 0)));
    assert_eq!(ipc.msg_send(q, 1, &[1; 8], 0, &ROOT, 1, 0), Ok(Sent::Done));
    assert_eq!(ipc.msg_send(q, 1, &[1; 3], 0, &ROOT, 1, 0), Ok(Sent::Full));
    assert_eq!(
        ipc.msg_send(q, 1, &[1; 3], IPC_NOWAIT, &ROOT, 1, 0),
        Err(EAGAIN)
    );
    assert_eq!(ipc.msg_send(q, 1, &[1; 2], 0, &ROOT, 1, 0), Ok(Sent::Done));
    // Messages count too: ten of none fill it.
    ipc.msg_receive(q, 0, 100, 0, &ROOT, 1, 0).unwrap();
    ipc.msg_receive(q, 0, 100, 0, &ROOT, 1, 0).unwrap();
    for _ in 0..10 {
        assert_eq!(ipc.msg_send(q, 1, &[], 0, &ROOT, 1, 0), Ok(Sent::Done));
    }
    assert_eq!(ipc.msg_send(q, 1, &[], 0, &ROOT, 1, 0), Ok(Sent::Full));
    // Raising qbytes past MSGMNB is root's.
    b[off::MSG_QBYTES..off::MSG_QBYTES + 8].copy_from_slice(&16385u64.to_le_bytes());
    let u = user(0x100);
    let uq = ipc.msg_create(0, 0o600, &u, 1).unwrap() as i64;
    assert_eq!(ipc.msg_ctl(uq, IPC_SET, &b, &mut out, &u, 0), Err(EPERM));
    assert_eq!(ipc.msg_ctl(uq, IPC_SET, &b, &mut out, &ROOT, 0), Ok((0, 0)));
    assert_eq!(ipc.msg_usage(), (2, 10, 0));
    ipc.wait(7, 1, Wants::Send { id: q as i32 }).unwrap();
    assert_eq!(ipc.msg_senders(), [7]);
}

#[test]
fn a_message_goes_to_waiting_receivers() {
    let mut ipc = Ipc::default();
    let q = ipc.msg_create(0, 0o600, &ROOT, 1).unwrap();
    let recv = |typ, flags, max| Wants::Recv {
        id: q,
        typ,
        flags,
        max,
    };
    ipc.wait(1, 11, recv(5, 0, 100)).unwrap();
    ipc.wait(2, 12, recv(0, 0, 2)).unwrap();
    ipc.wait(3, 13, recv(0, 0, 100)).unwrap();
    ipc.wait(4, 14, recv(0, 0, 100)).unwrap();
    ipc.msg_send(q as i64, 3, b"abc", 0, &ROOT, 9, 7).unwrap();
    // 1 wants type 5; 2's buffer is short (E2BIG, the message stays); 3
    // takes it; 4 waits on.
    let got = ipc.msg_handoff(q, 8, all_live);
    assert_eq!(
        got,
        vec![(2, Some(Err(E2BIG))), (3, Some(Ok(m(3, b"abc"))))]
    );
    assert_eq!(ipc.pending.len(), 2);
    let st = &ipc.msg.get(q as i64).unwrap().obj;
    assert_eq!((st.msgs.len(), st.lrpid, st.rtime), (0, 13, 8));
    // A thread that will ask again is told, and nothing is taken.
    ipc.msg_send(q as i64, 5, b"z", 0, &ROOT, 9, 7).unwrap();
    let got = ipc.msg_handoff(q, 8, |t| if t == 1 { Live::Retry } else { Live::Answer });
    assert_eq!(got, vec![(1, None), (4, Some(Ok(m(5, b"z"))))]);
    assert!(ipc.pending.is_empty());
}

#[test]
fn staged_and_kept_bytes() {
    let mut ipc = Ipc::default();
    assert_eq!(ipc.stage(5, 0, 4, b"x"), Err(EINVAL));
    ipc.stage(5, 0, 0, b"abcd").unwrap();
    ipc.stage(5, 0, 4, b"ef").unwrap();
    ipc.stage(5, 1, 0, b"other thread").unwrap();
    assert_eq!(ipc.stage(5, 0, 2, b"x"), Err(EINVAL));
    assert_eq!(ipc.staged(5, 0, b"gh").unwrap(), b"abcdefgh");
    assert_eq!(ipc.staged(5, 0, b"i").unwrap(), b"i");
    assert_eq!(ipc.stage(5, 0, 0, &vec![0; MAX_STAGED + 1]), Err(E2BIG));
    ipc.keep_rest(6, 0, b"0123456789".to_vec()).unwrap();
    let mut out = [0u8; 4];
    assert_eq!(ipc.rest(6, 0, 4, &mut out), 4);
    assert_eq!(&out, b"4567");
    assert_eq!(ipc.rest(6, 0, 8, &mut out), 2);
    assert_eq!(ipc.rest(6, 0, 8, &mut out), 0, "the last piece let them go");
    ipc.keep_rest(6, 0, b"x".to_vec()).unwrap();
    ipc.exit(6, 0);
    ipc.exit(5, 0);
    assert_eq!(ipc.rest(6, 0, 0, &mut out), 0);
    assert_eq!(ipc.staged(5, 1, b"").unwrap(), b"");
}

#[test]
fn tickets_are_never_zero() {
    let mut ipc = Ipc {
        next_ticket: u32::MAX - 1,
        ..Ipc::default()
    };
    assert_eq!(ipc.ticket(), u32::MAX);
    assert_eq!(ipc.ticket(), 1);
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever operations come, values stay within 0..=SEMVMX and an
        /// operation that fails or waits changes nothing.
        #[test]
        fn semop_keeps_values_in_range(
            ops in proptest::collection::vec((0u16..3, any::<i16>(), any::<bool>()), 1..8),
            start in proptest::collection::vec(0u16..=32767, 3),
        ) {
            let mut ipc = Ipc::default();
            let id = new_set(&mut ipc, 0, 3, 0o600, &ROOT);
            let mut out = [0u8; 8];
            let mut inp = Vec::new();
            for v in &start {
                inp.extend_from_slice(&v.to_le_bytes());
            }
            ipc.sem_ctl(id, 0, SETALL, 1, &inp, &mut out, &ROOT, 1, 0).unwrap();
            let sops: Vec<SemBuf> = ops
                .iter()
                .map(|&(n, o, u)| op(n, o, IPC_NOWAIT | if u { SEM_UNDO } else { 0 }))
                .collect();
            let before = ipc.sem.get(id).unwrap().obj.vals.clone();
            let r = ipc.semop(id, &sops, &ROOT, 3, 0);
            let after = ipc.sem.get(id).unwrap().obj.vals.clone();
            prop_assert!(after.iter().all(|&v| v as i32 <= limit::SEMVMX));
            if r != Ok(Outcome::Done) {
                prop_assert_eq!(&before, &after);
            }
            ipc.exit(3, 0);
            let end = ipc.sem.get(id).unwrap().obj.vals.clone();
            prop_assert!(end.iter().all(|&v| v as i32 <= limit::SEMVMX));
            if r == Ok(Outcome::Done) && sops.iter().all(|s| s.flg as u32 & SEM_UNDO != 0) {
                // Everything undone (nothing else touched the set).
                prop_assert_eq!(&before, &end);
            }
        }
    }
}

mod posix {
    use super::super::mq::*;
    use super::*;
    use stet_unix::sysv::errno::EMSGSIZE;

    #[test]
    fn attributes() {
        assert_eq!(Ipc::mq_attr(None, false), Ok((10, 8192)));
        assert_eq!(Ipc::mq_attr(Some((0, 10)), true), Err(EINVAL));
        assert_eq!(Ipc::mq_attr(Some((5, -1)), true), Err(EINVAL));
        assert_eq!(Ipc::mq_attr(Some((11, 10)), false), Err(EINVAL));
        assert_eq!(Ipc::mq_attr(Some((10, 8193)), false), Err(EINVAL));
        assert_eq!(Ipc::mq_attr(Some((11, 8193)), true), Ok((11, 8193)));
        assert_eq!(Ipc::mq_attr(Some((65537, 1)), true), Err(EINVAL));
    }

    #[test]
    fn a_user_reserves_at_most_its_limit() {
        let mut ipc = Ipc::default();
        // Linux: 10 × 8192 + 10 × 96 each; nine fit in 819,200.
        for ino in 0..9 {
            assert_eq!(ipc.mq_may_make(7, 10, 8192), Ok(()));
            ipc.mq_create(ino, 10, 8192, 7).unwrap();
        }
        assert_eq!(ipc.mq_may_make(7, 10, 8192), Err(EMFILE));
        assert_eq!(ipc.mq_may_make(7, 1, 1000), Ok(()));
        assert_eq!(ipc.mq_may_make(8, 10, 8192), Ok(()));
        ipc.mq_gone(3);
        assert_eq!(ipc.mq_may_make(7, 10, 8192), Ok(()));
    }

    #[test]
    fn priority_order() {
        let mut ipc = Ipc::default();
        ipc.mq_create(1, 4, 8, 0).unwrap();
        for (p, t) in [(1, &b"low"[..]), (5, b"high"), (3, b"mid"), (5, b"high2")] {
            assert_eq!(ipc.mq_send(1, p, t, false), Ok(MqSent::Done));
        }
        assert_eq!(ipc.mq_send(1, 9, b"x", false), Ok(MqSent::Full));
        assert_eq!(ipc.mq_send(1, 9, b"x", true), Err(EAGAIN));
        assert_eq!(ipc.mq_send(1, 32768, b"x", true), Err(EINVAL));
        assert_eq!(ipc.mq_send(1, 0, b"123456789", true), Err(EMSGSIZE));
        assert_eq!(ipc.mq_send(2, 0, b"x", true), Err(EBADF));
        assert_eq!(ipc.mq_receive(1, 7, false), Err(EMSGSIZE));
        let got: Vec<_> = (0..4)
            .map(|_| ipc.mq_receive(1, 8, false).unwrap().unwrap())
            .collect();
        let want = [(5, &b"high"[..]), (5, b"high2"), (3, b"mid"), (1, b"low")];
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0, &g.1[..]), w);
        }
        assert_eq!(ipc.mq_receive(1, 8, true), Err(EAGAIN));
        assert_eq!(ipc.mq_receive(1, 8, false), Ok(None));
    }

    #[test]
    fn notification_of_an_empty_queue() {
        let mut ipc = Ipc::default();
        ipc.mq_create(1, 4, 8, 0).unwrap();
        assert_eq!(ipc.mq_set_notify(1, 10, Some(10)), Ok(()));
        assert_eq!(ipc.mq_set_notify(1, 11, Some(12)), Err(EBUSY));
        // Another's removal changes nothing.
        assert_eq!(ipc.mq_set_notify(1, 11, None), Ok(()));
        ipc.mq_send(1, 0, b"a", false).unwrap();
        assert_eq!(ipc.mq_notice(1), Some((10, 10)));
        // Used up: the next one is nobody's.
        ipc.mq_receive(1, 8, false).unwrap();
        ipc.mq_send(1, 0, b"b", false).unwrap();
        assert_eq!(ipc.mq_notice(1), None);
        // Only when the queue was empty; SIGEV_NONE sends nothing.
        assert_eq!(ipc.mq_set_notify(1, 11, Some(12)), Ok(()));
        ipc.mq_send(1, 0, b"c", false).unwrap();
        assert_eq!(ipc.mq_notice(1), None);
        ipc.mq_exit(11);
        assert_eq!(ipc.mq_set_notify(1, 12, Some(0)), Ok(()));
        ipc.mq_receive(1, 8, false).unwrap();
        ipc.mq_receive(1, 8, false).unwrap();
        ipc.mq_send(1, 0, b"d", false).unwrap();
        assert_eq!(ipc.mq_notice(1), None);
        assert_eq!(ipc.mq_of(1).unwrap().notify, None);
    }

    #[test]
    fn waiting_receivers_take_in_order() {
        let mut ipc = Ipc::default();
        ipc.mq_create(1, 4, 8, 0).unwrap();
        for t in [1, 2, 3] {
            ipc.wait(t, t, Wants::MqRecv { ino: 1 }).unwrap();
        }
        ipc.wait(4, 4, Wants::MqSend { ino: 1 }).unwrap();
        ipc.mq_send(1, 2, b"x", false).unwrap();
        ipc.mq_send(1, 1, b"y", false).unwrap();
        let live = |t| if t == 1 { Live::Retry } else { Live::Answer };
        let got = ipc.mq_handoff(1, live);
        assert_eq!(
            got,
            vec![
                (1, None),
                (2, Some((2, b"x".to_vec()))),
                (3, Some((1, b"y".to_vec())))
            ]
        );
        assert_eq!(ipc.mq_senders(1), [4]);
        assert!(ipc.pending.is_empty());
    }
}

#[test]
fn shm_limits_root_may_change() {
    let mut ipc = Ipc {
        shm_limits: ShmLimits {
            max: 8192,
            all: 3,
            mni: 2,
        },
        ..Ipc::default()
    };
    let c = IPC_CREAT | 0o600;
    assert_eq!(
        ipc.shm_lookup(0, 8193, c, &ROOT),
        Err(EINVAL),
        "past shmmax"
    );
    ipc.shm_create(1, 8192, c, &ROOT, 9, 9, 1, 0).unwrap();
    assert_eq!(
        ipc.shm_lookup(0, 8192, c, &ROOT),
        Err(ENOSPC),
        "past shmall"
    );
    ipc.shm_create(2, 4096, c, &ROOT, 10, 10, 1, 0).unwrap();
    assert_eq!(ipc.shm_lookup(0, 1, c, &ROOT), Err(ENOSPC), "past shmmni");
    let mut b = [0u8; size::SHMINFO];
    write_shminfo(&mut b, &ipc.shm_limits);
    assert_eq!(u64::from_le_bytes(b[..8].try_into().unwrap()), 8192);
}

#[test]
fn stat_any_takes_an_id_and_skips_read_permission() {
    let mut ipc = Ipc::default();
    let mut out = [0u8; 256];
    // Slot 0 used twice: the second queue's id is 32768.
    let a = ipc.msg_create(0, 0o600, &ROOT, 0).unwrap();
    ipc.msg_ctl(a as i64, IPC_RMID, &[], &mut out, &ROOT, 0)
        .unwrap();
    let q = ipc.msg_create(0, 0o600, &ROOT, 0).unwrap();
    assert_eq!(q, 32768);
    let nobody = user(65534);
    // An id names its own slot (the index is its low bits).
    assert_eq!(
        ipc.msg_ctl(q as i64, MSG_STAT, &[], &mut out, &nobody, 0),
        Err(EACCES)
    );
    assert_eq!(
        ipc.msg_ctl(q as i64, MSG_STAT_ANY, &[], &mut out, &nobody, 0),
        Ok((32768, 120))
    );
    assert_eq!(
        ipc.msg_ctl(-1, MSG_STAT_ANY, &[], &mut out, &nobody, 0)
            .err(),
        Some(EINVAL)
    );
    let s = new_set(&mut ipc, 0, 3, 0o600, &ROOT);
    let c = |ipc: &mut Ipc, cmd, out: &mut [u8]| {
        ipc.sem_ctl(s, 0, cmd, 0, &[], out, &nobody, 1, 0)
            .map(|_| ())
    };
    assert_eq!(c(&mut ipc, SEM_STAT, &mut out), Err(EACCES));
    assert_eq!(c(&mut ipc, SEM_STAT_ANY, &mut out), Ok(()));
    let m = ipc.shm_create(0, 4096, 0o600, &ROOT, 9, 9, 1, 0).unwrap();
    assert_eq!(
        ipc.shm_ctl(m as i64, SHM_STAT, &mut out, &nobody, 0, |_| 0)
            .err(),
        Some(EACCES)
    );
    assert_eq!(
        ipc.shm_ctl(m as i64, SHM_STAT_ANY, &mut out, &nobody, 0, |_| 0)
            .map(|r| r.0),
        Ok(m as u64)
    );
}

#[test]
fn a_user_may_reach_the_reported_system_limits() {
    let c = Caps::DEFAULT;
    assert!(c.objects >= limit::SEMMNI as usize);
    assert!(c.objects >= limit::MSGMNI as usize);
    assert!(c.objects >= 0x8000); // shmmni's largest
    assert!(c.sems >= limit::SEMMNS as usize);
    // Many sets of one user (as LTP's semget05 makes 32000).
    let mut ipc = Ipc::default();
    for k in 1..=300 {
        new_set(&mut ipc, k, 10, 0o600, &ROOT);
    }
    for k in 1..=300 {
        assert_eq!(
            ipc.msg_lookup(k, IPC_CREAT | 0o600, &ROOT),
            Ok(Found::Create)
        );
        ipc.msg_create(k, IPC_CREAT | 0o600, &ROOT, 0).unwrap();
    }
}

#[test]
fn keys_counts_and_lowest_free_slot() {
    let mut ipc = Ipc::default();
    let a = new_set(&mut ipc, 5, 3, 0o600, &ROOT);
    let b = new_set(&mut ipc, 6, 4, 0o600, &ROOT);
    assert_eq!((a, b), (0, 1));
    assert_eq!(ipc.sem_count, 7);
    assert_eq!(ipc.sem.find_key(6), Some(1));
    let mut out = [0u8; 256];
    let c =
        |ipc: &mut Ipc, id, out: &mut [u8]| ipc.sem_ctl(id, 0, IPC_RMID, 0, &[], out, &ROOT, 1, 0);
    c(&mut ipc, a, &mut out).unwrap();
    assert_eq!(ipc.sem_count, 4);
    assert_eq!(ipc.sem.in_use(), 1);
    assert_eq!(ipc.sem.find_key(5), None);
    // The lowest free slot again, with its next sequence.
    assert_eq!(new_set(&mut ipc, 7, 1, 0o600, &ROOT), 32768);
    assert_eq!(new_set(&mut ipc, 8, 1, 0o600, &ROOT), 2);
    assert_eq!(ipc.sem.find_key(8), Some(2));
    assert_eq!(ipc.sem_count, 6);
    // A removed segment still attached is not found by its key.
    let m = ipc
        .shm_create(9, 4096, IPC_CREAT | 0o600, &ROOT, 9, 9, 1, 0)
        .unwrap();
    assert_eq!(ipc.shm.find_key(9), Some(m));
    ipc.shm_ctl(m as i64, IPC_RMID, &mut out, &ROOT, 0, |_| 1)
        .unwrap();
    assert_eq!(ipc.shm.find_key(9), None);
    assert_eq!(ipc.shm.in_use(), 1);
}
