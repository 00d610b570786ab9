/* hoist_rows.h: the rows of free matrices (and the windows of free
   vectors) that an inner lambda of a map's body reads, read once per
   element at the body's top instead.

   In map (i. sum (map (j. m[i, j] * x[j]) (iota (length x)))) (iota n)
   the inner map reads row i of the free matrix m at each j: to the map's
   gathers (jt_gather.c) that is a use of m in an inner lambda, whose
   cotangent would be a whole matrix per element (n x n x k work). With
   the row read once at the top,
     let row = m[i] in sum (map (j. row[j] * x[j]) (iota (length x)))
   the outer map gathers rows (its cotangent: each row's cotangent added
   at its index, O(n k) in all), and the inner map gathers from row.

   A read m[e] (of an element m[e][e2] or of a whole row) in an inner
   lambda (a map's, a loop's) is hoisted when e is computed from the
   body's parameters, its free variables and the body's own lets outside
   inner lambdas (expanded), with arithmetic that cannot fail (+ - * neg
   min max floor abs, numbers, length of a variable). The inner lambda may
   run no time at all, where the primal read nothing: the hoisted read
   never fails,
     let row = if length m == 0 then [] else
               m[if 0 <= e && e < length m && floor e == e then e else 0]
   and the rows it reads where the inner lambda does not get a cotangent
   of zeros. Equal indices of one matrix share one row.

   A free vector's reads a[base + j] (and a[j] when it is read so too: a
   filter's weights, read whole by every element, stay the inner
   lambda's) in an inner lambda whose
   index j runs over [0, n) (a for loop's counter, the parameter of a map
   over iota n), base and n hoistable as above, read a window instead:
     let lo = .. in let win = a[lo : hi] in ... win[base + j - lo] ...
   with lo and hi (rev_hoist_window_lo/hi) never failing and holding every
   read the primal made. The map then gathers windows (jt_gather.c): each
   element's window cotangent, of n elements, is added into a from its
   start (jt_map_any.c), O(n) per element instead of a whole cotangent of
   a (a convolution's gradient). */
#ifndef UNA_REVERSE_HOIST_ROWS_H
#define UNA_REVERSE_HOIST_ROWS_H

#include "../frontend/ir/term.h"

/* The rows and windows hoisted from a body. A row (count[i] NULL):
   row[i] stands for matrix[i][index[i]] (the index as hoisted, which may
   fail; rev_hoist_safe_read reads it safely). A window: row[i] stands for
   matrix[i][lo : hi] (a vector), lo[i] for its start, whose reads in the
   inner lambda are row[i][e - lo[i]]. */
typedef struct RevHoisted {
  int n;
  Sym **row;
  Sym **matrix;
  Term **index;
  Term **count;
  Sym **lo;
} RevHoisted;

/* body (of a lambda whose free arrays of interest are fv[0..nfv)) with
   such rows replaced by their variables, free in it (h says which);
   body itself when there is none. */
Term *rev_hoist_rows(const Term *body, Sym *const *fv, int nfv, RevHoisted *h);

/* The safe index of hoisted row i,
     if 0 <= e && e < length m && floor e == e then e else 0
   (an index of m when m is not empty), and the safe read of it,
     if length m == 0 then [] else m[that index] */
Term *rev_hoist_safe_index(Span s, const RevHoisted *h, int i);
Term *rev_hoist_safe_read(Span s, const RevHoisted *h, int i);

/* A window's bounds, which never fail: with base its index[i] and n its
   count[i], and whole(x) = floor x == x && x - x == 0,
     lo = if whole base then max 0 (min (length a) base) else 0
     hi = if whole base && whole n then max lo (min (length a) (base + n)) else lo
   so that 0 <= lo <= hi <= length a, and every read a[base + j], j in
   [0, n), that is in bounds is win[base + j - lo]. */
Term *rev_hoist_window_lo(Span s, const RevHoisted *h, int i);
Term *rev_hoist_window_hi(Span s, const RevHoisted *h, int i, Term *lo);

/* body with the windows' starts bound (lo[i] = rev_hoist_window_lo):
   the inner lambdas read them. */
Term *rev_hoist_bind_starts(const RevHoisted *h, Term *body);

/* body with the hoisted rows bound to their safe reads and the windows
   to their slices a[lo : hi] (inside rev_hoist_bind_starts). */
Term *rev_hoist_bind(const RevHoisted *h, Term *body);

#endif
