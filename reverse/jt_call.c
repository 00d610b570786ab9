/* jt_call.c: the transpose Jacobian of a call that grad kept (modular
   differentiation, reverse/grad.c): the callee's vector-Jacobian product
   with respect to the active arguments, vjp_NAME, derived once per
   (callee, active arguments) and called here with the arguments and the
   cotangent of the result. The callee's forward pass runs again inside
   vjp_NAME (the call's own value was computed by the forward pass of the
   caller). */
#include "jt_prim.h"
#include "reverse.h"
#include "../frontend/ir/build.h"

Term *rev_jt_call(Span s, const Def *g, Term **ops, const bool *active, int nops, Term *z) {
  ASSERT(nops == g->nparams);
  int *wrt = NEW_ARRAY(int, nops > 0 ? nops : 1), nwrt = 0;
  for (int k = 0; k < nops; k++)
    if (active[k]) wrt[nwrt++] = k;
  if (nwrt == 0) return NULL;
  Def *v = rev_vjp(g, wrt, nwrt, REV_UNF);
  Term **args = NEW_ARRAY(Term *, nops + 1);
  for (int k = 0; k < nops; k++) args[k] = rev_jt_use(ops[k]);
  args[nops] = rev_jt_use(z);
  Term *c = fe_term_kids(s, T_CALL, v->ret, nops + 1, args);
  c->def = v;
  return c;
}
