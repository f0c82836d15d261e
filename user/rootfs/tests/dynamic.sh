# The dynamic-linking test (tests/system/unix_dynamic.toml): a program
# musl's ld.so links with three shared libraries and a dlopen'd plugin,
# started by execve from the shell, twice (the second from a warm fork).
dyntest one two
echo "dynamic: first status $?"
dyntest three
echo "dynamic: second status $?"
# A missing interpreter is ENOENT, as on Linux: the shell says "not found"
# (the path replaced by one of the same length: the ELF stays whole).
mkdir -p /tmp/dyn && sed 's|/lib/ld-musl-x86_64.so.1|/lib/ld-none-x86_64.so.1|' /bin/dyntest > /tmp/dyn/broken
chmod 755 /tmp/dyn/broken
/tmp/dyn/broken
echo "dynamic: broken interpreter status $?"
