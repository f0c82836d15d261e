# Stet — build, boot, test and benchmark.
#
#   make run          build the user kernel and programs and boot Stet in QEMU (Ctrl-A X
#                     quits) on the persistent disk build/stet.disk; FRESH=1 starts a new one
#   make test         host unit tests + system tests in QEMU; last line "N passed, M failed"
#   make test T=name  one system test (tests/system/<name>.toml)
#   make bench        benchmarks under -icount: instructions per operation
#   make soak         fuzzers, power cuts, disk damage, driver kills with fresh seeds
#                     for SOAK_MINUTES (default 3); REPLAY=<token> reruns one failure
#                     (docs/RELIABILITY.md)
#   make lint         clippy (host and kernel/user targets) and rustfmt --check
#   make doc          rustdoc with warnings denied (host and kernel/user targets)
#
#   DEBS=...          Debian packages whose files (with their dependencies,
#                     tools/debs.sh) go into build/user/rootfs-debs.cpio, the UNIX
#                     file system make run boots; default below; DEBS= adds none

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
TARGET := x86_64-unknown-none
BUILD := build
KERNEL_FLAGS := -C relocation-model=static
USER_FLAGS := -C relocation-model=static -C code-model=small
# The programs, one room each: user/services (the system), user/unix (the
# UNIX personality), user/tests (test domains), user/bench (benchmark
# domains). The list is the folders' own: Cargo builds every
# src/bin/<name>.rs and src/bin/<name>/main.rs, and so does this.
USER_CRATES := services unix tests bench
USER_PACKAGES := -p stet-services -p stet-unix-personality -p stet-test-domains -p stet-bench-domains
PROGRAMS := $(sort $(basename $(notdir $(wildcard $(USER_CRATES:%=user/%/src/bin/*.rs)))) \
	$(notdir $(patsubst %/main.rs,%,$(wildcard $(USER_CRATES:%=user/%/src/bin/*/main.rs)))))
# The UNIX personality's C test programs (user/unix/c/*.c), built with musl
# static (ET_EXEC) as build/user/unix-<name>; those of UNIX_PIE also as
# static-PIE, build/user/unix-<name>-pie (unix_hello_pie runs hello-pie: one
# program proves the loader's PIE path, and a PIE copy of every test would
# double the archive every test boots). musl-gcc's specs cannot make a
# static PIE, so that link names musl's rcrt1.o, takes libc.a (-Bstatic) and
# says --no-dynamic-linker itself.
UNIX_C := $(wildcard user/unix/c/*.c)
UNIX_PIE := hello
UNIX_BINS := $(patsubst user/unix/c/%.c,$(BUILD)/user/unix-%,$(UNIX_C)) $(UNIX_PIE:%=$(BUILD)/user/unix-%-pie)
MUSL := /usr/lib/x86_64-linux-musl
UNIX_CFLAGS := -O2 -Wall -Werror
LINUXBENCH := $(BUILD)/user/linuxbench-bench $(BUILD)/user/linuxbench-true $(BUILD)/user/linuxbench-true-dyn
# The dynamic-linking test (user/unix/c/dyn): a program musl's dynamic
# loader links with three shared libraries (A needs B; C has TLS) and a
# plugin it loads with dlopen; all go to /lib of the UNIX file system,
# beside musl's loader (/lib/ld-musl-x86_64.so.1, from the musl package).
DYN := $(BUILD)/user/dyn
DYN_LIBS := $(DYN)/libstet-b.so $(DYN)/libstet-a.so $(DYN)/libstet-c.so $(DYN)/libstet-plugin.so
DYN_BINS := $(DYN_LIBS) $(DYN)/dyntest
HARNESS := target/release/stet-harness
# Debian's programs for make run's UNIX file system (see rootfs). Python's
# json lives in libpython3.11-stdlib, /usr/bin/python3 in python3-minimal.
DEBS ?= python3-minimal python3.11-minimal libpython3.11-stdlib sqlite3 lua5.4
KERNEL_CARGO := CARGO_TARGET_X86_64_UNKNOWN_NONE_RUSTFLAGS="$(KERNEL_FLAGS)" cargo
USER_CARGO := CARGO_TARGET_X86_64_UNKNOWN_NONE_RUSTFLAGS="$(USER_FLAGS)" cargo

.PHONY: all deps kernel kernel-test user unix rootfs harness run test bench soak lint doc fmt clean

all: kernel kernel-test user unix rootfs harness

# Installs what a fresh Debian machine lacks (run as root).
deps:
	@bash tools/deps.sh

# Two kernels: build/stet-kernel is what users boot (make run); the test
# kernel, build/stet-kernel-test, adds the `testing` feature (self-tests,
# benchmark measurements) and is booted only by tests and benchmarks whose
# command line asks for them (docs/ARCHITECTURE.md, "Test-only code"). Each
# has its own target directory, so neither build undoes the other's.
kernel: deps
	$(KERNEL_CARGO) build -p stet-kernel --target $(TARGET) --release --target-dir target/kernel
	@mkdir -p $(BUILD)
	@cp target/kernel/$(TARGET)/release/stet-kernel $(BUILD)/stet-kernel

kernel-test: deps
	$(KERNEL_CARGO) build -p stet-kernel --features testing --target $(TARGET) --release --target-dir target/kernel-test
	@mkdir -p $(BUILD)
	@cp target/kernel-test/$(TARGET)/release/stet-kernel $(BUILD)/stet-kernel-test

user: deps
	$(USER_CARGO) build $(USER_PACKAGES) --target $(TARGET) --release --target-dir target/user
	@mkdir -p $(BUILD)/user
	@for p in $(PROGRAMS); do cp target/user/$(TARGET)/release/$$p $(BUILD)/user/$$p; done

unix: deps $(UNIX_BINS) $(LINUXBENCH) $(DYN_BINS)

$(DYN)/libstet-b.so: user/unix/c/dyn/libb.c
	@mkdir -p $(DYN)
	musl-gcc $(UNIX_CFLAGS) -shared -fPIC $< -o $@

$(DYN)/libstet-c.so: user/unix/c/dyn/libc3.c
	@mkdir -p $(DYN)
	musl-gcc $(UNIX_CFLAGS) -shared -fPIC $< -o $@

$(DYN)/libstet-a.so: user/unix/c/dyn/liba.c $(DYN)/libstet-b.so
	musl-gcc $(UNIX_CFLAGS) -shared -fPIC $< -L$(DYN) -lstet-b -o $@

$(DYN)/libstet-plugin.so: user/unix/c/dyn/plugin.c $(DYN)/libstet-b.so
	musl-gcc $(UNIX_CFLAGS) -shared -fPIC $< -L$(DYN) -lstet-b -o $@

$(DYN)/dyntest: user/unix/c/dyn/dyntest.c $(DYN)/libstet-a.so $(DYN)/libstet-c.so
	musl-gcc $(UNIX_CFLAGS) $< -L$(DYN) -Wl,-rpath-link,$(DYN) -lstet-a -lstet-c -o $@

# The Linux benchmark's programs (tools/linuxbench), built with the very
# command its build.sh uses, so the UNIX personality runs the same bytes
# (build.sh checks that they are).
$(BUILD)/user/linuxbench-bench: tools/linuxbench/bench.c
	@mkdir -p $(BUILD)/user
	musl-gcc -static -O2 -Wall -Wextra -o $@ $<

$(BUILD)/user/linuxbench-true: tools/linuxbench/true.c
	@mkdir -p $(BUILD)/user
	musl-gcc -static -O2 -Wall -Wextra -s -o $@ $<

# The same program linked dynamically: musl's loader maps and relocates it
# (linux_exec_dynamic runs it as /bin/true-dyn).
$(BUILD)/user/linuxbench-true-dyn: tools/linuxbench/true.c
	@mkdir -p $(BUILD)/user
	musl-gcc -O2 -Wall -Wextra -s -o $@ $<

$(BUILD)/user/unix-%-pie: user/unix/c/%.c
	@mkdir -p $(BUILD)/user
	gcc -specs $(MUSL)/musl-gcc.specs $(UNIX_CFLAGS) -fPIE -static-pie -nostartfiles $(MUSL)/rcrt1.o $(MUSL)/crti.o $$(gcc -print-file-name=crtbeginS.o) $< -Wl,-Bstatic $$(gcc -print-file-name=crtendS.o) $(MUSL)/crtn.o -Wl,--no-dynamic-linker -o $@

$(BUILD)/user/unix-%: user/unix/c/%.c
	@mkdir -p $(BUILD)/user
	musl-gcc -static $(UNIX_CFLAGS) $< -o $@

# The UNIX file system's first contents: user/rootfs/ (etc, root), the
# test programs in /bin, the Linux benchmark as /bin/linuxbench (with its
# /bin/true and /bin/true-dyn), and Debian's busybox-static with a hard link per
# applet, as a newc cpio archive the file-system domain (unixd) reads on
# its first start (mkimage: file:rootfs.cpio).
rootfs: unix
	@rm -rf $(BUILD)/rootfs && mkdir -p $(BUILD)/rootfs/bin
	@cp -a user/rootfs/. $(BUILD)/rootfs/
	@chmod 640 $(BUILD)/rootfs/etc/shadow
	@for f in $(UNIX_BINS); do cp $$f $(BUILD)/rootfs/bin/$${f#$(BUILD)/user/unix-}; done
	@cp $(BUILD)/user/linuxbench-bench $(BUILD)/rootfs/bin/linuxbench
	@cp $(BUILD)/user/linuxbench-true $(BUILD)/rootfs/bin/true
	@cp $(BUILD)/user/linuxbench-true-dyn $(BUILD)/rootfs/bin/true-dyn
	@cp /bin/busybox $(BUILD)/rootfs/bin/busybox
	@mkdir -p $(BUILD)/rootfs/lib
	@cp $(MUSL)/libc.so $(BUILD)/rootfs/lib/ld-musl-x86_64.so.1
	@cp $(DYN_LIBS) $(BUILD)/rootfs/lib/
	@cp $(DYN)/dyntest $(BUILD)/rootfs/bin/dyntest
	@cd $(BUILD)/rootfs/bin && for a in $$(./busybox --list); do [ -e $$a ] || ln busybox $$a; done
	@cd $(BUILD)/rootfs && find . | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible > ../user/rootfs.cpio
# The same with Debian's programs: $(DEBS) and their dependencies, fetched
# into build/debs/cache/ and unpacked into build/debs/root/ by
# tools/debs.sh, laid under a copy of build/rootfs/ without replacing any of
# its files (busybox's /bin stays), as build/user/rootfs-debs.cpio: what
# tests/run.toml (make run) gives unixd. The other tests boot the small
# rootfs.cpio (docs/UNIX.md, "The file system").
	@rm -rf $(BUILD)/rootfs-debs $(BUILD)/debs/root
	$(if $(strip $(DEBS)),bash tools/debs.sh $(DEBS),@mkdir -p $(BUILD)/debs/root)
	@cp -a $(BUILD)/rootfs $(BUILD)/rootfs-debs
# Merged /usr: Debian's /lib and /lib64 are links into usr/, so the
# project's /lib (musl's loader, the dynamic test's libraries) moves to
# usr/lib first; /lib/ld-musl-x86_64.so.1 still resolves through the link.
	@cd $(BUILD)/rootfs-debs && for d in lib lib64; do \
	  if [ -L ../debs/root/$$d ] && [ -d $$d ] && [ ! -L $$d ]; then \
	    mkdir -p usr/$$d && cp -a $$d/. usr/$$d/ && rm -rf $$d; fi; done
	@tar -C $(BUILD)/debs/root -c . | tar -C $(BUILD)/rootfs-debs -x --skip-old-files
	@cd $(BUILD)/rootfs-debs && find . | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible > ../user/rootfs-debs.cpio
	@ls -l $(BUILD)/user/rootfs.cpio $(BUILD)/user/rootfs-debs.cpio | awk '{ print $$9 ": " int($$5 / 1024) " KiB" }'

harness: deps
	cargo build -p stet-harness --release

run: kernel user unix rootfs harness
	$(HARNESS) run $(if $(filter-out 0,$(FRESH)),--fresh) $(if $(PROGRAMS_RUN),--programs $(PROGRAMS_RUN)) $(if $(APPEND),--append "$(APPEND)")

ifeq ($(T),)
test: all
	@mkdir -p $(BUILD)
	@set +o pipefail; cargo test --no-fail-fast 2>&1 | tee $(BUILD)/host-tests.txt; \
	  echo "host-tests-exit: $${PIPESTATUS[0]}" >> $(BUILD)/host-tests.txt
	$(HARNESS) test --host-results $(BUILD)/host-tests.txt
else
test: all
	$(HARNESS) test --only $(T)
endif

bench: all
	$(HARNESS) bench $(if $(filter 0,$(LINUX)),--no-linux)

# Not part of `make test`: minutes of campaigns, two QEMUs at a time.
# SOAK_ONLY=kfuzz,cuts picks campaigns, SOAK_SEED=0x… repeats a soak's
# seeds, SOAK_AVOID_KNOWN=1 has the system-call fuzzer steer clear of
# issue 22's known bugs, SOAK_MAX_FAILURES=n lets a campaign go on until
# n of its units failed (default 5).
SOAK_MINUTES ?= 3
soak: all
	$(HARNESS) soak --minutes $(SOAK_MINUTES) $(if $(REPLAY),--replay $(REPLAY)) \
	  $(if $(SOAK_ONLY),--only $(SOAK_ONLY)) $(if $(SOAK_SEED),--seed $(SOAK_SEED)) \
	  $(if $(filter-out 0,$(SOAK_AVOID_KNOWN)),--avoid-known) \
	  $(if $(SOAK_MAX_FAILURES),--max-failures $(SOAK_MAX_FAILURES))

lint: deps
	cargo fmt --all --check
	cargo clippy --all-targets -- -D warnings
	$(KERNEL_CARGO) clippy -p stet-kernel --target $(TARGET) --release --target-dir target/kernel -- -D warnings
	$(KERNEL_CARGO) clippy -p stet-kernel --features testing --target $(TARGET) --release --target-dir target/kernel-test -- -D warnings
	$(USER_CARGO) clippy $(USER_PACKAGES) -p stet-rt --target $(TARGET) --release --target-dir target/user -- -D warnings

# The documentation as CI builds it: every rustdoc warning (a broken or
# private intra-doc link, a bad code block) fails. Binaries (the kernel,
# the programs) are documented with their private items.
DOC_CARGO := RUSTDOCFLAGS="-D warnings"
doc: deps
	$(DOC_CARGO) cargo doc --no-deps
	$(DOC_CARGO) $(KERNEL_CARGO) doc --no-deps -p stet-kernel --target $(TARGET) --release --target-dir target/kernel
	$(DOC_CARGO) $(KERNEL_CARGO) doc --no-deps -p stet-kernel --features testing --target $(TARGET) --release --target-dir target/kernel-test
	$(DOC_CARGO) $(USER_CARGO) doc --no-deps $(USER_PACKAGES) -p stet-rt --target $(TARGET) --release --target-dir target/user

fmt:
	cargo fmt --all

clean:
	rm -rf $(BUILD) target
