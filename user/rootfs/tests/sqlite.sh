# unix_sqlite: Debian's sqlite3 on Stet, with a database file in /tmp: 10,000
# rows inserted in one transaction and 1,000 in a transaction each (every
# commit locks the file with fcntl and syncs it), a query answered exactly,
# PRAGMA integrity_check, and a second process refused with "database is
# locked" while the first holds an exclusive lock. Run as
#   sh /tests/sqlite.sh
# Each step prints its result; the last line is "sqlite: done".
db=/tmp/sqlite-test.db
rm -f $db $db-journal /tmp/sqlite-locked /tmp/sqlite-checked
sqlite3 $db 'CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER NOT NULL, s TEXT NOT NULL);' || echo "sqlite: create failed"
# 10,000 INSERT statements between BEGIN and COMMIT: one transaction.
seq 1 10000 | awk 'BEGIN { print "BEGIN;" } { printf "INSERT INTO t(n, s) VALUES(%d, %crow %d%c);\n", $1, 39, $1, 39 } END { print "COMMIT;" }' | sqlite3 $db
echo "sqlite: one transaction: status $? rows $(sqlite3 $db 'SELECT count(*) FROM t;')"
# 1,000 more, each statement its own transaction.
seq 10001 11000 | awk '{ printf "INSERT INTO t(n, s) VALUES(%d, %crow %d%c);\n", $1, 39, $1, 39 }' | sqlite3 $db
echo "sqlite: separate transactions: status $?"
echo "sqlite: count|sum|max: $(sqlite3 $db 'SELECT count(*), sum(n), max(id) FROM t;')"
echo "sqlite: row 10500: $(sqlite3 $db 'SELECT s FROM t WHERE n = 10500;')"
echo "sqlite: evens below 100: $(sqlite3 $db 'SELECT count(*), sum(n) FROM t WHERE n % 2 = 0 AND n < 100;')"
echo "sqlite: integrity_check: $(sqlite3 $db 'PRAGMA integrity_check;')"
[ -e $db-journal ] && echo "sqlite: journal left behind"
# Locking between processes: a writer holds an exclusive lock (BEGIN
# EXCLUSIVE) until a reader has been refused.
sqlite3 $db > /tmp/sqlite-writer.out 2>&1 <<'SQL' &
BEGIN EXCLUSIVE;
INSERT INTO t(n, s) VALUES(0, 'locked');
.system touch /tmp/sqlite-locked
.system while [ ! -e /tmp/sqlite-checked ]; do sleep 0.1; done
COMMIT;
SQL
while [ ! -e /tmp/sqlite-locked ]; do sleep 0.1; done
out=$(sqlite3 $db 'SELECT count(*) FROM t;' 2>&1)
echo "sqlite: while locked: status $? $out"
touch /tmp/sqlite-checked
wait
echo "sqlite: after the writer: $(cat /tmp/sqlite-writer.out)$(sqlite3 $db 'SELECT count(*), sum(n) FROM t;')"
echo "sqlite: integrity_check: $(sqlite3 $db 'PRAGMA integrity_check;')"
rm -f $db /tmp/sqlite-locked /tmp/sqlite-checked /tmp/sqlite-writer.out
echo "sqlite: done"
