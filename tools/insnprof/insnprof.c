/* insnprof: a QEMU TCG plugin that counts how many times each guest
 * instruction runs, for finding where a hot path's instructions go (the
 * same unit `make bench` reports under -icount).
 *
 *   qemu-system-x86_64 ... -plugin build/insnprof.so,out=FILE
 *
 * At exit FILE gets one line per instruction that ran:
 *   vaddr count size bytes(hex)
 * The bytes let tools/insnprof/report.py tell apart programs linked at
 * the same address (every native Stet program starts at 0x400000).
 *
 * QEMU's plugin header is not packaged by Debian; the few entry points
 * used are declared here from QEMU's documented plugin API (version 1,
 * QEMU 7.2). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct {
    const char *target_name;
    struct {
        int min, cur;
    } version;
    _Bool system_emulation;
} qemu_info_t;
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(qemu_plugin_id_t, void *);
enum { INLINE_ADD_U64 = 0 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, udata_cb, void *);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *, int op, void *ptr,
                                                uint64_t imm);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One record per translated instruction (a re-translation makes another;
 * the report adds them up). Records live in chunks that never move: the
 * generated code adds to their counters directly. */
struct rec {
    uint64_t vaddr, count;
    uint8_t size, bytes[15];
};
#define CHUNK 65536
struct chunk {
    struct chunk *next;
    size_t used;
    struct rec recs[CHUNK];
};
static struct chunk *chunks;
static const char *out_path = "insnprof.out";

static struct rec *new_rec(void)
{
    if (!chunks || chunks->used == CHUNK) {
        struct chunk *c = calloc(1, sizeof *c);
        if (!c) {
            abort();
        }
        c->next = chunks;
        chunks = c;
    }
    return &chunks->recs[chunks->used++];
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        struct rec *r = new_rec();
        r->vaddr = qemu_plugin_insn_vaddr(insn);
        size_t sz = qemu_plugin_insn_size(insn);
        r->size = sz > 15 ? 15 : (uint8_t)sz;
        memcpy(r->bytes, qemu_plugin_insn_data(insn), r->size);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, INLINE_ADD_U64, &r->count, 1);
    }
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    FILE *f = fopen(out_path, "w");
    if (!f) {
        return;
    }
    for (struct chunk *c = chunks; c; c = c->next) {
        for (size_t i = 0; i < c->used; i++) {
            struct rec *r = &c->recs[i];
            if (!r->count) {
                continue;
            }
            fprintf(f, "%llx %llu %u ", (unsigned long long)r->vaddr,
                    (unsigned long long)r->count, r->size);
            for (unsigned j = 0; j < r->size; j++) {
                fprintf(f, "%02x", r->bytes[j]);
            }
            fputc('\n', f);
        }
    }
    fclose(f);
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            out_path = argv[i] + 4;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
