/* fission.h: matrix-vector products out of a map's function (fission.c). */
#ifndef UNA_OPT_FISSION_H
#define UNA_OPT_FISSION_H

#include "rw.h"

/* t a map or map2 whose function starts a matrix-vector product of an
   invariant matrix (or an elementwise map feeding one): `let Y = ... in`
   a map over one more array; NULL when it is not (fission.c). */
Term *opt_fission(OptRw *c, Term *t);

/* Whether the body t (a let chain) computes a matrix-vector product of
   the variable y (fusion.c keeps a map feeding y out of it). */
bool opt_feeds_product(const Term *t, const Sym *y);

#endif
