# fsync and sync commit (tests/system/unix_fsync.toml): with no periodic
# checkpoints, a file written before `sync` survives a power cut and one
# appended after it does not (the system resumes from the checkpoint the
# sync took, and this script goes on from there).
echo "script starts"
echo one > /tmp/synced
sync
echo "synced"
echo two >> /tmp/synced
echo "not synced"
usleep 3000000
echo "contents: $(cat /tmp/synced | tr '\n' ' ')"
