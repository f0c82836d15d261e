//! Linux's credential rules, case by case (each as credentials(7),
//! setresuid(2), chown(2), chmod(2), unlink(2) and kill(2) state them).

use super::*;
use crate::fs::mode::{DIR, REG, SGID, SUID, VTX};
use proptest::prelude::*;

const ALICE: u32 = 1000;
const BOB: u32 = 1001;
const STAFF: u32 = 50;

fn file(uid: u32, gid: u32, perm: u32) -> Owner {
    Owner {
        uid,
        gid,
        mode: REG | perm,
    }
}

fn dir(uid: u32, gid: u32, perm: u32) -> Owner {
    Owner {
        uid,
        gid,
        mode: DIR | perm,
    }
}

fn alice() -> Cred {
    Cred::user(ALICE, ALICE)
}

#[test]
fn owner_group_and_other_classes() {
    let f = file(ALICE, STAFF, 0o640);
    assert!(alice().may(f, want::R | want::W));
    assert!(!alice().may(f, want::X));
    let mut bob = Cred::user(BOB, BOB);
    assert!(!bob.may(f, want::R));
    bob.set_groups(&[STAFF]).unwrap_err(); // not root: EPERM
    let mut root = Cred::ROOT;
    root.set_groups(&[STAFF]).unwrap();
    root.set_res(Which::User, BOB, BOB, BOB).unwrap();
    assert!(root.may(f, want::R), "group member reads");
    assert!(!root.may(f, want::W), "but does not write");
    // The owner class is decided first, even when it grants less.
    let g = file(ALICE, ALICE, 0o070);
    assert!(!alice().may(g, want::R));
}

#[test]
fn root_reads_anything_executes_only_with_a_bit() {
    let r = Cred::ROOT;
    assert!(r.may(file(ALICE, ALICE, 0), want::R | want::W));
    assert!(!r.may(file(ALICE, ALICE, 0o600), want::X));
    assert!(r.may(file(ALICE, ALICE, 0o001), want::X));
    assert!(r.may(dir(ALICE, ALICE, 0), want::X));
    assert_eq!(r.check(file(1, 1, 0o644), want::X), Err(EACCES));
}

#[test]
fn access_uses_real_ids() {
    let mut c = alice();
    c.uid[EFF] = 0;
    c.uid[FS] = 0;
    assert!(c.may(file(0, 0, 0o600), want::R));
    assert!(!c.as_real().may(file(0, 0, 0o600), want::R));
}

#[test]
fn sticky_directory_keeps_others_names() {
    let tmp = dir(0, 0, 0o1777);
    assert_eq!(tmp.mode & VTX, VTX);
    let bobs = file(BOB, BOB, 0o644);
    assert_eq!(alice().may_delete(tmp, bobs), Err(EPERM));
    assert_eq!(alice().may_delete(tmp, file(ALICE, ALICE, 0)), Ok(()));
    assert_eq!(Cred::ROOT.may_delete(tmp, bobs), Ok(()));
    // The directory's owner may too.
    assert_eq!(alice().may_delete(dir(ALICE, 0, 0o1777), bobs), Ok(()));
    // No write permission on the directory: EACCES before anything.
    assert_eq!(alice().may_delete(dir(0, 0, 0o755), bobs), Err(EACCES));
}

#[test]
fn setgid_directory_passes_its_group_on() {
    let d = dir(0, STAFF, 0o2775);
    let sub = alice().new_inode(d, DIR | 0o755);
    assert_eq!(
        (sub.uid, sub.gid, sub.mode),
        (ALICE, STAFF, DIR | SGID | 0o755)
    );
    let f = alice().new_inode(d, REG | SGID | 0o755);
    assert_eq!(
        (f.gid, f.mode),
        (STAFF, REG | 0o755),
        "not in staff: bit gone"
    );
    let plain = alice().new_inode(dir(0, 0, 0o777), REG | 0o644);
    assert_eq!((plain.uid, plain.gid), (ALICE, ALICE));
}

#[test]
fn chmod_rules() {
    assert_eq!(alice().chmod(file(BOB, BOB, 0o644), 0o777), Err(EPERM));
    assert_eq!(
        alice().chmod(file(ALICE, ALICE, 0o644), 0o4755),
        Ok(REG | 0o4755)
    );
    assert_eq!(
        alice().chmod(file(ALICE, STAFF, 0o644), 0o2755),
        Ok(REG | 0o755),
        "set-group-ID of a group it is not in is dropped"
    );
    assert_eq!(
        Cred::ROOT.chmod(file(ALICE, STAFF, 0), 0o2755),
        Ok(REG | 0o2755)
    );
}

#[test]
fn chown_rules() {
    let f = file(ALICE, ALICE, 0o6755);
    assert_eq!(alice().chown(f, BOB, KEEP), Err(EPERM), "no giving away");
    assert_eq!(alice().chown(f, KEEP, STAFF), Err(EPERM), "not in staff");
    let n = alice().chown(f, ALICE, ALICE).unwrap();
    assert_eq!(n.mode, REG | 0o755, "set-id bits go on every chown");
    assert_eq!(Cred::user(BOB, BOB).chown(f, KEEP, ALICE), Err(EPERM));
    assert_eq!(
        Cred::user(BOB, BOB).chown(f, KEEP, KEEP).map(|o| o.uid),
        Ok(ALICE)
    );
    let n = Cred::ROOT.chown(f, BOB, STAFF).unwrap();
    assert_eq!((n.uid, n.gid, n.mode), (BOB, STAFF, REG | 0o755));
    // Set-group-ID without group execute is mandatory locking: kept.
    let n = Cred::ROOT.chown(file(0, 0, 0o2644), 1, 1).unwrap();
    assert_eq!(n.mode, REG | 0o2644);
    // A directory keeps its bits.
    let d = Cred::ROOT.chown(dir(0, 0, 0o2755), 1, 1).unwrap();
    assert_eq!(d.mode, DIR | 0o2755);
}

#[test]
fn utimes_rules() {
    let f = file(BOB, BOB, 0o666);
    assert_eq!(alice().may_touch(f, true), Err(EPERM));
    assert_eq!(alice().may_touch(f, false), Ok(()));
    assert_eq!(alice().may_touch(file(BOB, BOB, 0o644), false), Err(EACCES));
    assert_eq!(alice().may_touch(file(ALICE, 0, 0), true), Ok(()));
}

#[test]
fn writing_clears_set_id_bits() {
    assert_eq!(alice().after_write(file(ALICE, 0, 0o6755)), REG | 0o755);
    assert_eq!(alice().after_write(file(ALICE, 0, 0o6745)), REG | 0o2745);
    assert_eq!(Cred::ROOT.after_write(file(ALICE, 0, 0o6755)), REG | 0o6755);
}

#[test]
fn signals_need_a_matching_uid() {
    let bob = Cred::user(BOB, BOB);
    assert!(!alice().may_signal(&bob));
    assert!(!alice().may_signal(&Cred::ROOT));
    assert!(Cred::ROOT.may_signal(&bob));
    let mut su = bob;
    su.set_res(Which::User, KEEP, KEEP, KEEP).unwrap();
    let mut setuid_prog = alice();
    setuid_prog.uid[SAVED] = BOB;
    assert!(alice().may_signal(&setuid_prog));
    assert!(bob.may_signal(&setuid_prog), "saved id matches");
}

#[test]
fn setuid_as_root_and_not() {
    let mut c = Cred::ROOT;
    c.set_id(Which::User, ALICE).unwrap();
    assert_eq!(c.uid, [ALICE; 4]);
    assert_eq!(c.set_id(Which::User, 0), Err(EPERM), "no way back");
    assert_eq!(c.set_id(Which::User, KEEP), Err(EINVAL));
    // A set-user-ID program may go back and forth between real and saved.
    let mut p = alice();
    assert!(p.exec(file(BOB, 0, SUID | 0o755)));
    assert_eq!(p.uid, [ALICE, BOB, BOB, BOB]);
    p.set_id(Which::User, ALICE).unwrap();
    assert_eq!(p.uid, [ALICE, ALICE, BOB, ALICE]);
    p.set_id(Which::User, BOB).unwrap();
    assert_eq!(p.uid, [ALICE, BOB, BOB, BOB]);
}

#[test]
fn setreuid_moves_saved_id() {
    let mut p = alice();
    p.exec(file(BOB, 0, SUID | 0o755));
    // Swap real and effective: the saved id becomes the new effective.
    p.set_re(Which::User, BOB, ALICE).unwrap();
    assert_eq!(p.uid, [BOB, ALICE, ALICE, ALICE]);
    let mut q = alice();
    assert_eq!(q.set_re(Which::User, BOB, KEEP), Err(EPERM));
    // Effective to the real one: saved unchanged.
    let mut r = alice();
    r.uid[EFF] = BOB;
    r.uid[SAVED] = BOB;
    r.set_re(Which::User, KEEP, ALICE).unwrap();
    assert_eq!(r.uid, [ALICE, ALICE, BOB, ALICE]);
}

#[test]
fn setresuid_and_setfsuid() {
    let mut p = Cred::user(1, 1);
    p.uid = [1, 2, 3, 2];
    assert_eq!(p.set_res(Which::User, 4, KEEP, KEEP), Err(EPERM));
    p.set_res(Which::User, 3, 1, 2).unwrap();
    assert_eq!(p.uid, [3, 1, 2, 1]);
    assert_eq!(
        p.set_fs(Which::User, 9),
        1,
        "refused, still answers the old"
    );
    assert_eq!(p.uid[FS], 1);
    assert_eq!(p.set_fs(Which::User, 2), 1);
    assert_eq!(p.uid[FS], 2);
    let mut g = Cred::ROOT;
    g.set_res(Which::Group, 7, 8, 9).unwrap();
    assert_eq!(g.gid, [7, 8, 9, 8]);
}

#[test]
fn setgroups_limits() {
    let mut r = Cred::ROOT;
    assert_eq!(r.set_groups(&[0; NGROUPS + 1]), Err(EINVAL));
    r.set_groups(&[5, 6]).unwrap();
    assert_eq!(r.groups(), &[5, 6]);
    assert!(r.in_group(6) && !r.in_group(7));
}

#[test]
fn setgid_exec_needs_group_execute() {
    let mut p = alice();
    assert!(!p.exec(file(0, STAFF, SGID | 0o644)));
    assert_eq!(p.gid[EFF], ALICE);
    assert!(p.exec(file(0, STAFF, SGID | 0o755)));
    assert_eq!(p.gid, [ALICE, STAFF, STAFF, STAFF]);
}

proptest! {
    /// An unprivileged process never gains an id it did not have.
    #[test]
    fn unprivileged_never_gains(r in 1u32..6, e in 1u32..6, s in 1u32..6,
                                op in 0u8..4, a in 0u32..8, b in 0u32..8, c in 0u32..8) {
        let mut p = Cred::user(1, 1);
        p.uid = [r, e, s, e];
        let before = [r, e, s];
        let k = |x: u32| if x == 7 { KEEP } else { x };
        let _ = match op {
            0 => p.set_id(Which::User, k(a)),
            1 => p.set_re(Which::User, k(a), k(b)),
            2 => p.set_res(Which::User, k(a), k(b), k(c)),
            _ => { p.set_fs(Which::User, k(a)); Ok(()) }
        };
        for id in p.uid {
            prop_assert!(before.contains(&id), "{:?} from {:?}", p.uid, before);
        }
    }

    /// pack and unpack are inverse.
    #[test]
    fn pack_roundtrip(ids in proptest::array::uniform4(any::<u32>())) {
        let mut c = Cred::ROOT;
        c.uid = ids;
        let mut d = Cred::ROOT;
        d.unpack(Which::User, c.pack(Which::User));
        prop_assert_eq!(d.uid, ids);
    }
}

#[test]
fn capset_rules() {
    let mut c = Cred::ROOT;
    let net_raw = 1 << cap::NET_RAW;
    let kill = 1 << cap::KILL;
    let setpcap = 1 << cap::SETPCAP;
    let chown = 1 << cap::CHOWN;
    // A subset is kept.
    let keep = net_raw | chown | setpcap;
    c.caps.set(keep, keep, keep).unwrap();
    assert_eq!(c.caps.effective, keep);
    assert!(!c.capable(cap::KILL));
    // Effective beyond permitted, permitted beyond the old: EPERM.
    assert_eq!(c.caps.set(keep | kill, keep, keep), Err(EPERM));
    assert_eq!(c.caps.set(keep, keep | kill, keep), Err(EPERM));
    // Inheritable beyond the bounding set and the old inheritable.
    c.caps.bounding &= !kill;
    assert_eq!(c.caps.set(keep, keep, keep | kill), Err(EPERM));
    // Without CAP_SETPCAP, inheritable within inheritable | permitted.
    let mut d = Cred::ROOT;
    d.caps.set(kill, kill, kill).unwrap();
    assert_eq!(d.caps.set(kill, kill, kill | net_raw), Err(EPERM));
    // Dropping is always allowed; nothing is raised again.
    d.caps.set(0, kill, 0).unwrap();
    d.caps.set(kill, kill, 0).unwrap();
    assert_eq!(d.caps.set(kill | chown, kill, 0), Err(EPERM));
}

#[test]
fn capabilities_follow_the_user_ids() {
    // Effective user leaving 0 clears the effective set, coming back
    // restores it from the permitted one.
    let mut c = Cred::ROOT;
    c.set_re(Which::User, KEEP, ALICE).unwrap();
    assert_eq!(c.caps.effective, 0);
    assert_eq!(c.caps.permitted, cap::ALL);
    assert!(!c.may(file(0, 0, 0o600), want::R));
    c.set_re(Which::User, KEEP, 0).unwrap();
    assert_eq!(c.caps.effective, cap::ALL);
    // Leaving 0 in every id clears the permitted set too.
    c.set_id(Which::User, ALICE).unwrap();
    assert_eq!(
        c.caps,
        Caps {
            effective: 0,
            permitted: 0,
            ..Caps::ALL
        }
    );
    assert_eq!(c.set_id(Which::User, 0), Err(EPERM));
    // setfsuid moves the file-system capabilities only.
    let mut r = Cred::ROOT;
    r.set_fs(Which::User, ALICE);
    assert_eq!(r.caps.effective, cap::ALL & !cap::FS_MASK);
    assert!(r.capable(cap::KILL) && !r.capable(cap::DAC_OVERRIDE));
    r.set_fs(Which::User, 0);
    assert_eq!(r.caps.effective, cap::ALL);
    // A root process that dropped CAP_CHOWN may not give a file away.
    let mut n = Cred::ROOT;
    n.caps
        .set(cap::ALL & !(1 << cap::CHOWN), cap::ALL, 0)
        .unwrap();
    assert_eq!(n.chown(file(ALICE, ALICE, 0o644), BOB, KEEP), Err(EPERM));
    assert!(
        n.may(file(ALICE, ALICE, 0), want::R),
        "CAP_DAC_OVERRIDE kept"
    );
    // CAP_DAC_READ_SEARCH alone: read and search, not write.
    let mut s = Cred::ROOT;
    s.caps.set(1 << cap::DAC_READ_SEARCH, cap::ALL, 0).unwrap();
    assert!(s.may(file(ALICE, ALICE, 0), want::R));
    assert!(!s.may(file(ALICE, ALICE, 0), want::W));
    assert!(s.may(dir(ALICE, ALICE, 0), want::R | want::X));
}

#[test]
fn exec_gives_root_the_bounding_set() {
    let mut c = Cred::ROOT;
    c.caps.set(0, 1 << cap::KILL, 0).unwrap();
    c.caps.bounding = cap::ALL & !(1 << cap::SYS_TIME);
    c.exec(file(0, 0, 0o755));
    assert_eq!(c.caps.permitted, cap::ALL & !(1 << cap::SYS_TIME));
    assert_eq!(c.caps.effective, c.caps.permitted);
    // A user gets nothing; a set-user-ID root program everything.
    let mut a = alice();
    a.exec(file(0, 0, 0o755));
    assert_eq!(a.caps.effective, 0);
    a.exec(file(0, 0, SUID | 0o755));
    assert_eq!(a.caps.effective, cap::ALL);
    // Real root, effective user: permitted, not effective.
    let mut r = Cred::ROOT;
    r.set_re(Which::User, KEEP, ALICE).unwrap();
    r.exec(file(ALICE, 0, 0o755));
    assert_eq!((r.caps.permitted, r.caps.effective), (cap::ALL, 0));
}
