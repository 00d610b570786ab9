/* kernel_commute.c: symmetry of a kernel in its two parameters (see
   kernel.h's cpu_kernel_commutes).

   Every virtual register gets a canonical node, hash-consed in one table
   for both labellings of the parameters (x, y) and (y, x): a leaf for a
   parameter (by label), a constant (by bits) or an input (by vreg), and an
   inner node (op, operands) with the operands of commutative builtins
   sorted. The kernel commutes when its result has the same node under
   both labellings. */
#include "kernel_int.h"
#include <string.h>

typedef struct Node {
  int op;          /* a Prim, CPU_K_SELECT, or a leaf tag below */
  long long a, b, c;
} Node;

enum { LEAF_PARAM = -1, LEAF_CONST = -2, LEAF_INPUT = -3 };

typedef struct Table {
  Node *n;
  int len;
} Table;

/* The id of node x, added when new (linear search: kernels are small). */
static int intern(Table *t, Node x) {
  for (int i = 0; i < t->len; i++)
    if (memcmp(&t->n[i], &x, sizeof x) == 0) return i;
  t->n[t->len] = x;
  return t->len++;
}

/* Commutative as a function of reals (LAW_COMM in prims.def): max and min
   too, whose operands differ only in the sign of a zero or a nan's bits. */
static bool commutative(int op) {
  return op >= 0 && op < PRIM__COUNT && (fe_prims[op].laws & LAW_COMM);
}

/* The canonical id of every vreg of k with the parameters labelled
   (first, second); the result's id. */
static int canon(const CpuKernel *k, Table *t, int *id, int first, int second) {
  int nv = cpu_kernel_nvregs(k);
  for (int v = 0; v < nv; v++) {
    Node x;
    memset(&x, 0, sizeof x);
    switch (cpu_kernel_vreg_kind(k, v)) {
    case CPU_VR_PARAM:
      x.op = LEAF_PARAM;
      x.a = v == 0 ? first : second;
      break;
    case CPU_VR_CONST: {
      double d = cpu_kernel_const(k, v);
      x.op = LEAF_CONST;
      memcpy(&x.a, &d, sizeof d);
      break;
    }
    case CPU_VR_INPUT:
    case CPU_VR_ARRAY:
      x.op = LEAF_INPUT;
      x.a = v;
      break;
    case CPU_VR_TEMP: continue; /* set by its instruction */
    }
    id[v] = intern(t, x);
  }
  const CpuKInstr *code = cpu_kernel_code(k);
  for (int i = 0; i < cpu_kernel_size(k); i++) {
    Node x;
    memset(&x, 0, sizeof x);
    x.op = code[i].op;
    x.a = id[code[i].a];
    x.b = code[i].b >= 0 ? id[code[i].b] : -1;
    x.c = code[i].c >= 0 ? id[code[i].c] : -1;
    if (commutative(x.op) && x.a > x.b) {
      long long s = x.a;
      x.a = x.b;
      x.b = s;
    }
    id[code[i].dst] = intern(t, x);
  }
  return id[cpu_kernel_result(k)];
}

static bool decide(const CpuKernel *k) {
  if (cpu_kernel_nparams(k) != 2 || cpu_kernel_nloops(k) > 0) return false; /* loops: not shown */
  int nv = cpu_kernel_nvregs(k);
  Table t = {NEW_ARRAY(Node, 2 * (size_t)nv + 2), 0};
  int *id = NEW_ARRAY(int, nv + 1);
  int r1 = canon(k, &t, id, 0, 1);
  int r2 = canon(k, &t, id, 1, 0);
  return r1 == r2;
}

bool cpu_kernel_decide_commutes(const CpuKernel *k) { return decide(k); }
