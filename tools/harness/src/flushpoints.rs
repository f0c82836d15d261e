//! Every-flush-point tests (`[flushpoints]` in a spec), after the logged
//! run: replay the write log once, save the disk as of each chosen flush as
//! a sparse image, and boot the images on worker threads while the replay
//! goes on. A passing image is deleted after its boot; a failing one is
//! kept for inspection, and no new boots start after a failure.

use std::fs;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread;

use anyhow::{bail, Result};

use crate::dmlog;

/// One flush point to boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// Its place in the sample (0-based).
    pub sample: usize,
    /// Which flush of the log (0-based).
    pub flush: u64,
    /// The flush entry's index in the log.
    pub entry: u64,
}

/// Why a boot of a replayed image failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootFailure {
    /// The reason.
    pub reason: String,
    /// The last console lines.
    pub tail: Vec<String>,
    /// QEMU's stderr.
    pub stderr: String,
}

/// A failed flush point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointFailure {
    /// Which.
    pub point: Point,
    /// Why.
    pub failure: BootFailure,
    /// The image, kept.
    pub image: PathBuf,
}

/// Replays `log` onto a zero disk of `size` bytes and boots the image as of
/// each flush whose ordinal is in `points` (sorted), `jobs` at a time, with
/// `boot(point, image)`. Images are written to `dir` (emptied first).
/// Returns the number of images booted, or the earliest (in sample order)
/// failure; `Err` is for a log that cannot be replayed.
pub fn replay_and_boot<B>(
    log: &Path,
    size: u64,
    points: &[u64],
    dir: &Path,
    jobs: usize,
    boot: B,
) -> Result<std::result::Result<usize, PointFailure>>
where
    B: Fn(&Point, &Path) -> std::result::Result<(), BootFailure> + Sync,
{
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir)?;
    let stop = AtomicBool::new(false);
    // The lowest failing sample so far: a job queued before it still
    // boots (a worker that took it late must not skip it, or the failure
    // reported would depend on the scheduling), a later one is skipped.
    let lowest = AtomicUsize::new(usize::MAX);
    let booted = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let mut queued = 0usize;
    let (tx, rx) = mpsc::sync_channel::<(Point, PathBuf)>(jobs.max(1));
    let rx = Mutex::new(rx);
    let replayed = thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            let (rx, stop, lowest, booted, failures, boot) =
                (&rx, &stop, &lowest, &booted, &failures, &boot);
            scope.spawn(move || loop {
                let job = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok((point, image)) = job else { break };
                if point.sample > lowest.load(Ordering::SeqCst) {
                    let _ = fs::remove_file(&image);
                    continue;
                }
                match boot(&point, &image) {
                    Ok(()) => {
                        let _ = fs::remove_file(&image);
                        booted.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(failure) => {
                        lowest.fetch_min(point.sample, Ordering::SeqCst);
                        stop.store(true, Ordering::SeqCst);
                        failures
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(PointFailure {
                                point,
                                failure,
                                image,
                            });
                    }
                }
            });
        }
        let mut want = points.iter().copied().peekable();
        let result = dmlog::replay(log, size, |p, image| {
            if stop.load(Ordering::SeqCst) {
                return Ok(ControlFlow::Break(()));
            }
            if want.peek() == Some(&p.ordinal) {
                want.next();
                let path = dir.join(format!("flush{}.disk", p.ordinal));
                image.save(&path)?;
                let point = Point {
                    sample: queued,
                    flush: p.ordinal,
                    entry: p.entry,
                };
                queued += 1;
                if tx.send((point, path)).is_err() {
                    return Ok(ControlFlow::Break(()));
                }
            }
            Ok(match want.peek() {
                Some(_) => ControlFlow::Continue(()),
                None => ControlFlow::Break(()),
            })
        });
        drop(tx);
        result.map(|()| want.next())
    });
    let missing = replayed?;
    let mut failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    failures.sort_by_key(|f| f.point.sample);
    if let Some(first) = failures.into_iter().next() {
        return Ok(Err(first));
    }
    if let Some(flush) = missing {
        bail!("the log has no flush {flush} to replay");
    }
    let _ = fs::remove_dir(dir);
    Ok(Ok(booted.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dmlog::build::LogBuilder;
    use crate::testutil::TempDir;

    /// A log whose flush `k` (k = 0..n) follows a write of byte `k + 1` to
    /// sector `k`, so the image at flush `k` has sectors `0..k` written.
    fn log(dir: &TempDir, n: u64) -> PathBuf {
        let mut b = LogBuilder::new(512);
        for k in 0..n {
            b.flush().fill(k, 1, k as u8 + 1, 0);
        }
        let path = dir.path().join("log");
        fs::write(&path, b.bytes(None)).unwrap();
        path
    }

    /// What the image at `path` says: how many leading sectors are written.
    fn written(path: &Path) -> u64 {
        let bytes = fs::read(path).unwrap();
        bytes.chunks(512).take_while(|s| s[0] != 0).count() as u64
    }

    #[test]
    fn boots_every_chosen_point_with_its_image_then_deletes_it() {
        let dir = TempDir::new("flush");
        let log = log(&dir, 10);
        let images = dir.path().join("images");
        let seen = Mutex::new(Vec::new());
        let got = replay_and_boot(&log, 8192, &[0, 3, 9], &images, 2, |p, img| {
            assert_eq!(written(img), p.flush, "image of flush {}", p.flush);
            assert_eq!(fs::metadata(img).unwrap().len(), 8192);
            seen.lock().unwrap().push(*p);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, Ok(3));
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|p| p.sample);
        assert_eq!(
            seen,
            [
                Point {
                    sample: 0,
                    flush: 0,
                    entry: 0
                },
                Point {
                    sample: 1,
                    flush: 3,
                    entry: 6
                },
                Point {
                    sample: 2,
                    flush: 9,
                    entry: 18
                },
            ]
        );
        assert!(!images.exists(), "images deleted");
    }

    #[test]
    fn the_first_failure_stops_the_rest_and_keeps_its_image() {
        let dir = TempDir::new("flush");
        let log = log(&dir, 40);
        let images = dir.path().join("images");
        let points: Vec<u64> = (0..40).collect();
        let booted = AtomicUsize::new(0);
        let got = replay_and_boot(&log, 65536, &points, &images, 2, |p, _| {
            booted.fetch_add(1, Ordering::SeqCst);
            if p.flush >= 5 {
                Err(BootFailure {
                    reason: format!("bad {}", p.flush),
                    tail: vec!["x".into()],
                    stderr: String::new(),
                })
            } else {
                Ok(())
            }
        })
        .unwrap();
        let failure = got.unwrap_err();
        assert_eq!(failure.point.flush, 5);
        assert_eq!(failure.failure.reason, "bad 5");
        assert_eq!(written(&failure.image), 5, "failing image kept");
        // Boots stop soon after: at most the jobs in flight and queued.
        assert!(booted.load(Ordering::SeqCst) <= 5 + 1 + 4);
        let left: Vec<_> = fs::read_dir(&images).unwrap().collect();
        assert!(left.len() <= 2, "only failing images are left: {left:?}");
    }

    #[test]
    fn a_point_beyond_the_log_is_an_error() {
        let dir = TempDir::new("flush");
        let log = log(&dir, 3);
        let images = dir.path().join("images");
        let err = replay_and_boot(&log, 8192, &[1, 7], &images, 1, |_, _| Ok(())).unwrap_err();
        assert_eq!(err.to_string(), "the log has no flush 7 to replay");
        let bad = dir.path().join("bad");
        fs::write(&bad, b"nonsense").unwrap();
        assert!(replay_and_boot(&bad, 8192, &[0], &images, 1, |_, _| Ok(())).is_err());
    }
}
