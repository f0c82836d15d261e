# Real programs across a power cut (tests/system/unix_persist_programs.toml):
# sqlite3 inserts rows one transaction at a time (each commit's fsync takes
# a checkpoint) while a Python program counts in memory. QEMU is killed in
# the middle; after the restart the same shell and the same Python process
# go on (neither says "started" again), and every committed row is there.
cd /tmp || exit 1
rm -f p.db
echo "persist: started"
sqlite3 p.db 'create table t(i integer primary key);'
python3 -c '
import os, time
print("python started", flush=True)
n = 0
while n < 600:
    n += 1
    if n % 50 == 0:
        print("python count", n, flush=True)
    time.sleep(0.01)
print("python done", n, flush=True)
' &
i=0
while [ $i -lt 40 ]; do
    i=$((i + 1))
    sqlite3 p.db "insert into t values($i);" && echo "committed $i"
done
wait
sqlite3 p.db 'pragma integrity_check; select count(*), sum(i) from t;'
echo "persist: done"
