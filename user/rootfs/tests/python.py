# unix_python: Debian's python3 on Stet. Threads, json, hashlib, subprocess
# and file I/O, each checked against an exact value; the last line is
# "python: all ok" only when every check passed. Run as
#   python3 /tests/python.py
import hashlib
import json
import os
import subprocess
import threading

failed = []


def check(what, got, want):
    if got == want:
        print(f"python: {what}: ok")
    else:
        failed.append(what)
        print(f"python: {what}: WRONG (got {got!r}, want {want!r})")


# threading: four threads each sum a quarter of range(N), joined; a lock
# guards a shared counter each bumps 1,000 times.
N = 200_000
parts = [0] * 4
count = 0
lock = threading.Lock()


def work(i):
    global count
    parts[i] = sum(range(i * N // 4, (i + 1) * N // 4))
    for _ in range(1000):
        with lock:
            count += 1


threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check("threads sum", (sum(parts), count), (N * (N - 1) // 2, 4000))
check("threads alive after join", [t.is_alive() for t in threads], [False] * 4)

# json: a round trip of nested values, and the exact text.
obj = {"name": "stet", "nums": [1, 2, 3], "nested": {"ok": True, "none": None}, "x": 2.5}
text = json.dumps(obj, sort_keys=True)
check("json text", text,
      '{"name": "stet", "nested": {"none": null, "ok": true}, "nums": [1, 2, 3], "x": 2.5}')
check("json round trip", json.loads(text), obj)

# hashlib: SHA-256 of "abc" (FIPS 180-2's example) and of a million "a"s.
check("sha256 abc", hashlib.sha256(b"abc").hexdigest(),
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
check("sha256 million a", hashlib.sha256(b"a" * 1_000_000).hexdigest(),
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")

# subprocess: busybox programs with their output captured through pipes,
# input fed through one, and exit statuses.
r = subprocess.run(["echo", "hello from busybox"], capture_output=True, text=True)
check("subprocess echo", (r.returncode, r.stdout), (0, "hello from busybox\n"))
r = subprocess.run(["ls", "/tests"], capture_output=True, text=True)
check("subprocess ls", "python.py" in r.stdout.split() and r.returncode == 0, True)
r = subprocess.run(["wc", "-c"], input=b"x" * 12345, capture_output=True)
check("subprocess stdin", r.stdout.split(), [b"12345"])
r = subprocess.run(["sh", "-c", "exit 7"])
check("subprocess status", r.returncode, 7)
check("check_output", subprocess.check_output("echo $((6 * 7))", shell=True), b"42\n")
# close_fds=False and restore_signals=False take glibc's posix_spawn
# (clone with CLONE_VM | CLONE_VFORK) instead of Python's own vfork.
r = subprocess.run(["/bin/echo", "spawned"], capture_output=True, close_fds=False,
                   restore_signals=False)
check("posix_spawn path", (r.returncode, r.stdout), (0, b"spawned\n"))


def missing(run):
    try:
        run()
        return "no error"
    except OSError as e:
        return e.errno


# A program that is not there: the child's execve error reaches the parent.
check("subprocess missing program", missing(lambda: subprocess.run(["/no/such/program"])), 2)
check("posix_spawn missing program",
      missing(lambda: os.posix_spawn("/no/such/program", ["x"], {})), 2)

# file I/O: write, read back, stat, append, remove.
path = "/tmp/python-io.bin"
data = bytes(range(256)) * 40
with open(path, "wb") as f:
    f.write(data)
with open(path, "rb") as f:
    back = f.read()
check("file read back", back == data, True)
check("file size", os.stat(path).st_size, 10240)
with open(path, "ab") as f:
    f.write(b"tail")
check("file append", os.path.getsize(path), 10244)
os.remove(path)
check("file removed", os.path.exists(path), False)

if failed:
    print("python: FAILED:", ", ".join(failed))
else:
    print(f"python: all ok: sum {sum(parts)}, sha256 {hashlib.sha256(b'abc').hexdigest()[:16]}, "
          f"{len(data)} bytes")
