/* pipeline.c: the optimizer's pass list, run in order, round after round,
   until a round changes nothing (or the round bound is reached), with
   --dump-after=PASS printing the program after a named pass. */
#include "opt.h"

#include <string.h>

#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"
#include "../frontend/ir/term_print.h"
#include "passes.h"
#include "pe_util.h"

/* The pipeline, in order: partial evaluation (section 5.1) first, then the
   figure 12 rules. */
const OptPass opt_passes[] = {
    {"beta", opt_beta},       /* continuations used once inlined, β-reduction */
    {"forward", opt_forward}, /* let x = y / let x = c substituted forward */
    {"letnorm", opt_letnorm}, /* nested lets flattened, lets floated out */
    {"tuples", opt_tuples},   /* π_i ⟨...⟩, let (a, b) = (e1, e2), scalar replacement */
    {"dce", opt_dce},         /* dead lets whose right-hand side cannot raise */
    {"algebra", opt_algebra}, /* figure 12: ring laws, constant folding */
    {"arrays", opt_arrays},   /* figure 12: OnesLike / ZerosLike array rules */
    {"fusion", opt_fusion},   /* figure 12: map/map2 fusion */
    {"cse", opt_cse},         /* common subexpressions */
};
const int opt_npasses = (int)(sizeof opt_passes / sizeof opt_passes[0]);

/* Run once after the fixpoint, in order. */
const OptPass opt_final_passes[] = {
    {"sink", opt_sink}, /* single-use array lets moved to their use */
};
const int opt_nfinal_passes = (int)(sizeof opt_final_passes / sizeof opt_final_passes[0]);

#define DEFAULT_ROUNDS 20

const OptPass *opt_find_pass(const char *name) {
  for (int i = 0; i < opt_npasses; i++)
    if (strcmp(opt_passes[i].name, name) == 0) return &opt_passes[i];
  for (int i = 0; i < opt_nfinal_passes; i++)
    if (strcmp(opt_final_passes[i].name, name) == 0) return &opt_final_passes[i];
  return NULL;
}

/* Prints "-- after PASS" and the program (the Def when like is given,
   with body t). */
static void dump(const OptOptions *o, const char *pass, const Def *like, const Term *t) {
  FILE *out = o->dump ? o->dump : stderr;
  fprintf(out, "-- after %s\n", pass);
  if (like) {
    Def tmp = *like;
    tmp.body = (Term *)t;
    tmp.ret = t->type;
    fputs(fe_def_str_opts(&tmp, FE_PRINT_MULTILINE), out);
  } else {
    fe_term_print(out, t);
  }
  fputc('\n', out);
}

static bool dumps(const OptOptions *o, const char *pass) {
  return o->dump_after && (strcmp(o->dump_after, "all") == 0 || strcmp(o->dump_after, pass) == 0);
}

/* The pipeline on t, whose binders must be unique (opt_freshen); the
   passes' errors (a tree nested too deeply for the stack) end it early
   with the last complete result. */
static Term *run(const Term *t, const OptOptions *o, const Def *like, bool *any) {
  int rounds = o->max_rounds > 0 ? o->max_rounds : DEFAULT_ROUNDS;
  Term *volatile cur = (Term *)t;
  FeTry tr;
  if (fe_try(&tr)) {
    for (int round = 0; round < rounds; round++) {
      bool changed = false;
      for (int i = 0; i < opt_npasses; i++) {
        Term *next = opt_passes[i].run(cur);
        if (next != cur) changed = *any = true;
        if (dumps(o, opt_passes[i].name) && (round == 0 || next != cur)) dump(o, opt_passes[i].name, like, next);
        cur = next;
      }
      if (!changed) break;
    }
    for (int i = 0; i < opt_nfinal_passes; i++) {
      Term *next = opt_final_passes[i].run(cur);
      if (next != cur) *any = true;
      if (dumps(o, opt_final_passes[i].name)) dump(o, opt_final_passes[i].name, like, next);
      cur = next;
    }
    fe_untry(&tr);
  }
  return cur;
}

Term *opt_optimize(const Term *t, const OptOptions *o) {
  if (!o || !o->enabled) return (Term *)t;
  /* the passes assume unique binders: a fresh copy first */
  bool any = false;
  Term *r = run(opt_freshen(t, 0, NULL, NULL), o, NULL, &any);
  return any ? r : (Term *)t;
}

Def *opt_optimize_def(const Def *d, const OptOptions *o) {
  if (!o || !o->enabled) return (Def *)d;
  /* fresh Syms throughout (unique binders for the passes; assigning the
     result's slots leaves d's Syms alone) */
  Sym **params = NEW_ARRAY(Sym *, d->nparams + 1);
  for (int i = 0; i < d->nparams; i++) params[i] = fe_sym_new(d->params[i]->name, d->params[i]->type, d->params[i]->span);
  bool any = false;
  Term *body = run(opt_freshen(d->body, d->nparams, d->params, params), o, d, &any);
  if (!any) return (Def *)d;
  Def *r = fe_mk_def(d->name, d->span, d->nparams, params, body);
  r->ret = d->ret;
  return r;
}
