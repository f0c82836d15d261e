# A busybox script that a power cut interrupts (tests/system/unix_powercut.toml):
# forty steps, each a few processes that write files, a sleep between them.
# After the restart the system resumes from its last checkpoint, so the
# script goes on from there, and its end must be what an uncut run gives.
cd /tmp || exit 1
rm -rf pc && mkdir pc && cd pc || exit 1
i=0
while [ $i -lt 40 ]; do
    i=$((i + 1))
    seq 1 $i > f$i
    sort -rn f$i | head -1 >> maxes
    echo "step $i"
    usleep 100000
done
sum=$(awk '{ s += $1 } END { print s }' maxes)
echo "powercut: $(wc -l < maxes) steps, sum $sum, $(ls | wc -l) files, $(cat f40 | md5sum)"
