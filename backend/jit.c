/* jit.c: when kernels are compiled to native code, and how (jit.h).

   One entry per distinct source (a table for the process, under a lock):
   the source, its key (the source, the compiler's command, the machine:
   -march=native code is for this CPU), the work done by kernels with that
   source, and the function once there is one. A kernel points to its
   entry once its source is made. The entries are malloc'd and never freed
   (a process compiles few kernels), so the compiling thread owns nothing
   the collector may take away; a compiled library stays loaded.

   Compiling: the source is written to a temporary file in
   cache_dir()/cpu (or a private folder under $TMPDIR when there is no
   cache folder), compiled by `cc -std=gnu11 -O2 -fvect-cost-model=dynamic -march=native
   -ffp-contract=off -fno-math-errno -fPIC -shared` into a temporary
   library renamed to <key>.so, which is loaded (dlopen) for its function
   (una_block, una_scalar, una_loop, una_range or una_tree, by the
   entry's kind). A library on
   disk under the key is loaded without compiling. */
#include "jit.h"
#include "filecache.h"
#include "kernel_int.h"
#include "parallel.h"
#include "../frontend/ir/common.h"

#include <dirent.h>
#include <gc.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { LOOKUP_WORK = 256, COMPILE_WORK = 1 << 14 };
enum { IDLE, COMPILING, DONE, FAILED };
enum { MODE_ON = CPU_JIT_ON, MODE_OFF = CPU_JIT_OFF, MODE_SYNC = CPU_JIT_SYNC };

typedef void (*JitFn)(void);

/* The compiled function's name, by kind: the block program, the
   one-element program, a `for` loop, a `while` loop, a range of elements
   (kernel_int.h). */
static const char *const fn_name[CPU_JIT_KINDS + 1] = {"una_block", "una_scalar", "una_loop", "una_loop", "una_range",
                                                         "una_tree"};

typedef struct JitEntry {
  CacheKey key;
  int kind;
  char *src; /* malloc'd */
  _Atomic(JitFn) fn;
  _Atomic long work;
  _Atomic int state;
  struct JitEntry *next;
} JitEntry;

enum { NBUCKETS = 256 };
static JitEntry *table[NBUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int compiling; /* compiles under way (lock held) */
static CpuJitStats stats;
static JitEntry none = {.state = FAILED}; /* a kernel not worth compiling */

static _Atomic int mode_set = CPU_JIT_ENV;

static int mode(void) {
  static _Atomic int env = -2;
  int v = atomic_load_explicit(&mode_set, memory_order_relaxed);
  if (v != CPU_JIT_ENV) return v;
  v = atomic_load_explicit(&env, memory_order_relaxed);
  if (v != -2) return v;
  const char *e = getenv("UNA_JIT");
  v = !e || !*e || strcmp(e, "on") == 0 || strcmp(e, "1") == 0 ? MODE_ON
      : strcmp(e, "sync") == 0                                 ? MODE_SYNC
                                                               : MODE_OFF;
  atomic_store_explicit(&env, v, memory_order_relaxed);
  return v;
}

void cpu_jit_set_mode(CpuJitMode m) { atomic_store(&mode_set, (int)m); }

static bool verbose(void) {
  const char *e = getenv("UNA_JIT_VERBOSE");
  return e && *e && strcmp(e, "0") != 0;
}

static const char *_Atomic compiler_set;

void cpu_jit_set_compiler(const char *cc) { atomic_store(&compiler_set, cc); }

static const char *compiler(void) {
  const char *c = atomic_load(&compiler_set);
  if (c) return c;
  c = getenv("UNA_JIT_CC");
  return c && *c ? c : "cc";
}

static const char *const flags[] = {"-std=gnu11", "-O2", "-fvect-cost-model=dynamic", "-march=native", "-ffp-contract=off", "-fno-math-errno",
                                    "-fPIC", "-shared", "-w"};
enum { NFLAGS = sizeof flags / sizeof flags[0] };

/* The machine, for the key: /proc/cpuinfo's first "flags" and "model
   name" lines (malloc'd, read once). */
static char *machine_text;
static pthread_once_t machine_once = PTHREAD_ONCE_INIT;

static void read_machine(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[8192];
  size_t cap = 1, n = 0;
  char *m = malloc(cap);
  if (!m) {
    fclose(f);
    return;
  }
  m[0] = '\0';
  bool flags_seen = false, model_seen = false;
  while (fgets(line, sizeof line, f) && !(flags_seen && model_seen)) {
    bool is_flags = strncmp(line, "flags", 5) == 0, is_model = strncmp(line, "model name", 10) == 0;
    if ((is_flags && flags_seen) || (is_model && model_seen) || (!is_flags && !is_model)) continue;
    flags_seen |= is_flags;
    model_seen |= is_model;
    size_t l = strlen(line);
    char *g = realloc(m, cap + l);
    if (!g) break;
    m = g;
    memcpy(m + n, line, l + 1);
    n += l;
    cap += l;
  }
  fclose(f);
  machine_text = m;
}
static const char *machine(void) {
  pthread_once(&machine_once, read_machine);
  return machine_text ? machine_text : "";
}

static CacheKey key_of(const char *src) {
  CacheHasher h;
  cache_hasher_init(&h);
  cache_hasher_field(&h, src, strlen(src));
  const char *cc = compiler();
  cache_hasher_field(&h, cc, strlen(cc));
  for (int i = 0; i < NFLAGS; i++) cache_hasher_field(&h, flags[i], strlen(flags[i]));
  const char *m = machine();
  cache_hasher_field(&h, m, strlen(m));
  return cache_hasher_key(&h);
}

/* Removes the files of dir: all of them, or only the temporary files
   of compiles that did not finish (their process ended first) once they
   are an hour old. */
static void remove_files(const char *dir, bool stale_only) {
  DIR *d = opendir(dir);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(d))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    if (stale_only && strncmp(de->d_name, ".tmp.", 5) != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (!stale_only || (stat(path, &st) == 0 && now - st.st_mtime > 3600)) unlink(path);
  }
  closedir(d);
}

/* A private folder (no cache folder: $HOME unset) goes at exit, with the
   libraries compiled into it. */
static char *private_dir;

static void remove_private_dir(void) {
  remove_files(private_dir, false);
  rmdir(private_dir);
}

/* The folder of the libraries, once known. The collector scans the data
   of every loaded library as a root, and stops the process ("Too many
   root sets") after about two thousand; the compiled functions hold no
   pointer to its objects, so their libraries are left out. */
static const char *_Atomic libs_at;

static int GC_CALLBACK scan_library(const char *name, void *start, size_t size) {
  (void)start;
  (void)size;
  const char *d = atomic_load(&libs_at);
  size_t n = d ? strlen(d) : 0;
  return !(n && name && strncmp(name, d, n) == 0 && name[n] == '/');
}

/* The folder of the libraries (made on demand), or NULL. */
static const char *lib_dir(void) {
  static char *dir;
  static bool tried;
  pthread_mutex_lock(&lock);
  if (!tried) {
    tried = true;
    const char *c = cache_dir();
    char *d = c ? una_sprintf("%s/cpu", c) : NULL;
    if (d && cache_make_dirs(d)) {
      dir = strdup(d);
      remove_files(dir, true);
    } else {
      const char *t = getenv("TMPDIR");
      char *tmpl = una_sprintf("%s/una-jit-XXXXXX", t && *t ? t : "/tmp");
      char *p = strdup(tmpl);
      dir = p && mkdtemp(p) ? p : NULL;
      if (dir) {
        private_dir = dir;
        atexit(remove_private_dir);
      }
    }
    if (dir) {
      atomic_store(&libs_at, dir);
      GC_register_has_static_roots_callback(scan_library);
    }
  }
  pthread_mutex_unlock(&lock);
  return dir;
}

static JitFn load(const char *path, int kind) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    if (verbose()) fprintf(stderr, "una: jit: %s\n", dlerror());
    return NULL;
  }
  void *f = dlsym(h, fn_name[kind]);
  JitFn fn;
  memcpy(&fn, &f, sizeof fn);
  return f ? fn : NULL;
}

static bool write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = cache_write_all(fd, text, strlen(text));
  return close(fd) == 0 && ok;
}

/* Compiles src into the library at `so` (a temporary name renamed into
   place); false when the compiler cannot be run or fails. */
static bool compile(const char *dir, const char *src, const char *so) {
  char *c = cache_tmp_name(dir, ".c"), *out = cache_tmp_name(dir, ".so");
  if (!write_file(c, src)) return false;
  const char *argv[NFLAGS + 6];
  int a = 0;
  argv[a++] = compiler();
  for (int i = 0; i < NFLAGS; i++) argv[a++] = flags[i];
  argv[a++] = "-o";
  argv[a++] = out;
  argv[a++] = c;
  argv[a] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!verbose()) {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  bool ok = rc == 0;
  if (ok) {
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) {
        ok = false;
        break;
      }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!ok && verbose()) fprintf(stderr, "una: jit: %s could not compile %s\n", argv[0], c);
  if (!verbose() || ok) unlink(c);
  if (ok && rename(out, so) != 0) ok = false;
  if (!ok) unlink(out);
  return ok;
}

/* Finds or compiles e's library (compile false: only finds it on disk);
   publishes the function, or marks e failed when compiling failed. */
static void build(JitEntry *e, bool do_compile) {
  const char *dir = lib_dir();
  JitFn fn = NULL;
  char *so = dir ? una_sprintf("%s/%s.so", dir, cache_key_hex(e->key)) : NULL;
  if (!dir && do_compile && verbose()) fprintf(stderr, "una: jit: no folder to compile into\n");
  struct stat st;
  if (so && stat(so, &st) == 0 && (fn = load(so, e->kind))) {
    pthread_mutex_lock(&lock);
    stats.disk++;
    pthread_mutex_unlock(&lock);
  } else if (do_compile) {
    bool ok = so && compile(dir, e->src, so) && (fn = load(so, e->kind));
    pthread_mutex_lock(&lock);
    if (ok) stats.compiled++;
    else stats.failed++;
    pthread_mutex_unlock(&lock);
    if (!ok) atomic_store(&e->state, FAILED);
  }
  if (fn) {
    atomic_store_explicit(&e->fn, fn, memory_order_release);
    atomic_store(&e->state, DONE);
  }
}

static void *compile_thread(void *arg) {
  JitEntry *e = arg;
  /* a lower priority for this thread, and so for the compiler it starts
     (a child takes its creator's): the program being run keeps its CPU */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
  build(e, true);
  pthread_mutex_lock(&lock);
  compiling--;
  pthread_cond_broadcast(&idle_cond);
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* Starts compiling e in a thread of its own (at most one at a time:
   another waits for its turn by not starting). */
static void start_compile(JitEntry *e) {
  pthread_mutex_lock(&lock);
  /* three failures and no success: the compiler does not work here (none
     installed, a cache folder whose files cannot be run); stop trying */
  bool broken = stats.failed >= 3 && stats.compiled == 0 && stats.disk == 0;
  if (broken) atomic_store(&e->state, FAILED);
  bool go = !broken && compiling == 0 && atomic_load(&e->state) == IDLE;
  if (go) {
    atomic_store(&e->state, COMPILING);
    compiling++;
  }
  pthread_mutex_unlock(&lock);
  if (!go) return;
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&th, &attr, compile_thread, e) != 0) {
    pthread_mutex_lock(&lock);
    compiling--;
    atomic_store(&e->state, IDLE);
    pthread_mutex_unlock(&lock);
  }
  pthread_attr_destroy(&attr);
}

/* The entry of src (made when new: malloc'd, never freed). */
static JitEntry *entry_of(const char *src, int kind, bool *fresh) {
  CacheKey key = key_of(src);
  pthread_mutex_lock(&lock);
  JitEntry **b = &table[key.h[0] % NBUCKETS], *e = *b;
  while (e && (e->key.h[0] != key.h[0] || e->key.h[1] != key.h[1])) e = e->next;
  *fresh = !e;
  if (!e && (e = calloc(1, sizeof *e)) && (e->src = strdup(src))) {
    e->key = key;
    e->kind = kind;
    e->next = *b;
    *b = e;
  } else if (*fresh) {
    free(e);
    e = &none;
  }
  if (!*fresh) stats.memory++;
  pthread_mutex_unlock(&lock);
  return e;
}

/* What a kernel's source of a kind is made from: the kernel, and for a
   loop its condition (a while loop's), state width and poll mask. */
typedef struct SrcReq {
  int kind;
  const CpuKernel *cond;
  int w, poll_mask;
  const CpuJitTree *tree; /* CPU_JIT_TREE */
} SrcReq;

static char *source_of(const CpuKernel *k, const SrcReq *r) {
  switch (r->kind) {
  case CPU_JIT_TREE: return cpu_jit_tree_source(r->tree);
  case CPU_JIT_BLOCK: return cpu_jit_block_source(k);
  case CPU_JIT_SCALAR: return cpu_jit_scalar_source(k);
  case CPU_JIT_RANGE: return cpu_jit_range_source(k);
  default: return cpu_jit_loop_source(r->cond, k, r->w, r->poll_mask);
  }
}

/* Gives *slot (a kernel's entry of the kind, or a fused pass's) its
   entry: the source made, the function found in this process or on disk
   (or, in sync mode, compiled now). */
static JitEntry *attach(struct JitEntry *_Atomic *slot, const CpuKernel *k, const SrcReq *r) {
  static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&attach_lock);
  JitEntry *e = atomic_load(slot);
  if (!e) {
    char *src = source_of(k, r);
    bool fresh = false;
    if (!src) {
      e = &none;
    } else {
      pthread_mutex_lock(&lock);
      stats.sources++;
      pthread_mutex_unlock(&lock);
      e = entry_of(src, r->kind, &fresh);
    }
    if (fresh) build(e, mode() == MODE_SYNC);
    atomic_store(slot, e);
  }
  pthread_mutex_unlock(&attach_lock);
  return e;
}

/* The compiled function of *slot, or NULL; counts work (block-
   instructions, into *wslot before there is an entry) towards making and
   compiling its source. */
static JitFn slot_fn(struct JitEntry *_Atomic *slot, _Atomic long *wslot, const CpuKernel *k, const SrcReq *r,
                     long work) {
  JitEntry *e = atomic_load_explicit(slot, memory_order_acquire);
  if (!e) {
    int m = mode();
    if (m == MODE_OFF) return NULL;
    long w = atomic_fetch_add_explicit(wslot, work, memory_order_relaxed) + work;
    /* making the source allocates from the collector: the loops' extra
       threads, which it does not know, leave that to thread 0 */
    if (cpu_in_worker()) return NULL;
    /* a loop's source is made at its first run: one run may be long */
    if (m != MODE_SYNC && w < LOOKUP_WORK && r->kind != CPU_JIT_FOR && r->kind != CPU_JIT_WHILE) return NULL;
    e = attach(slot, k, r);
  }
  JitFn fn = atomic_load_explicit(&e->fn, memory_order_acquire);
  if (fn || e == &none) return fn;
  if (atomic_load_explicit(&e->state, memory_order_relaxed) == IDLE &&
      atomic_fetch_add_explicit(&e->work, work, memory_order_relaxed) + work >= COMPILE_WORK && !cpu_in_worker())
    start_compile(e);
  return NULL;
}

/* k's compiled function of the kind, or NULL (slot_fn). */
static JitFn jit_fn(const CpuKernel *k, const SrcReq *r, long work) {
  CpuKernel *mk = (CpuKernel *)k; /* the JIT's fields are a cache */
  return slot_fn(&mk->jit[r->kind], &mk->jit_work[r->kind], k, r, work);
}

CpuJitBlockFn cpu_jit_block(const CpuKernel *k) {
  SrcReq r = {CPU_JIT_BLOCK, NULL, 0, 0, NULL};
  return (CpuJitBlockFn)jit_fn(k, &r, k->nexec);
}

/* A one-element run is a block-instruction's 1/CPU_BLOCK: counted in
   instructions over CPU_BLOCK / 8 (a lane's work weighs more, the
   interpreter's dispatch being per element). */
CpuJitScalarFn cpu_jit_scalar(const CpuKernel *k) {
  SrcReq r = {CPU_JIT_SCALAR, NULL, 0, 0, NULL};
  return (CpuJitScalarFn)jit_fn(k, &r, (k->ninstr + CPU_BLOCK / 8 - 1) / (CPU_BLOCK / 8));
}

CpuJitTreeFn cpu_jit_tree(CpuJitTree *t, size_t n) {
  SrcReq r = {CPU_JIT_TREE, NULL, 0, 0, t};
  long per = 0;
  for (int q = 0; q < t->n; q++) per += t->k[q]->nexec;
  return (CpuJitTreeFn)slot_fn(&t->entry, &t->work, t->k[t->n - 1], &r, (long)((n + CPU_BLOCK - 1) / CPU_BLOCK) * per);
}

CpuJitRangeFn cpu_jit_range(const CpuKernel *k, size_t n) {
  SrcReq r = {CPU_JIT_RANGE, NULL, 0, 0, NULL};
  return (CpuJitRangeFn)jit_fn(k, &r, (long)((n + CPU_BLOCK - 1) / CPU_BLOCK) * k->nexec);
}

CpuJitLoopFn cpu_jit_loop(const CpuKernel *cond, const CpuKernel *body, int w, int poll_mask, double iterations) {
  SrcReq r = {cond ? CPU_JIT_WHILE : CPU_JIT_FOR, cond, w, poll_mask, NULL};
  double per = (double)(body->ninstr + (cond ? cond->ninstr : 0)) / (CPU_BLOCK / 8);
  double work = iterations * per;
  return (CpuJitLoopFn)jit_fn(body, &r, work > 1e15 ? (long)1e15 : (long)work);
}

void cpu_jit_wait(void) {
  pthread_mutex_lock(&lock);
  while (compiling > 0) pthread_cond_wait(&idle_cond, &lock);
  pthread_mutex_unlock(&lock);
}

CpuJitStats cpu_jit_stats(void) {
  pthread_mutex_lock(&lock);
  CpuJitStats s = stats;
  pthread_mutex_unlock(&lock);
  return s;
}
