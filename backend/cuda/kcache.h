/* kcache.h: compiled kernels, cached in memory and on disk so that a
   program's kernels are compiled once per machine. The key is a 128-bit hash
   of the source, NVRTC's options (nvrtc_options), the architecture, the
   NVRTC version and the driver version; the disk cache lives in
   $XDG_CACHE_HOME/una, else ~/.cache/una ($UNA_CACHE_DIR overrides both),
   one file per key (<32 hex digits>.cubin), written to a temporary file
   and renamed into place, so that concurrent runs never see half a file.
   A file that cannot be read or written is ignored (the cache is only
   a cache); a truncated or foreign file is detected (a header with a magic
   number, the key and the size) and recompiled. */
#ifndef UNA_CUDA_KCACHE_H
#define UNA_CUDA_KCACHE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { KCACHE_MEMORY, KCACHE_DISK, KCACHE_COMPILED } KcacheSource;

/* The cubin of src for arch under driver version drv: from memory, from
   disk, or compiled by NVRTC now (then stored in both). Returns NULL with
   *log set when the compile fails. *from says where it came from. */
const void *kcache_cubin(const char *src, int arch, int drv, size_t *size, KcacheSource *from, char **log);

/* The folder the disk cache uses (created on first store). */
const char *kcache_dir(void);

/* Forgets the in-memory entries (for tests of the disk cache). */
void kcache_clear_memory(void);

/* The most bytes of images the memory keeps: $UNA_KCACHE_MEMORY, else 64
   MiB. Storing past it forgets the oldest entries (they are found on disk
   again); an image larger than the bound is not kept in memory. */
size_t kcache_memory_bound(void);

/* The bytes of images the memory keeps now. */
size_t kcache_memory_bytes(void);

#endif
