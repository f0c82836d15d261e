# The busybox suite: each check runs one applet invocation under busybox sh
# and compares its exact output and exit status. Run as
#   sh /tests/busybox.sh
# Prints "FAIL <name>: ..." for each failure and ends with
# "busybox suite: <passed> passed, <failed> failed".
cd /tmp || exit 1
rm -rf suite && mkdir suite && cd suite || exit 1
pass=0
fail=0
# t NAME EXPECTED-STATUS EXPECTED-OUTPUT COMMAND...
t() {
    name=$1; want_status=$2; want=$3; shift 3
    got=$("$@" 2>&1)
    status=$?
    if [ "$got" = "$want" ] && [ "$status" = "$want_status" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: status $status (want $want_status), output:"
        echo "$got"
    fi
}
# s NAME EXPECTED-OUTPUT SCRIPT: a pipeline or redirection, run by sh -c.
s() {
    t "$1" 0 "$2" sh -c "$3"
}

printf 'one\ntwo\nthree\n' > f3
printf 'b\na\nc\na\n' > letters
echo hello > h

t echo 0 "hello world" echo hello world
t printf 0 "a-1-b" printf '%s-%d-%s' a 1 b
t cat 0 "hello" cat h
t cat-n 0 "     1	one
     2	two
     3	three" cat -n f3
t wc-l 0 "3 f3" wc -l f3
t wc-c 0 "6 h" wc -c h
t head 0 "one
two" head -n 2 f3
t tail 0 "three" tail -n 1 f3
t sort 0 "a
a
b
c" sort letters
t sort-u 0 "a
b
c" sort -u letters
t sort-r 0 "c
b
a
a" sort -r letters
s uniq "a
b
c" "sort letters | uniq"
s uniq-c "      2 a
      1 b
      1 c" "sort letters | uniq -c"
t grep 0 "two" grep tw f3
t grep-v 0 "one
three" grep -v tw f3
t grep-c 0 "2" grep -c a letters
t grep-none 1 "" grep zzz f3
t sed 0 "ONE" sed -n 's/one/ONE/p' f3
t sed-d 0 "one
three" sed 2d f3
t awk 0 "two 3" awk 'NR==2 {print $1, length($1)}' f3
t awk-sum 0 "6" awk '{s += $1} END {print s}' /dev/stdin <<EOF2
1
2
3
EOF2
s cut "b" "echo a:b:c | cut -d: -f2"
s tr "HELLO" "echo hello | tr a-z A-Z"
s tr-d "hll" "echo hello | tr -d e | tr -d o"
s tee "x
x" "echo x | tee t1; cat t1"
t cp 0 "" cp h h2
t cmp 0 "" cmp h h2
t mv 0 "" mv h2 h3
t ls 0 "f3
h
h3
letters
t1" ls
t rm 0 "" rm h3
t test-f 0 "" test -f h
t test-d 1 "" test -d h
t test-eq 0 "" test 3 -eq 3
t bracket 1 "" [ a = b ]
t mkdir 0 "" mkdir -p d/e/f
t rmdir 0 "" rmdir d/e/f
t find 0 "./d
./d/e" find ./d
s ln "hello" "ln -s h hl && cat hl"
t readlink 0 "h" readlink hl
t ln-hard 0 "" ln h hh
s stat-links "2" "stat -c %h h"
t expr 0 "7" expr 3 + 4
t expr-mul 0 "12" expr 3 \* 4
t seq 0 "1
2
3" seq 3
t seq-step 0 "10 8 6" sh -c 'echo $(seq 10 -2 6)'
s xargs "a b c" "printf 'a\nb\nc\n' | xargs echo"
t basename 0 "c" basename /a/b/c
t dirname 0 "/a/b" dirname /a/b/c
t true 0 "" true
t false 1 "" false
t env 0 "X=1" env -i X=1
s env-var "yes" "V=yes; echo \$V"
t pwd 0 "/tmp/suite" pwd
t sha256sum 0 "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  h" sha256sum h
t md5sum 0 "b1946ac92492d2347c6235b4d2611184  h" md5sum h
s gzip "hello" "gzip -c h > h.gz && gunzip -c h.gz"
s tar "f3
h" "tar cf a.tar f3 h && mkdir x && cd x && tar xf ../a.tar && ls"
s date "1970-01-01" "date -u -d @0 +%Y-%m-%d"
t sleep 0 "" sleep 0
t od 0 "0000000 150 145 154 154 157 012
0000006" od -b h
t hexdump 0 "00000000  68 65 6c 6c 6f 0a                                 |hello.|
00000006" hexdump -C h
s subshell "in" "(echo in)"
s pipeline3 "3" "cat f3 | grep -v x | wc -l"
s redirect-append "one
two" "echo one > r; echo two >> r; cat r"
s here-doc "here" "cat <<END
here
END"
s command-subst "6" "echo \$(( \$(wc -c < h) ))"
s for-loop "1 2 3" "for i in 1 2 3; do printf '%s' \"\$i \"; done | sed 's/ \$//'"
s while-read "one!two!three!" "while read l; do printf '%s!' \$l; done < f3"
s case "match" "case abc in a*) echo match;; *) echo no;; esac"
s exit-status "3" "sh -c 'exit 3'; echo \$?"
s ps-self "ok" "ps >/dev/null && echo ok"
# /proc
s proc-self-stat "same" "read pid rest < /proc/self/stat; [ \$pid = \$\$ ] && echo same"
s proc-cmdline "cat /proc/self/cmdline " "cat /proc/self/cmdline | tr '\\0' ' '"
s proc-ls-self "cmdline comm exe mounts ns stat status task" "ls /proc/self | tr '\\n' ' ' | sed 's/ \$//'"
s proc-exe-link "link" "[ -L /proc/self/exe ] && echo link"
s proc-meminfo "MemTotal MemFree MemAvailable" "cut -d: -f1 /proc/meminfo | head -3 | tr '\\n' ' ' | sed 's/ \$//'"
s proc-uptime "1" "grep -c '^[0-9]*\\.[0-9][0-9] [0-9]*\\.[0-9][0-9]\$' /proc/uptime"
s free "Mem:" "free | sed -n 2p | cut -d' ' -f1"
s ps-pid1 "1" "ps | grep -c '^ *1 root'"

echo "busybox suite: $pass passed, $fail failed"
