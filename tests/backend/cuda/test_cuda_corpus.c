/* test_cuda_corpus.c: every program of the gradient corpus
   (tests/reverse/corpus.c) and a set of random programs (gen.h), their
   primal and their optimized gradient, planned for the GPU (plan.h),
   emitted, and compiled in this process by NVRTC to PTX for compute_90;
   `ptxas -arch=sm_90` must accept each PTX file. No GPU is needed: this is
   what CI checks of the GPU path. The programs are batched into a few
   translation units (a namespace each) to keep the test fast. The test fails (it does not skip) when
   NVRTC or ptxas cannot be found. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../backend/cuda/emit.h"
#include "../../../backend/cuda/nvrtc.h"
#include "../../../backend/cuda/launch.h"
#include "../../../optimizer/program.h"
#include "../../reverse/corpus.h"
#include "../../reverse/gradcheck.h"
#include "../../suites.h"
#include "cuda_testlib.h"

/* Random programs (NVRTC and ptxas take about 0.2 s per program's kernels). */
enum { NRANDOM = 12 };

/* The ptxas to run; the test fails without one. */
static const char *ptxas(void) {
  const char *p = find_ptxas();
  ck_assert_msg(p != NULL, "ptxas not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)");
  return p;
}

/* Many programs' translation units as one, so that NVRTC and ptxas run
   once (each costs a fixed 0.1-0.3 s per run): each program's text after
   the shared prelude goes into a namespace of its own, its extern "C"
   kernels renamed p<N>_una_... (the macros it defines are undefined
   after each kernel, and the prelude's are defined once). */
typedef struct Batch {
  char *text;
  size_t n, cap;
  int programs, kernels;
  const char *names; /* the programs, for failure messages */
} Batch;

static void append(Batch *b, const char *s, size_t len) {
  if (b->n + len + 1 > b->cap) {
    b->cap = (b->n + len + 1) * 2;
    char *t = GC_MALLOC_ATOMIC(b->cap);
    if (b->n) memcpy(t, b->text, b->n);
    b->text = t;
  }
  memcpy(b->text + b->n, s, len);
  b->n += len;
  b->text[b->n] = '\0';
}

static void add_def(Batch *b, const Def *d, const char *what) {
  Plan *p = plan_of_def(d);
  if (p->nkernels == 0) return;
  size_t np = strlen(gpu_emit_prelude);
  ck_assert_msg(strncmp(gpu_plan_source(p), gpu_emit_prelude, np) == 0, "%s: no prelude", what);
  if (b->n == 0) append(b, gpu_emit_prelude, np);
  char *head = una_sprintf("\nnamespace p%d { /* %s */\n", b->programs, what);
  append(b, head, strlen(head));
  const char *needle = "extern \"C\" __global__ void una_";
  const char *s = gpu_plan_source(p) + np;
  for (const char *hit; (hit = strstr(s, needle)) != NULL; s = hit + strlen(needle)) {
    append(b, s, (size_t)(hit - s));
    char *renamed = una_sprintf("extern \"C\" __global__ void p%d_una_", b->programs);
    append(b, renamed, strlen(renamed));
  }
  append(b, s, strlen(s));
  append(b, "}\n", 2);
  b->programs++;
  b->kernels += p->nkernels;
}

/* The primal f and its optimized gradient (UNF path) of program text. */
static void add_program(Batch *b, const char *name, const char *text, const char *wrt_names) {
  char *err = NULL;
  GcProgram *p = gc_load("<corpus>", text, true, "f", &err);
  ck_assert_msg(p != NULL, "%s: %s", name, err);
  OptOptions o = {0};
  o.enabled = true;
  o.check_passes = true; /* the type checker after every pass */
  add_def(b, opt_optimize_program(p->f, &o), una_sprintf("%s, primal", name));
  int *wrt = NEW_ARRAY(int, p->f->nparams + 1);
  int nwrt = gc_wrt(p, wrt_names, wrt);
  if (nwrt == 0) return;
  Def *g = opt_optimize_program(rev_grad(p->f, wrt, nwrt, REV_UNF), &o);
  add_def(b, g, una_sprintf("%s, gradient", name));
}

/* NVRTC compiles the batch to PTX for compute_90 in this process; ptxas
   -arch=sm_90 accepts the PTX. */
static void compile_batch(const Batch *b, const char *what) {
  size_t size = 0;
  char *log = NULL;
  char *ptx = nvrtc_compile(b->text, what, 90, false, &size, &log);
  ck_assert_msg(ptx != NULL, "%s: NVRTC failed:\n%s", what, log ? log : "");
  ck_assert_ptr_nonnull(strstr(ptx, ".target sm_90"));
  char dir[] = "/tmp/una_ptx_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *file = una_sprintf("%s/k.ptx", dir), *out = una_sprintf("%s/k.cubin", dir);
  FILE *f = fopen(file, "wb");
  ck_assert_ptr_nonnull(f);
  fwrite(ptx, 1, strlen(ptx), f);
  fclose(f);
  char *cmd = una_sprintf("%s -arch=sm_90 -o %s %s 2>&1", ptxas(), out, file);
  FILE *pp = popen(cmd, "r");
  ck_assert_ptr_nonnull(pp);
  char msg[2048] = "";
  size_t got = fread(msg, 1, sizeof msg - 1, pp);
  msg[got] = '\0';
  int rc = pclose(pp);
  ck_assert_msg(rc == 0, "%s: ptxas rejected the PTX (%s):\n%s", what, file, msg);
  /* every kernel is in the PTX */
  int entries = 0;
  for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 1, ".entry")) entries++;
  ck_assert_int_ge(entries, b->kernels);
  remove(file);
  remove(out);
  rmdir(dir);
}

START_TEST(nvrtc_loads) {
  const char *why = NULL;
  ck_assert_msg(nvrtc_available(&why), "NVRTC is needed by this test: %s", why ? why : "?");
}
END_TEST

START_TEST(corpus) {
  Batch b = {0};
  for (int i = 0; i < gc_ncorpus; i++) add_program(&b, gc_corpus[i].name, gc_corpus[i].src, gc_corpus[i].wrt);
  /* the corpus has arrays: most of its programs launch kernels */
  ck_assert_int_gt(b.kernels, gc_ncorpus);
  compile_batch(&b, "the corpus");
}
END_TEST

START_TEST(random_programs) {
  GenOptions go = gen_default_options();
  Batch b = {0};
  for (int i = 0; i < NRANDOM; i++) {
    GenProgram g = gen_program(9000 + (uint64_t)i, &go);
    add_program(&b, una_sprintf("random program, seed %d", 9000 + i), g.text, NULL);
  }
  ck_assert_int_gt(b.kernels, NRANDOM / 2);
  compile_batch(&b, "random programs");
}
END_TEST

Suite *suite_cuda_corpus(void) {
  Suite *s = suite_create("cuda_corpus");
  TCase *tc = tcase_create("nvrtc");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, nvrtc_loads);
  tcase_add_test(tc, corpus);
  tcase_add_test(tc, random_programs);
  suite_add_tcase(s, tc);
  return s;
}
