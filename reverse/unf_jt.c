/* unf_jt.c: the transpose Jacobians of figure 10 on UNF^-1's
   environments: J^T P for each Source UNF primitive P, applied to the
   cotangents of P's output (RevCot, the last entries) and adding to those
   of its operands; called by UNF^-1 (unf/to_term.c) through its hook
   whenever a continuation is applied.
     J^T var[G;i]   cot x_i += z
     J^T op[G]      cot a_j += d_j op(a..) * z     (reverse/partials.h)
     J^T pair       the components of z go to the components
     J^T proj       zeros for the hidden entries
     J^T pi_i[G;A]  cot t += (0, .., z, .., 0)
     J^T map, map2, reduce, foldl, if               (reverse/jt.h)
     J^T replicate  cot v += sum z
     J^T [e1..en]   cot e_j += z's element j
     J^T save       cot A += z
     J^T const, cst, comparisons, length, iota, rand: nothing. */
#include "unf_jt.h"
#include "jt_prim.h"
#include "jt_util.h"
#include "partials.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"

/* The name of the cotangent of an atom. */
static const char *cot_name(const Term *atom) {
  if (atom && atom->kind == T_VAR) return una_sprintf("d%s", atom->sym->name);
  return "d";
}

static void push_entry(RevCot *c, Term *t, Term *sp) {
  if (c->len == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 8;
    Term **v = NEW_ARRAY(Term *, c->cap), **p = NEW_ARRAY(Term *, c->cap);
    if (c->len) {
      memcpy(v, c->v, sizeof(Term *) * (size_t)c->len);
      memcpy(p, c->sp, sizeof(Term *) * (size_t)c->len);
    }
    c->v = v;
    c->sp = p;
  }
  c->v[c->len] = t;
  c->sp[c->len++] = sp;
}

void rev_cot_push(RevCot *c, Term *t) { push_entry(c, t, NULL); }

/* Pops the top entry as it is: its atom, or its pending term in *sp. */
static Term *pop_raw(RevCot *c, Term **sp) {
  ASSERT(c->len > 0);
  c->len--;
  *sp = c->sp[c->len];
  return c->v[c->len];
}

/* Binds the pending term of entry i, if any. */
static void flush(UnfTt *st, RevCot *c, Span s, int i) {
  if (!c->sp[i]) return;
  c->v[i] = unf_tt_bind(st, s, "d", c->sp[i]);
  c->sp[i] = NULL;
}

void rev_cot_flush(UnfTt *st, RevCot *c, Span s) {
  for (int i = 0; i < c->len; i++) flush(st, c, s, i);
}

static Term *cot_pop(UnfTt *st, RevCot *c, Span s) {
  Term *sp, *v = pop_raw(c, &sp);
  return sp ? unf_tt_bind(st, s, "d", sp) : v;
}

/* Whether entry i of the context in has no derivative. */
static bool konst(const UnfCtx *in, int i) { return unf_ctx_at(in, i)->konst; }

/* cot[i] += t (t of the entry's type, any term; NULL adds nothing); in is
   the context of env: an entry without derivative gets nothing. A sparse
   t (an index's reduce_by_index 0_a (+) 0 [i] [z]) is kept pending while
   the entry has no cotangent, and otherwise adds into the cotangent itself,
   which is then updated in place (plan/lower.c's ownership rule): k reads
   of an array cost O(k), not O(k n). */
static void cot_add_in(UnfTt *st, RevCot *c, Span s, const UnfCtx *in, const UnfEnv *env, int i, Term *t,
                       bool sparse) {
  if (!t || konst(in, i)) return;
  ASSERT(i >= 0 && i < c->len);
  const char *name = cot_name(unf_tt_env_atom(env, i));
  flush(st, c, s, i);
  if (!c->v[i]) {
    if (sparse)
      c->sp[i] = t;
    else
      c->v[i] = unf_tt_atomize(st, s, name, t);
    return;
  }
  if (sparse) {
    t->kids[1] = unf_tt_use(c->v[i]);
    c->v[i] = unf_tt_bind(st, s, name, t);
    return;
  }
  c->v[i] = unf_tt_atomize(st, s, name, rev_gadd(s, unf_tt_use(c->v[i]), t));
}

#define cot_add(st, c, s, env, i, t) cot_add_in(st, c, s, u->in, env, i, t, false)

/* z as a variable (the J^T builders want one). */
static Term *as_var(UnfTt *st, Span s, Term *z) {
  return z->kind == T_VAR ? z : unf_tt_bind(st, s, "z", z);
}

static bool is_num(const Term *t, double v) { return t->kind == T_NUM && t->num == v; }

/* Element j of the array z: z[j]. */
static Term *element(Span s, Term *z, int j) {
  Term *k[2] = {unf_tt_use(z), fe_mk_num(s, j)};
  Term *e = fe_mk_array_prim(s, PRIM_INDEX, 2, k);
  e->b = true; /* z has the literal's length */
  return e;
}

/* The free variables of u's lambdas (or branches) that get cotangents:
   distinct variables of ground type with a derivative. */
static int active_fv(const Unf *u, const UnfEnv *env, Sym ***fvp, int **fv_posp) {
  Sym **fv = NEW_ARRAY(Sym *, u->nfv > 0 ? u->nfv : 1);
  int *fv_pos = NEW_ARRAY(int, u->nfv > 0 ? u->nfv : 1);
  int nfv = 0;
  for (int i = 0; i < u->nfv; i++) {
    Term *a = unf_tt_env_atom(env, u->fv_pos[i]);
    if (a->kind != T_VAR || !fe_type_has_reals(a->type) || konst(u->in, u->fv_pos[i])) continue;
    bool dup = false;
    for (int k = 0; k < nfv && !dup; k++) dup = fv[k] == a->sym;
    if (dup) continue;
    fv[nfv] = a->sym;
    fv_pos[nfv] = u->fv_pos[i];
    nfv++;
  }
  *fvp = fv;
  *fv_posp = fv_pos;
  return nfv;
}


/* The transpose Jacobian of a generic prim node: its rule from the table
   of reverse/jt_prim.c on the term rebuilt over the atoms. */
static void jt_generic(UnfTt *st, const Unf *u, const UnfEnv *env, RevCot *c, Term *z) {
  Span s = u->span;
  Sym **fv;
  int *fv_pos;
  int nfv = active_fv(u, env, &fv, &fv_pos);
  const Term *t = u->term;
  int base = unf_ctx_len(u->base);
  Term **kids = NEW_ARRAY(Term *, t->nkids);
  Term **ops = NEW_ARRAY(Term *, u->n > 0 ? u->n : 1);
  bool *active = NEW_ARRAY(bool, u->n > 0 ? u->n : 1);
  for (int i = 0, k = 0; i < t->nkids; i++) {
    if (t->kids[i]->kind == T_LAM) {
      kids[i] = unf_tt_subst_fv(u, env, t->kids[i]);
      continue;
    }
    ops[k] = unf_tt_env_atom(env, base + k);
    active[k] = !konst(u->in, base + k) && fe_type_has_reals(ops[k]->type);
    kids[i] = unf_tt_use(ops[k]);
    k++;
  }
  if (t->kind == T_CALL) {
    Term *r = rev_jt_call(s, t->def, ops, active, u->n, as_var(st, s, z));
    if (!r) return;
    int ncomp = 0;
    for (int k = 0; k < u->n; k++) ncomp += active[k];
    Term **parts = NEW_ARRAY(Term *, ncomp);
    unf_tt_bind_parts(st, s, "g", r, ncomp, parts);
    for (int k = 0, m = 0; k < u->n; k++)
      if (active[k]) cot_add(st, c, s, env, base + k, unf_tt_use(parts[m++]));
    return;
  }
  const RevUnfJt *uj = st->jt_ud;
  RevJtPrim p = {{s, fv, nfv, uj->nabla, uj->ud}, fe_term_prim(s, t->type, t->prim, t->nkids, kids), ops, active,
                 u->n, as_var(st, s, z)};
  RevJtPrimRule rule = rev_jt_prim_rule(u->prim);
  ASSERT(rule);
  Term *r = rule(&p);
  if (!r) return;
  int ncomp = nfv;
  for (int k = 0; k < u->n; k++) ncomp += active[k];
  if (u->prim == PRIM_INDEX && ncomp == 1 && r->kind == T_PRIM && r->prim == PRIM_REDUCE_BY_INDEX) {
    cot_add_in(st, c, s, u->in, env, base, r, true); /* sparse */
    return;
  }
  Term **parts = NEW_ARRAY(Term *, ncomp);
  unf_tt_bind_parts(st, s, "g", r, ncomp, parts);
  for (int k = 0; k < nfv; k++) cot_add(st, c, s, env, fv_pos[k], unf_tt_use(parts[k]));
  for (int k = 0, m = nfv; k < u->n; k++)
    if (active[k]) cot_add(st, c, s, env, base + k, unf_tt_use(parts[m++]));
}

/* The transpose Jacobian of a combinator or if: the cotangents of the
   free variables of its lambda (or branches) and of its operands. */
static void jt_combinator(UnfTt *st, const Unf *u, const UnfEnv *env, RevCot *c, Term *z) {
  Span s = u->span;
  Sym **fv;
  int *fv_pos;
  int nfv = active_fv(u, env, &fv, &fv_pos);
  const RevUnfJt *uj = st->jt_ud;
  RevJt j = {s, fv, nfv, uj->nabla, uj->ud};
  Term *zv = as_var(st, s, z);
  int nin = 0;
  Term *r = NULL;
  switch (u->kind) {
  case U_MAP:
    nin = 1;
    r = rev_jt_map(&j, unf_tt_subst_fv(u, env, u->term), unf_tt_operand(u, env, 0), unf_tt_use(zv));
    break;
  case U_MAP2:
    nin = 2;
    r = rev_jt_map2(&j, unf_tt_subst_fv(u, env, u->term), unf_tt_operand(u, env, 0), unf_tt_operand(u, env, 1),
                    unf_tt_use(zv));
    break;
  case U_REDUCE:
  case U_FOLDL:
    nin = 2;
    r = (u->kind == U_REDUCE ? rev_jt_reduce : rev_jt_foldl)(
        &j, unf_tt_subst_fv(u, env, u->term), unf_tt_operand(u, env, 0), unf_tt_operand(u, env, 1), unf_tt_use(zv));
    break;
  case U_IF:
    if (nfv == 0) return;
    r = rev_jt_if(&j, unf_tt_operand(u, env, 0), unf_tt_subst_fv(u, env, u->term->kids[1]),
                  unf_tt_subst_fv(u, env, u->term->kids[2]), unf_tt_use(zv));
    break;
  default: UNREACHABLE();
  }
  int ncomp = nfv + nin;
  Term **parts = NEW_ARRAY(Term *, ncomp);
  unf_tt_bind_parts(st, s, "g", r, ncomp, parts);
  for (int k = 0; k < nfv; k++) cot_add(st, c, s, env, fv_pos[k], unf_tt_use(parts[k]));
  int base = unf_ctx_len(u->base);
  for (int k = 0; k < nin; k++) cot_add(st, c, s, env, base + k, unf_tt_use(parts[nfv + k]));
}

/* J^T u (u a Source UNF primitive, env the values of its input) on the
   cotangents c of its output. */
void rev_unf_jt_apply(UnfTt *st, const Unf *u, const UnfEnv *env, void *cot) {
  RevCot *c = cot;
  Span s = u->span;
  ASSERT(c->len == unf_ctx_len(u->out));
  int base = unf_ctx_len(u->base);
  if (u->kind == U_PROJ) {
    int n3 = u->n;
    Term **keep = NEW_ARRAY(Term *, n3 > 0 ? n3 : 1);
    Term **keep_sp = NEW_ARRAY(Term *, n3 > 0 ? n3 : 1);
    for (int i = n3 - 1; i >= 0; i--) keep[i] = pop_raw(c, &keep_sp[i]);
    for (int i = 0; i < u->index; i++) rev_cot_push(c, NULL);
    for (int i = 0; i < n3; i++) push_entry(c, keep[i], keep_sp[i]);
    ASSERT(c->len == unf_ctx_len(u->in));
    return;
  }
  if (u->kind == U_VAR) { /* a copy: its cotangent, pending or not, goes to the entry */
    Term *sp, *zv = pop_raw(c, &sp);
    if (sp)
      cot_add_in(st, c, s, u->in, env, u->index, sp, true);
    else if (zv)
      cot_add(st, c, s, env, u->index, unf_tt_use(zv));
    return;
  }
  Term *z = cot_pop(st, c, s);
  if (u->kind == U_PAIR) {
    Term **parts = NEW_ARRAY(Term *, u->n);
    if (z) unf_tt_bind_parts(st, s, "dp", unf_tt_use(z), u->n, parts);
    for (int i = 0; i < u->n; i++) rev_cot_push(c, z ? parts[i] : NULL);
    ASSERT(c->len == unf_ctx_len(u->in));
    return;
  }
  ASSERT(c->len == unf_ctx_len(u->in));
  if (!z) return; /* J^T is linear: nothing to add */
  switch (u->kind) {
  case U_CONST:
  case U_CST:
  case U_NDOP: return;
  case U_OP: {
    Term **args = NEW_ARRAY(Term *, u->n);
    for (int i = 0; i < u->n; i++) args[i] = unf_tt_operand(u, env, i);
    for (int i = 0; i < u->n; i++) {
      Term *d = rev_partial(s, u->prim, i, args);
      if (is_num(d, 0)) continue; /* floor, neg's constant parts: exactly 0 */
      Term *t = is_num(d, 1)    ? unf_tt_use(z)
                : is_num(d, -1) ? fe_mk_op1(s, PRIM_NEG, unf_tt_use(z))
                                : fe_mk_mul(s, d, unf_tt_use(z));
      cot_add(st, c, s, env, base + i, t);
    }
    return;
  }
  case U_PI: {
    Term *tup = unf_tt_operand(u, env, 0);
    const Type *tt = tup->type;
    Term **items = NEW_ARRAY(Term *, tt->n);
    for (int i = 0; i < tt->n; i++)
      items[i] = i == u->index ? unf_tt_use(z) : fe_mk_zero_like(s, fe_mk_proj(s, unf_tt_use(tup), i));
    cot_add(st, c, s, env, base, fe_mk_tuple(s, tt->n, items));
    return;
  }
  case U_MAP:
  case U_MAP2:
  case U_REDUCE:
  case U_FOLDL:
  case U_IF: jt_combinator(st, u, env, c, z); return;
  case U_PRIM: jt_generic(st, u, env, c, z); return;
  case U_REPLICATE: {
    Term *v = unf_tt_operand(u, env, 1);
    Term *zero = v->type->kind == TY_REAL ? fe_mk_num(s, 0) : fe_mk_zero_like(s, v);
    cot_add(st, c, s, env, base + 1, rev_jt_gsum(s, unf_tt_use(z), zero));
    return;
  }
  case U_ARRAY:
    for (int i = 0; i < u->n; i++) cot_add(st, c, s, env, base + i, element(s, z, i));
    return;
  case U_SAVE: cot_add(st, c, s, env, base, unf_tt_use(z)); return;
  default: break;
  }
  UNREACHABLE();
}
