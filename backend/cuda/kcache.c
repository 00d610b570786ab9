/* kcache.c: the kernel cache behind kcache.h: a 128-bit key (FNV-1a 64 and
   a multiply-rotate hash with a splitmix64 finish, over the source, NVRTC's
   options, the architecture, the NVRTC version and the driver version), an
   in-memory table in GC memory, and one file per key on disk:
     header {magic "UNAKCv1\0", key[2], size} (32 bytes, host byte order),
     then the cubin,
   written to "<dir>/.tmp.<pid>.<rand>" and renamed into place. Failures to
   read or write the disk cache are silent. */
#include "kcache.h"
#include "../../frontend/ir/common.h"
#include "nvrtc.h"
#include "../filecache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the key ---- */

typedef CacheKey Key;

static Key make_key(const char *src, const char *options, int arch, const char *nvrtc_ver, int drv) {
  CacheHasher h;
  cache_hasher_init(&h);
  int64_t a = arch, d = drv;
  cache_hasher_field(&h, src, strlen(src));
  cache_hasher_field(&h, options, strlen(options));
  cache_hasher_field(&h, &a, sizeof a);
  cache_hasher_field(&h, nvrtc_ver, strlen(nvrtc_ver));
  cache_hasher_field(&h, &d, sizeof d);
  return cache_hasher_key(&h);
}

static char *key_hex(Key k) { return cache_key_hex(k); }

/* ---- memory ---- */

typedef struct Entry {
  Key key;
  const void *image;
  size_t size;
  struct Entry *next;  /* in its bucket */
  struct Entry *newer; /* in the order of storing */
} Entry;

/* The in-memory table: buckets of entries, and the entries in the order
   they were stored, whose images add up to at most kcache_memory_bound()
   bytes; storing past the bound forgets the oldest (the disk keeps them).
   The module is its owner: one table for the process, as there is one
   device. */
enum { NBUCKETS = 256 };
static Entry **table; /* GC memory, NBUCKETS lists */
static Entry *oldest, *newest;
static size_t table_bytes;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

size_t kcache_memory_bound(void) {
  const char *v = getenv("UNA_KCACHE_MEMORY");
  if (v && *v) {
    char *end;
    unsigned long long b = strtoull(v, &end, 10);
    if (*end == '\0') return (size_t)b;
  }
  return (size_t)64 << 20;
}

size_t kcache_memory_bytes(void) {
  pthread_mutex_lock(&table_lock);
  size_t b = table_bytes;
  pthread_mutex_unlock(&table_lock);
  return b;
}

/* Forgets the oldest entry (table_lock held). */
static void forget_oldest(void) {
  Entry *e = oldest;
  Entry **p = &table[e->key.h[0] % NBUCKETS];
  while (*p != e) p = &(*p)->next;
  *p = e->next;
  oldest = e->newer;
  if (!oldest) newest = NULL;
  table_bytes -= e->size;
}

static const Entry *memory_find(Key k) {
  pthread_mutex_lock(&table_lock);
  const Entry *e = table ? table[k.h[0] % NBUCKETS] : NULL;
  while (e && (e->key.h[0] != k.h[0] || e->key.h[1] != k.h[1])) e = e->next;
  pthread_mutex_unlock(&table_lock);
  return e;
}

static void memory_store(Key k, const void *image, size_t size) {
  Entry *e = NEW(Entry);
  e->key = k;
  e->image = image;
  e->size = size;
  size_t bound = kcache_memory_bound();
  pthread_mutex_lock(&table_lock);
  if (!table) table = NEW_ARRAY(Entry *, NBUCKETS);
  while (oldest && table_bytes + size > bound) forget_oldest();
  if (size <= bound) {
    e->next = table[k.h[0] % NBUCKETS];
    table[k.h[0] % NBUCKETS] = e;
    if (newest) newest->newer = e;
    else oldest = e;
    newest = e;
    table_bytes += size;
  }
  pthread_mutex_unlock(&table_lock);
}

void kcache_clear_memory(void) {
  pthread_mutex_lock(&table_lock);
  table = NULL;
  oldest = newest = NULL;
  table_bytes = 0;
  pthread_mutex_unlock(&table_lock);
}

/* ---- disk ---- */

typedef struct FileHeader {
  char magic[8]; /* "UNAKCv1\0" */
  uint64_t key[2];
  uint64_t size; /* bytes of the image that follows */
} FileHeader;

static const char magic[8] = "UNAKCv1";

const char *kcache_dir(void) { return cache_dir(); }

static char *entry_path(const char *dir, Key k) { return una_sprintf("%s/%s.cubin", dir, key_hex(k)); }



/* The image stored under k in dir, or NULL when there is none or the file
   is truncated, foreign or unreadable. */
static void *disk_load(const char *dir, Key k, size_t *size) {
  int fd = open(entry_path(dir, k), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  void *image = NULL;
  FileHeader h;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof h && cache_read_all(fd, &h, sizeof h) &&
      memcmp(h.magic, magic, sizeof magic) == 0 && h.key[0] == k.h[0] && h.key[1] == k.h[1] &&
      h.size == (uint64_t)st.st_size - sizeof h) {
    image = GC_MALLOC_ATOMIC(h.size);
    if (image && cache_read_all(fd, image, h.size))
      *size = h.size;
    else
      image = NULL;
  }
  close(fd);
  return image;
}

/* Stores image under k in dir: a temporary file renamed into place. */
static void disk_store(const char *dir, Key k, const void *image, size_t size) {
  if (!cache_make_dirs(dir)) return;
  char *tmp = cache_tmp_name(dir, "");
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  FileHeader h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, magic, sizeof magic);
  h.key[0] = k.h[0];
  h.key[1] = k.h[1];
  h.size = size;
  bool ok = cache_write_all(fd, &h, sizeof h) && cache_write_all(fd, image, size);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, entry_path(dir, k)) != 0) unlink(tmp);
}

/* ---- lookups ---- */

const void *kcache_cubin(const char *src, int arch, int drv, size_t *size, KcacheSource *from, char **log) {
  const char *ver = nvrtc_available(NULL) ? nvrtc_version() : "none";
  Key k = make_key(src, nvrtc_options(arch, true), arch, ver, drv);
  if (log) *log = NULL;
  const Entry *e = memory_find(k);
  if (e) {
    *size = e->size;
    if (from) *from = KCACHE_MEMORY;
    return e->image;
  }
  const char *dir = kcache_dir();
  size_t n = 0;
  void *image = dir ? disk_load(dir, k, &n) : NULL;
  if (image) {
    memory_store(k, image, n);
    *size = n;
    if (from) *from = KCACHE_DISK;
    return image;
  }
  image = nvrtc_compile(src, "una_kernels.cu", arch, true, &n, log);
  if (!image) return NULL;
  memory_store(k, image, n);
  if (dir) disk_store(dir, k, image, n);
  *size = n;
  if (from) *from = KCACHE_COMPILED;
  return image;
}
