/* value.h: run-time values. Reals and booleans are unboxed; tuples and
   arrays are GC-allocated. An array of reals is a flat double buffer from
   GC_MALLOC_ATOMIC (never scanned); any other array (booleans, tuples,
   nested arrays) holds boxed Values. Arrays are immutable once built, so a
   view (shift1L/shift1R) may point into another array's buffer. A closure
   (only in target programs of the AD pipeline) is a LAM term with the frame
   it was created in, captured by reference. */
#ifndef UNA_VALUE_H
#define UNA_VALUE_H

#include "../frontend/ir/error.h"
#include "../frontend/ir/type.h"

typedef enum { V_REAL, V_BOOL, V_TUPLE, V_ARRAY, V_CLOSURE } ValueKind;

typedef struct Tuple Tuple;
typedef struct Array Array;
typedef struct Closure Closure;
struct Term; /* frontend/ir/term.h */

typedef struct Value {
  ValueKind kind;
  union {
    double r;
    bool b;
    Tuple *t;
    Array *a;
    Closure *c;
  } u;
} Value;

struct Tuple {
  int n;
  Value items[];
};

struct Array {
  size_t len;
  bool boxed; /* false: r holds len doubles; true: v holds len Values */
  double *r;  /* NULL while an unboxed array lives only on the GPU */
  Value *v;
  struct DevBuf *dev; /* unboxed: the copy on the GPU (backend/cuda); boxed
                         [[R]]: rows_flat's copy there, made by a matrix
                         product on the GPU (backend/cuda/gpu_blas.c) and
                         cleared with rows_flat (rows are never written in
                         place: docs/cpu.md); or NULL */
  size_t dev_off;     /* the index of element 0 in dev's buffer */
  bool whole;         /* unboxed: r is the buffer val_new_real_array made for
                         this array (not a view of another array, a row of a
                         matrix, a part of a larger buffer) */
  /* boxed [[R]] only: row 0's memory when the rows (all of its length)
     are consecutive there, found by the matrix products (backend/blas.c);
     NULL until then, or when they are not. A row replaced in place
     (val_array_set) clears it. Read and written atomically: threads may
     race to find it, and either finds the same. */
  const double *rows_flat;
};

/* Makes a's payload present on the host, copying it from the GPU the first
   time (backend/cuda/gpu_array.c); a no-op for host arrays. Every reader of
   a->r that may see a GPU result calls it first. */
void val_fetch(Array *a);
static inline void val_host(const Array *a) {
  if (!a->r && !a->boxed) val_fetch((Array *)a); /* the host copy is a cache: logically const */
}

static inline Value val_real(double r) {
  Value v;
  v.kind = V_REAL;
  v.u.r = r;
  return v;
}
static inline Value val_bool(bool b) {
  Value v;
  v.kind = V_BOOL;
  v.u.b = b;
  return v;
}
/* A function value: the LAM term lam and the frame (of the enclosing Def's
   activation) it was created in. Applying it stores the arguments in the
   frame slots of lam's parameters and evaluates lam's body in that frame;
   the frame is shared, not copied, which is correct because every binder
   of a Def has its own slot and the AD pipeline uses each continuation
   linearly, within the activation that created it. */
struct Closure {
  const struct Term *lam;
  struct Value *frame;
};

Value val_tuple(int n, const Value *items);
Value val_array(Array *a);
Value val_closure(const struct Term *lam, struct Value *frame);

/* Allocation of array payloads. Sizes are checked: a request too large for
   memory raises a located FeError at span s ("cannot allocate ..."). */

Array *val_new_real_array(size_t len, Span s);  /* uninitialised */
Array *val_new_boxed_array(size_t len, Span s); /* zeroed */
Array *val_view(const Array *a, size_t offset, size_t len);
/* Whether the reals of a (on the host) are the buffer made for a alone
   (Array.whole), an object of the collector's of their own. */
bool val_whole_buffer(const Array *a);
/* Gives the buffer of a, an unboxed array on the host that nothing will
   read again, back to the collector when it is a whole object of its own
   (not a view, a row of a matrix, or a part of a larger buffer), so that
   the next allocation of its size gets that memory, still in the cache
   (plan/release.c decides which arrays are dead). */
void val_give_back(Array *a);
/* How many buffers val_give_back has given back in this process (tests). */
size_t val_given_back(void);

/* An array of len elements of type elem, following the INVARIANT: unboxed
   (uninitialised doubles) when elem is R, else boxed (zeroed Values). */
Array *val_new_array_of(const Type *elem, size_t len, Span s);
/* The rows of the [[R]] a as one row-major buffer of a->len rows of k
   reals: row 0's memory when the rows are consecutive there (remembered
   in a->rows_flat), else a copy; NULL when a row is not k reals long or
   the copy cannot be made. */
const double *val_rows_flat(Array *a, size_t k);

/* An array of len elements with no payload: the value of a dead let's
   map that the plan runs as a check only (never read). */
Array *val_hollow_array(size_t len);

/* Raises "cannot allocate N elements (B bytes)" at s, with N and B written as
   reals (so that sizes beyond size_t can be reported too). */
_Noreturn void val_alloc_error(double n, double elem_size, Span s);

/* Element i of a (boxed or not) as a Value, and the reverse. a's payload
   must be on the host (val_host): the array builtins' arguments are. */
static inline Value val_array_get(const Array *a, size_t i) {
  return a->boxed ? a->v[i] : val_real(a->r[i]);
}
static inline void val_array_set(Array *a, size_t i, Value v) {
  if (a->boxed) {
    a->v[i] = v;
    a->rows_flat = NULL; /* reduce_by_index in place may replace a row */
    a->dev = NULL;
  } else {
    a->r[i] = v.u.r; /* a new array: always on the host */
  }
}

/* Value printing as LANGUAGE.md section 7: reals shortest round-trip,
   true/false, [1, 2, 3], (1, [2, 3]); a closure prints as <function>.
   val_print and val_to_string print every element (text that reads back,
   for tests and generated programs). */
void val_print(FILE *out, Value v);
char *val_to_string(Value v);

/* How a value is shown to a user. With all false (the default, zeroed),
   an array of more than VAL_PRINT_LIMIT scalars in all (counting every
   level; an empty array inside counts as one; each array in a tuple is
   judged by itself) is summarised as NumPy does: at each of its levels of
   more than 2 * VAL_PRINT_EDGE elements, the first and last VAL_PRINT_EDGE
   with "..." between: [0, 1, 2, ..., 9998, 9999, 10000]. all (--print-all)
   prints everything. */
typedef struct ValPrintOpts {
  bool all;
} ValPrintOpts;
#define VAL_PRINT_LIMIT 10000
#define VAL_PRINT_EDGE 3

void val_print_opts(FILE *out, Value v, ValPrintOpts o);
char *val_to_string_opts(Value v, ValPrintOpts o);

/* Deep equality (reals compared with ==, so nan != nan; closures are equal
   when they are the same LAM term in the same frame). */
bool val_equal(Value a, Value b);

#endif
