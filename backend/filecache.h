/* filecache.h: what the caches of compiled code share (the CUDA kernel
   cache, backend/cuda/kcache.c, and the CPU kernels compiled to native
   code, backend/jit.c): a 128-bit key over fields of text or bytes, the
   cache folder, folders made on demand and names for temporary files
   that are renamed into place (so that concurrent runs never see half a
   file). */
#ifndef UNA_FILECACHE_H
#define UNA_FILECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct CacheKey {
  uint64_t h[2];
} CacheKey;

/* FNV-1a 64 and a multiply-rotate hash with a splitmix64 finish, over
   fields each fed as its length then its bytes (so that fields cannot run
   into each other). */
typedef struct CacheHasher {
  uint64_t fnv, mr, word;
  unsigned nword;
  uint64_t len;
} CacheHasher;

void cache_hasher_init(CacheHasher *h);
void cache_hasher_field(CacheHasher *h, const void *p, size_t n);
CacheKey cache_hasher_key(CacheHasher *h);
/* 32 hex digits (GC memory). */
char *cache_key_hex(CacheKey k);

/* $UNA_CACHE_DIR, else $XDG_CACHE_HOME/una, else ~/.cache/una; NULL when
   none of them is set. */
const char *cache_dir(void);

/* mkdir -p dir (mode 0755); false when it cannot be made. */
bool cache_make_dirs(const char *dir);

/* Writes all n bytes to fd (through EINTR and short writes); false on an
   error. */
bool cache_write_all(int fd, const void *buf, size_t n);
/* Reads all n bytes from fd; false on an error or a short read. */
bool cache_read_all(int fd, void *buf, size_t n);

/* "<dir>/.tmp.<pid>.<16 hex digits>", a name that differs between calls
   and processes (GC memory). */
char *cache_tmp_name(const char *dir, const char *suffix);

#endif
