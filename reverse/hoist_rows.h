/* hoist_rows.h: the rows of free matrices that an inner lambda of a map's
   body reads, read once per element at the body's top instead.

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
   of zeros. Equal indices of one matrix share one row. */
#ifndef UNA_REVERSE_HOIST_ROWS_H
#define UNA_REVERSE_HOIST_ROWS_H

#include "../frontend/ir/term.h"

/* The rows hoisted from a body: row[i] stands for matrix[i][index[i]]
   (the index as hoisted, which may fail; rev_hoist_safe_read reads it
   safely). */
typedef struct RevHoisted {
  int n;
  Sym **row;
  Sym **matrix;
  Term **index;
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

/* body with the hoisted rows bound to their safe reads. */
Term *rev_hoist_bind(const RevHoisted *h, Term *body);

#endif
