/* test_kcache.c: the kernel cache (backend/cuda/kcache.c) with
   UNA_CACHE_DIR set to a fresh temporary folder: compiled, then from
   memory, then (after kcache_clear_memory) from disk with the same bytes;
   another architecture or driver version is another key; a truncated or
   corrupt file is recompiled and rewritten; no temporary file remains; a
   folder that cannot be made still compiles; the memory keeps at most
   UNA_KCACHE_MEMORY bytes, forgetting the oldest. Needs NVRTC (fails
   without). */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../backend/cuda/kcache.h"
#include "../../../backend/cuda/nvrtc.h"
#include "../../../frontend/ir/common.h"
#include "../../suites.h"

static const char *const src =
    "extern \"C\" __global__ void una_scale(double *y, const double *x, double a, long long n) {\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i];\n"
    "}\n";

static char cache_dir[64];

/* A fresh cache folder in UNA_CACHE_DIR; fails the test without NVRTC. */
static void setup(void) {
  const char *why = NULL;
  if (!nvrtc_available(&why)) ck_abort_msg("NVRTC must be installed for these tests: %s", why);
  strcpy(cache_dir, "/tmp/una_kcache_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(cache_dir));
  setenv("UNA_CACHE_DIR", cache_dir, 1);
  kcache_clear_memory();
}

/* Removes the cache folder and its files. */
static void teardown(void) {
  DIR *d = opendir(cache_dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      unlink(una_sprintf("%s/%s", cache_dir, e->d_name));
  closedir(d);
  rmdir(cache_dir);
}

/* The names in the cache folder (not . and ..), and how many there are. */
static int list_dir(char **names, int max) {
  DIR *d = opendir(cache_dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n < max) names[n] = una_strdup(e->d_name);
    n++;
  }
  closedir(d);
  return n;
}

/* The path of the only file in the cache folder, which must be a <32 hex>.cubin. */
static char *only_file(void) {
  char *names[4];
  ck_assert_int_eq(list_dir(names, 4), 1);
  ck_assert_uint_eq(strlen(names[0]), 32 + strlen(".cubin"));
  ck_assert_str_eq(names[0] + 32, ".cubin");
  return una_sprintf("%s/%s", cache_dir, names[0]);
}

static off_t file_size(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_size;
}

/* kcache_cubin(src, arch, drv), which must succeed; returns where it came from. */
static KcacheSource get(const char *text, int arch, int drv, const void **image, size_t *size) {
  KcacheSource from = (KcacheSource)-1;
  char *log = NULL;
  const void *p = kcache_cubin(text, arch, drv, size, &from, &log);
  ck_assert_msg(p != NULL, "kcache_cubin failed: %s", log ? log : "(no log)");
  if (image) *image = p;
  return from;
}

START_TEST(compiled_memory_disk) {
  const void *a, *b, *c;
  size_t na, nb, nc;
  ck_assert_int_eq(get(src, 90, 13000, &a, &na), KCACHE_COMPILED);
  ck_assert(((const unsigned char *)a)[0] == 0x7f && memcmp((const char *)a + 1, "ELF", 3) == 0);
  ck_assert_int_eq(get(src, 90, 13000, &b, &nb), KCACHE_MEMORY);
  ck_assert_ptr_eq(a, b);
  ck_assert_uint_eq(na, nb);
  char *path = only_file();
  ck_assert_int_eq(file_size(path), (off_t)(32 + na));
  kcache_clear_memory();
  ck_assert_int_eq(get(src, 90, 13000, &c, &nc), KCACHE_DISK);
  ck_assert_uint_eq(nc, na);
  ck_assert(memcmp(a, c, na) == 0);
  ck_assert_int_eq(get(src, 90, 13000, NULL, &nc), KCACHE_MEMORY);
  ck_assert_str_eq(kcache_dir(), cache_dir);
}
END_TEST

/* The memory keeps at most UNA_KCACHE_MEMORY bytes: storing past it
   forgets the oldest entry, which then comes from disk again. */
START_TEST(memory_is_bounded) {
  static const int arch[3] = {80, 86, 89};
  size_t n[3], m;
  for (int i = 0; i < 3; i++) ck_assert_int_eq(get(src, arch[i], 13000, NULL, &n[i]), KCACHE_COMPILED);
  ck_assert_uint_eq(kcache_memory_bytes(), n[0] + n[1] + n[2]);
  kcache_clear_memory();
  setenv("UNA_KCACHE_MEMORY", una_sprintf("%zu", n[1] + n[2]), 1); /* room for the newest two */
  for (int i = 0; i < 3; i++) ck_assert_int_eq(get(src, arch[i], 13000, NULL, &m), KCACHE_DISK);
  ck_assert_uint_le(kcache_memory_bytes(), kcache_memory_bound());
  ck_assert_int_eq(get(src, 89, 13000, NULL, &m), KCACHE_MEMORY);
  ck_assert_int_eq(get(src, 86, 13000, NULL, &m), KCACHE_MEMORY);
  ck_assert_int_eq(get(src, 80, 13000, NULL, &m), KCACHE_DISK); /* the oldest was forgotten */
  setenv("UNA_KCACHE_MEMORY", "1", 1); /* smaller than any image: none is kept */
  kcache_clear_memory();
  ck_assert_int_eq(get(src, 80, 13000, NULL, &m), KCACHE_DISK);
  ck_assert_uint_eq(kcache_memory_bytes(), 0);
  ck_assert_int_eq(get(src, 80, 13000, NULL, &m), KCACHE_DISK);
  unsetenv("UNA_KCACHE_MEMORY");
}
END_TEST

START_TEST(key_covers_arch_driver_and_source) {
  size_t n;
  ck_assert_int_eq(get(src, 90, 13000, NULL, &n), KCACHE_COMPILED);
  ck_assert_int_eq(get(src, 80, 13000, NULL, &n), KCACHE_COMPILED);
  ck_assert_int_eq(get(src, 90, 12080, NULL, &n), KCACHE_COMPILED);
  char *other = una_sprintf("%s// another kernel\n", src);
  ck_assert_int_eq(get(other, 90, 13000, NULL, &n), KCACHE_COMPILED);
  char *names[8];
  ck_assert_int_eq(list_dir(names, 8), 4);
  ck_assert_int_eq(get(src, 80, 13000, NULL, &n), KCACHE_MEMORY);
  ck_assert_int_eq(get(src, 90, 12080, NULL, &n), KCACHE_MEMORY);
}
END_TEST

/* Replaces the file at path by its first `keep` bytes, then flips byte
   `flip` (when flip >= 0). */
static void damage(const char *path, off_t keep, off_t flip) {
  if (keep >= 0) ck_assert_int_eq(truncate(path, keep), 0);
  if (flip >= 0) {
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    unsigned char b;
    ck_assert_int_eq(pread(fd, &b, 1, flip), 1);
    b ^= 0x5a;
    ck_assert_int_eq(pwrite(fd, &b, 1, flip), 1);
    close(fd);
  }
}

START_TEST(damaged_files_are_recompiled) {
  const void *a, *b;
  size_t na, nb;
  ck_assert_int_eq(get(src, 90, 13000, &a, &na), KCACHE_COMPILED);
  char *path = only_file();
  off_t full = file_size(path);
  struct { off_t keep, flip; } cases[] = {
      {full - 1, -1}, /* the image cut short */
      {20, -1},       /* the header cut short */
      {0, -1},        /* empty */
      {-1, 0},        /* a foreign magic number */
      {-1, 9},        /* another key */
      {-1, 24},       /* a wrong size */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    damage(path, cases[i].keep, cases[i].flip);
    kcache_clear_memory();
    ck_assert_msg(get(src, 90, 13000, &b, &nb) == KCACHE_COMPILED, "case %zu", i);
    ck_assert_uint_eq(nb, na);
    ck_assert(memcmp(a, b, na) == 0);
    ck_assert_str_eq(only_file(), path); /* rewritten, nothing else left */
    ck_assert_int_eq(file_size(path), full);
    kcache_clear_memory();
    ck_assert_int_eq(get(src, 90, 13000, NULL, &nb), KCACHE_DISK);
  }
}
END_TEST

START_TEST(no_temporary_file_remains) {
  size_t n;
  for (int arch = 80; arch <= 90; arch += 10) get(src, arch, 13000, NULL, &n);
  char *names[8];
  int count = list_dir(names, 8);
  ck_assert_int_eq(count, 2);
  for (int i = 0; i < count; i++) {
    ck_assert_msg(strncmp(names[i], ".tmp", 4) != 0, "temporary file left: %s", names[i]);
    ck_assert_ptr_nonnull(strstr(names[i], ".cubin"));
  }
}
END_TEST

START_TEST(nested_folder_is_created) {
  char *nested = una_sprintf("%s/a/b", cache_dir);
  setenv("UNA_CACHE_DIR", nested, 1);
  size_t n;
  ck_assert_int_eq(get(src, 90, 13000, NULL, &n), KCACHE_COMPILED);
  kcache_clear_memory();
  ck_assert_int_eq(get(src, 90, 13000, NULL, &n), KCACHE_DISK);
  struct stat st;
  ck_assert_int_eq(stat(nested, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0755);
  DIR *d = opendir(nested);
  struct dirent *e;
  while ((e = readdir(d))) unlink(una_sprintf("%s/%s", nested, e->d_name));
  closedir(d);
  rmdir(nested);
  rmdir(una_sprintf("%s/a", cache_dir));
}
END_TEST

START_TEST(unwritable_folder_still_compiles) {
  /* A folder below a plain file cannot be made, even by root. */
  char *file = una_sprintf("%s/plain", cache_dir);
  FILE *f = fopen(file, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  setenv("UNA_CACHE_DIR", una_sprintf("%s/cache", file), 1);
  const void *a, *b;
  size_t na, nb;
  ck_assert_int_eq(get(src, 90, 13000, &a, &na), KCACHE_COMPILED);
  ck_assert_int_eq(get(src, 90, 13000, &b, &nb), KCACHE_MEMORY);
  kcache_clear_memory();
  ck_assert_int_eq(get(src, 90, 13000, &b, &nb), KCACHE_COMPILED);
  ck_assert_uint_eq(na, nb);
  ck_assert(memcmp(a, b, na) == 0);
  kcache_clear_memory();
  ck_assert_int_eq(get(src, 90, 13000, &b, &nb), KCACHE_COMPILED);
}
END_TEST

START_TEST(compile_error_gives_the_log) {
  size_t n = 0;
  KcacheSource from;
  char *log = NULL;
  const void *p = kcache_cubin("extern \"C\" __global__ void k() { oops; }\n", 90, 13000, &n, &from, &log);
  ck_assert_ptr_null(p);
  ck_assert_ptr_nonnull(log);
  ck_assert_ptr_nonnull(strstr(log, "oops"));
  char *names[2];
  ck_assert_int_eq(list_dir(names, 2), 0);
}
END_TEST

START_TEST(default_folder) {
  unsetenv("UNA_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  ck_assert_str_eq(kcache_dir(), "/x/cache/una");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  ck_assert_str_eq(kcache_dir(), "/home/u/.cache/una");
}
END_TEST

Suite *suite_kcache(void) {
  Suite *s = suite_create("kcache");
  TCase *tc = tcase_create("kcache");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, compiled_memory_disk);
  tcase_add_test(tc, key_covers_arch_driver_and_source);
  tcase_add_test(tc, damaged_files_are_recompiled);
  tcase_add_test(tc, no_temporary_file_remains);
  tcase_add_test(tc, nested_folder_is_created);
  tcase_add_test(tc, unwritable_folder_still_compiles);
  tcase_add_test(tc, compile_error_gives_the_log);
  tcase_add_test(tc, default_folder);
  tcase_add_test(tc, memory_is_bounded);
  suite_add_tcase(s, tc);
  return s;
}
