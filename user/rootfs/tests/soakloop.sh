# make soak's busybox power-cut workload (tests/soak/busybox_powercut.toml):
# an endless loop of steps. Step n appends n to a log, runs a pipeline and
# syncs (a checkpoint commits); the shell's count and the files must agree
# at every step, so after every restart too (the shell and the files come
# back from one checkpoint). Lines: `bb: ok n=<n>` (checked), `bb: synced
# <n>` (durable), `bb: FAILED <what>`.
cd /tmp || exit 1
mkdir -p soak && cd soak || exit 1
rm -f log top && touch log
n=0
while true; do
    want=$(seq 1 $n | md5sum)
    got=$(md5sum < log)
    if [ "$got" != "$want" ]; then
        echo "bb: FAILED step $n: the log holds $(wc -l < log) lines, ending $(tail -n 1 log)"
    fi
    echo "bb: ok n=$n"
    n=$((n + 1))
    echo $n >> log
    seq 1 $n | sort -rn | head -1 > top
    [ "$(cat top)" = "$n" ] || echo "bb: FAILED step $n: the pipeline gave $(cat top)"
    sync
    echo "bb: synced $n"
done
