/* filecache.c: keys, folders and temporary names of the code caches
   (filecache.h). */
#include "filecache.h"
#include "../frontend/ir/common.h"

#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t mix64(uint64_t z) { /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static void mr_word(CacheHasher *h, uint64_t w) {
  h->mr ^= rotl(w * UINT64_C(0x87c37b91114253d5), 31) * UINT64_C(0x4cf5ad432745937f);
  h->mr = rotl(h->mr, 27) * 5 + UINT64_C(0x52dce729);
}

static void feed(CacheHasher *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h->fnv = (h->fnv ^ b[i]) * UINT64_C(0x100000001b3);
    h->word |= (uint64_t)b[i] << (8 * h->nword);
    if (++h->nword == 8) {
      mr_word(h, h->word);
      h->word = 0;
      h->nword = 0;
    }
  }
  h->len += n;
}

void cache_hasher_init(CacheHasher *h) {
  *h = (CacheHasher){UINT64_C(0xcbf29ce484222325), UINT64_C(0x9e3779b97f4a7c15), 0, 0, 0};
}

void cache_hasher_field(CacheHasher *h, const void *p, size_t n) {
  uint64_t len = n;
  feed(h, &len, sizeof len);
  feed(h, p, n);
}

CacheKey cache_hasher_key(CacheHasher *h) {
  if (h->nword) mr_word(h, h->word);
  CacheKey k = {{h->fnv, mix64(h->mr ^ h->len)}};
  return k;
}

char *cache_key_hex(CacheKey k) {
  return una_sprintf("%016llx%016llx", (unsigned long long)k.h[0], (unsigned long long)k.h[1]);
}

const char *cache_dir(void) {
  const char *d = getenv("UNA_CACHE_DIR");
  if (d && *d) return d;
  d = getenv("XDG_CACHE_HOME");
  if (d && *d) return una_sprintf("%s/una", d);
  d = getenv("HOME");
  if (d && *d) return una_sprintf("%s/.cache/una", d);
  return NULL;
}

bool cache_make_dirs(const char *dir) {
  char *p = una_strdup(dir);
  for (char *q = p + 1; *q; q++) {
    if (*q != '/') continue;
    *q = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
    *q = '/';
  }
  if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

char *cache_tmp_name(const char *dir, const char *suffix) {
  static _Atomic uint64_t counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t c = counter++;
  uint64_t r = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (c << 48) ^ ((uint64_t)getpid() << 17) ^
                     (uint64_t)(uintptr_t)&ts);
  return una_sprintf("%s/.tmp.%ld.%016llx%s", dir, (long)getpid(), (unsigned long long)r, suffix);
}

/* n bytes through read or write, retried through EINTR and short counts. */
static bool transfer(int fd, char *p, size_t n, bool writing) {
  while (n > 0) {
    ssize_t k = writing ? write(fd, p, n) : read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

bool cache_write_all(int fd, const void *buf, size_t n) { return transfer(fd, (char *)buf, n, true); }

bool cache_read_all(int fd, void *buf, size_t n) { return transfer(fd, buf, n, false); }
