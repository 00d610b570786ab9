/* jt_map_any.c: the transpose Jacobian of map, map2 and map3 over any
   element types (nested arrays, tuples; the reals-only forms of the
   paper are jt_map.c and jt_map2.c). With e the body, x1..xk its
   parameters, z the cotangent of the result (one element per element):
     let W = map(k+1) (a1, .., ak, c. ∇_(x1..xk, fv) <c, e>[a/x]) A1 .. Ak z in
     ( sum over W of the fv components...,    -- per free variable
       map (t. t.i) W ... )                   -- cot A_i
   the vector-Jacobian product of the body at each element (<c, e> the
   inner product, c a constant for ∇), so e may return any type. With
   three arrays (four with z, and no map4), the map runs over the indices
   and reads each element: map (i. let a1 = A1[i] ... in let c = z[i] in
   ...) (iota (length A1)), unboxed in the kernels. */
#include "jt_prim.h"
#include "jt_util.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"


/* mapK (xs. e) A1 .. Ak over the arrays ops[0..k), e over lam's
   parameters. */
static Term *map_over(const RevJtPrim *p, const Term *lam, const Term *e) {
  Span s = p->j.span;
  int k = p->nops;
  Sym **xs = NEW_ARRAY(Sym *, k);
  for (int i = 0; i < k; i++) xs[i] = fe_mk_sym(lam->syms[i]->name, lam->syms[i]->type, s);
  Term *body = rev_jt_paste(s, e, k, lam->syms, xs);
  Term *mk[4] = {fe_mk_lam(s, k, xs, body)};
  for (int i = 0; i < k; i++) mk[1 + i] = rev_jt_use(p->ops[i]);
  Prim pr = k == 1 ? PRIM_MAP : k == 2 ? PRIM_MAP2 : PRIM_MAP3;
  return fe_mk_array_prim(s, pr, k + 1, mk);
}

/* The map over the operands (params) and z (c) computing body per element:
   map2 with one array, map3 with two, and with three (four with z, and no
   map4) a map over the indices that reads each element (in range: the
   arrays and z have the length of the first). */
static Term *over_elements(const RevJtPrim *p, Sym **params, Sym *c, Term *body) {
  Span s = p->j.span;
  int k = p->nops;
  if (k == 1) {
    Sym *ps[2] = {params[0], c};
    return rev_checked(fe_mk_map2(s, fe_mk_lam(s, 2, ps, body), rev_jt_use(p->ops[0]), rev_jt_use(p->z)));
  }
  if (k == 2) {
    Sym *ps[3] = {params[0], params[1], c};
    Term *mk[4] = {fe_mk_lam(s, 3, ps, body), rev_jt_use(p->ops[0]), rev_jt_use(p->ops[1]), rev_jt_use(p->z)};
    return rev_checked(fe_mk_array_prim(s, PRIM_MAP3, 4, mk));
  }
  Sym *i = fe_mk_sym("i", fe_ty_real(), s);
  Term *arrays[4] = {p->ops[0], p->ops[1], p->ops[2], p->z};
  Sym *xs[4] = {params[0], params[1], params[2], c};
  for (int m = 3; m >= 0; m--) {
    Term *ix[2] = {rev_jt_use(arrays[m]), fe_mk_var(s, i)};
    body = fe_mk_let(s, xs[m], rev_checked(fe_mk_array_prim(s, PRIM_INDEX, 2, ix)), body);
  }
  Term *n = fe_mk_length(s, rev_jt_use(p->ops[0]));
  return fe_mk_map(s, fe_mk_lam(s, 1, &i, body), fe_mk_array_prim(s, PRIM_IOTA, 1, &n));
}

/* Whether gather i reads a whole row of a matrix (hoist_rows.h), or a
   window of a vector (a slice). */
static bool is_row(const RevGathers *g, const RevJt *j, int i) {
  return g->r[i]->type->kind == TY_ARRAY && j->fv[g->read_fv[i]]->type->elem->kind == TY_ARRAY;
}
static bool is_window(const RevGathers *g, const RevJt *j, int i) {
  return g->r[i]->type->kind == TY_ARRAY && j->fv[g->read_fv[i]]->type->elem->kind == TY_REAL;
}

/* [], a row of no elements. */
static Term *empty_row(Span s) { return fe_mk_replicate(s, fe_mk_num(s, 0), fe_mk_num(s, 0)); }

/* Whether t mentions one of the variables xs[0..n). */
static bool mentions(const Term *t, Sym *const *xs, int n) {
  if (t->kind == T_VAR) {
    for (int i = 0; i < n; i++)
      if (t->sym == xs[i]) return true;
    return false;
  }
  for (int i = 0; i < t->nkids; i++)
    if (mentions(t->kids[i], xs, n)) return true;
  return false;
}

/* reduce_by_index acc (+) 0 (map (t. lo + t) (iota (length d))) d: the
   window cotangent d (a variable) added into acc from lo, in range by
   construction. */
static Term *add_from(Span s, Term *acc, Term *lo, Sym *d) {
  Sym *t = fe_mk_sym("t", fe_ty_real(), s);
  Term *n = fe_mk_length(s, fe_mk_var(s, d));
  Term *at = fe_mk_map(s, fe_mk_lam(s, 1, &t, fe_mk_add(s, lo, fe_mk_var(s, t))), fe_mk_array_prim(s, PRIM_IOTA, 1, &n));
  Term *rk[5] = {fe_mk_oplam(s, PRIM_ADD), acc, fe_mk_num(s, 0), at, fe_mk_var(s, d)};
  Term *add = fe_mk_array_prim(s, PRIM_REDUCE_BY_INDEX, 5, rk);
  add->b = true;
  return add;
}

/* if length a == 0 then 0_a else t: the cotangent of a whose reads were
   guarded (an empty a had none) */
static Term *unless_empty(Span s, Sym *a, Term *t) {
  Term *empty = fe_mk_op2(s, PRIM_EQ, fe_mk_length(s, fe_mk_var(s, a)), fe_mk_num(s, 0));
  return fe_mk_if(s, empty, fe_mk_zero_like(s, fe_mk_var(s, a)), t);
}

/* The cotangents D (windows', one per element) added into acc from the
   starts LO:
     let D = .. in let LO = .. in
     loop acc = acc0 for k < length D do
       let d = D[k] in let l = LO[k] in
       reduce_by_index acc (+) 0 (map (t. l + t) (iota (length d))) d */
static Term *window_cots(Span s, Term *acc0, Term *dcol, Term *los) {
  Sym *D = fe_mk_sym("D", dcol->type, s), *LO = fe_mk_sym("LO", los->type, s);
  Sym *acc = fe_mk_sym("acc", acc0->type, s), *kk = fe_mk_sym("k", fe_ty_real(), s);
  Sym *d = fe_mk_sym("d", dcol->type->elem, s), *l = fe_mk_sym("l", fe_ty_real(), s);
  Term *ixd[2] = {fe_mk_var(s, D), fe_mk_var(s, kk)}, *ixl[2] = {fe_mk_var(s, LO), fe_mk_var(s, kk)};
  Term *rd = fe_mk_array_prim(s, PRIM_INDEX, 2, ixd), *rl = fe_mk_array_prim(s, PRIM_INDEX, 2, ixl);
  rd->b = rl->b = true; /* k < length D = length LO */
  Term *add = add_from(s, fe_mk_var(s, acc), fe_mk_var(s, l), d);
  Term *body = fe_mk_let(s, d, rd, fe_mk_let(s, l, rl, add));
  Sym *ps[2] = {acc, kk};
  Term *lk[3] = {fe_mk_lam(s, 2, ps, body), acc0, fe_mk_length(s, fe_mk_var(s, D))};
  Term *loop = fe_mk_array_prim(s, PRIM_LOOP_FOR, 3, lk);
  return fe_mk_let(s, D, dcol, fe_mk_let(s, LO, los, loop));
}

/* The cotangent of the free matrix fv alone: the sum over the elements of
   ∇_fv <c, e>, a map of its own, so that the per-element gradient holds
   only what fv needs (a layer's weights: an outer product per element,
   which the optimizer turns into one matrix product over the batch). */
static Term *matrix_cot(const RevJtPrim *p, const Term *lam, Sym *fv) {
  Span s = p->j.span;
  int k = p->nops;
  RevJt jm = p->j;
  jm.fv = &fv;
  jm.nfv = 1;
  Sym **params = NEW_ARRAY(Sym *, k);
  bool *want = NEW_ARRAY(bool, k);
  for (int i = 0; i < k; i++) params[i] = fe_mk_sym(lam->syms[i]->name, lam->syms[i]->type, s);
  Sym *c = fe_mk_sym("c", p->z->type->elem, s);
  Term *vjp = rev_jt_vjp(&jm, lam, params, want, fe_mk_var(s, c));
  return rev_jt_gsum(s, over_elements(p, params, c, vjp), fe_mk_zero_like(s, fe_mk_var(s, fv)));
}

/* offs[r], the start of row r of a matrix among its rows laid end to end
   (r in range: a row the primal read, or the number of rows). */
static Term *row_start(Span s, Sym *offs, Term *r) {
  Term *ix[2] = {fe_mk_var(s, offs), r};
  Term *t = fe_mk_array_prim(s, PRIM_INDEX, 2, ix);
  t->b = true;
  return t;
}

/* The matrix m's cotangent from flat, its rows laid end to end, with
   offs = scanl (+) 0 (map (r. length r) m) (ragged rows too):
     let offs = ... in let flat = ... in
     map (r. flat[offs[r]:offs[r + 1]]) (iota (length m)) */
static Term *matrix_of_rows(Span s, Sym *m, Sym *offs, Term *flat) {
  Sym *row = fe_mk_sym("row", m->type->elem, s), *r = fe_mk_sym("r", fe_ty_real(), s);
  Sym *fl = fe_mk_sym("flat", flat->type, s);
  Term *lens = fe_mk_map(s, fe_mk_lam(s, 1, &row, fe_mk_length(s, fe_mk_var(s, row))), fe_mk_var(s, m));
  Term *starts = fe_mk_scanl(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), lens);
  Term *next = fe_mk_add(s, fe_mk_var(s, r), fe_mk_num(s, 1));
  Term *sk[3] = {fe_mk_var(s, fl), row_start(s, offs, fe_mk_var(s, r)), row_start(s, offs, next)};
  Term *slice = fe_mk_array_prim(s, PRIM_SLICE, 3, sk);
  slice->b = true;
  Term *n = fe_mk_length(s, fe_mk_var(s, m));
  Term *rows = fe_mk_map(s, fe_mk_lam(s, 1, &r, slice), fe_mk_array_prim(s, PRIM_IOTA, 1, &n));
  return fe_mk_let(s, offs, starts, fe_mk_let(s, fl, flat, rows));
}

Term *rev_jt_map_any(const RevJtPrim *p) {
  Span s = p->j.span;
  const Term *lam0 = p->t->kids[0];
  int k = p->nops;
  ASSERT(lam0->kind == T_LAM && lam0->nsyms == k && k >= 1 && k <= 3);
  /* the gathers from free arrays: their reads become parameters */
  RevGathers ga;
  bool gathers = rev_jt_gathers(&p->j, lam0, &ga);
  int nr = gathers ? ga.nreads : 0;
  Term **opc = NEW_ARRAY(Term *, k);
  Term **fvc = NEW_ARRAY(Term *, p->j.nfv > 0 ? p->j.nfv : 1);
  /* the free variables the shared vjp gives: not gathered, not matrices
     (those get their own map) */
  RevJt j = p->j;
  int *fv_at = NEW_ARRAY(int, p->j.nfv + 1); /* j.fv[m] is p->j.fv[fv_at[m]] */
  j.fv = NEW_ARRAY(Sym *, p->j.nfv + 1);
  j.nfv = 0;
  for (int m = 0; m < p->j.nfv; m++) {
    if (gathers && ga.gathered[m]) continue;
    if (!gathers && fe_type_is_real_matrix(p->j.fv[m]->type)) {
      fvc[m] = matrix_cot(p, lam0, p->j.fv[m]);
      continue;
    }
    fv_at[j.nfv] = m;
    j.fv[j.nfv++] = p->j.fv[m];
  }
  const Term *lam = lam0;
  if (gathers) {
    Sym **ps = NEW_ARRAY(Sym *, k + nr);
    for (int i = 0; i < k; i++) ps[i] = lam0->syms[i];
    for (int i = 0; i < nr; i++) ps[k + i] = ga.r[i];
    lam = fe_mk_lam(s, k + nr, ps, ga.body);
  }
  Sym **params = NEW_ARRAY(Sym *, k + nr);
  bool *want = NEW_ARRAY(bool, k + nr);
  for (int i = 0; i < k + nr; i++) {
    params[i] = fe_mk_sym(lam->syms[i]->name, lam->syms[i]->type, s);
    want[i] = i >= k || (p->active[i] && fe_type_has_reals(lam->syms[i]->type));
  }
  int ncomp = rev_jt_vjp_count(&j, k + nr, want);
  if (ncomp == 0) return rev_jt_prim_result(p, fvc, opc);
  Sym *c = fe_mk_sym("c", p->z->type->elem, s);
  Term *vjp = rev_jt_vjp(&j, lam, params, want, fe_mk_var(s, c));
  /* the reads, at their indices, before the vjp */
  for (int i = nr - 1; i >= 0; i--) {
    if (is_window(&ga, &p->j, i)) { /* a[lo : hi] */
      Term *sk[3] = {fe_mk_var(s, p->j.fv[ga.read_fv[i]]), rev_jt_paste(s, ga.index[i], k, lam0->syms, params),
                     rev_jt_paste(s, ga.index2[i], k, lam0->syms, params)};
      Term *win = fe_mk_array_prim(s, PRIM_SLICE, 3, sk);
      win->b = true; /* the primal's slice, or a hoisted window: in range */
      vjp = fe_mk_let(s, params[k + i], win, vjp);
      continue;
    }
    Term *ix[2] = {fe_mk_var(s, p->j.fv[ga.read_fv[i]]), rev_jt_paste(s, ga.index[i], k, lam0->syms, params)};
    Term *read = fe_mk_array_prim(s, PRIM_INDEX, 2, ix);
    read->b = true; /* the primal read there: in range */
    if (ga.index2[i]) {
      Term *ix2[2] = {read, rev_jt_paste(s, ga.index2[i], k, lam0->syms, params)};
      read = fe_mk_array_prim(s, PRIM_INDEX, 2, ix2);
      read->b = true;
    }
    /* a guarded read is made where the body made it (elsewhere its value
       is not used: 0) */
    if (ga.guard[i])
      read = fe_mk_if(s, rev_jt_replayed(fe_copy(rev_jt_paste(s, ga.guard[i], k, lam0->syms, params))), read,
                      is_row(&ga, &p->j, i) ? empty_row(s) : fe_mk_num(s, 0));
    vjp = fe_mk_let(s, params[k + i], read, vjp);
  }
  Term *w_rhs = over_elements(p, params, c, vjp);
  Sym *w = fe_mk_sym("W", w_rhs->type, s);
  int at = 0;
  for (int i = 0; i < k; i++)
    if (want[i]) opc[i] = rev_jt_column(s, w, ncomp, at++);
  /* the gathered arrays: the read cotangents added at their indices (a
     matrix's into its rows laid end to end, offs[e] + e2) */
  Sym **offs = NEW_ARRAY(Sym *, p->j.nfv > 0 ? p->j.nfv : 1);
  bool *guarded = NEW_ARRAY(bool, p->j.nfv > 0 ? p->j.nfv : 1);
  for (int i = 0; i < nr; i++) {
    if (is_row(&ga, &p->j, i) || is_window(&ga, &p->j, i)) continue;
    int m = ga.read_fv[i];
    Term *fv = fe_mk_var(s, p->j.fv[m]), *at_ix = (Term *)ga.index[i], *d = fvc[m];
    if (ga.index2[i]) {
      if (!offs[m]) offs[m] = fe_mk_sym("offs", fe_ty_array(fe_ty_real()), s);
      if (!d) d = fe_mk_replicate(s, row_start(s, offs[m], fe_mk_length(s, fv)), fe_mk_num(s, 0));
      at_ix = fe_mk_add(s, row_start(s, offs[m], at_ix), (Term *)ga.index2[i]);
    } else if (!d) {
      d = fe_mk_zero_like(s, fv);
    }
    /* a guarded read's cotangent (0 where the guard fails) goes to its
       index where the guard holds, else to index 0 (the indices computed
       only where the guard holds) */
    if (ga.guard[i]) {
      /* the primal evaluated the guard, and the index where it holds */
      at_ix = rev_jt_replayed(fe_copy(fe_mk_if(s, (Term *)ga.guard[i], at_ix, fe_mk_num(s, 0))));
      guarded[m] = true;
    }
    Term *rk[5] = {fe_mk_oplam(s, PRIM_ADD), d, fe_mk_num(s, 0), map_over(p, lam0, at_ix),
                   rev_jt_column(s, w, ncomp, at + i)};
    fvc[m] = fe_mk_array_prim(s, PRIM_REDUCE_BY_INDEX, 5, rk);
    fvc[m]->b = true; /* the primal read at these indices, one per element */
  }
  for (int m = 0; m < p->j.nfv; m++)
    if (offs[m]) {
      /* a matrix whose rows are all empty has no index 0 among its rows
         laid end to end either: no read was made, the rows are empty */
      if (guarded[m]) {
        Term *total = row_start(s, offs[m], fe_mk_length(s, fe_mk_var(s, p->j.fv[m])));
        Term *none = fe_mk_op2(s, PRIM_EQ, total, fe_mk_num(s, 0));
        fvc[m] = fe_mk_if(s, none, fe_mk_replicate(s, fe_mk_num(s, 0), fe_mk_num(s, 0)), fvc[m]);
      }
      fvc[m] = matrix_of_rows(s, p->j.fv[m], offs[m], fvc[m]);
    }
  /* index 0 is not an index of an empty array, which no guard let the
     primal read: its cotangent is the empty array (a matrix's rows laid
     end to end are tested above) */
  for (int m = 0; m < p->j.nfv; m++)
    if (guarded[m] && !offs[m]) fvc[m] = unless_empty(s, p->j.fv[m], fvc[m]);
  /* a matrix's rows read whole: each row's cotangent added to its row
     (after its elements' above); a guard is m's being nonempty
     (jt_gather.c), and an empty m gets no cotangent from rows */
  bool *row_guarded = NEW_ARRAY(bool, p->j.nfv > 0 ? p->j.nfv : 1);
  for (int i = 0; i < nr; i++) {
    if (!is_row(&ga, &p->j, i)) continue;
    int m = ga.read_fv[i];
    Term *fv = fe_mk_var(s, p->j.fv[m]), *at_ix = (Term *)ga.index[i];
    Term *d = fvc[m] ? fvc[m] : fe_mk_zero_like(s, fv);
    if (ga.guard[i]) {
      at_ix = rev_jt_replayed(fe_copy(fe_mk_if(s, (Term *)ga.guard[i], at_ix, fe_mk_num(s, 0))));
      row_guarded[m] = true;
    }
    Term *rk[5] = {rev_jt_gplus(s, fv->type->elem), d, empty_row(s), map_over(p, lam0, at_ix),
                   rev_jt_column(s, w, ncomp, at + i)};
    fvc[m] = fe_mk_array_prim(s, PRIM_REDUCE_BY_INDEX, 5, rk);
    fvc[m]->b = true; /* rows the primal read (or, guarded, m's rows), one per element */
  }
  for (int m = 0; m < p->j.nfv; m++)
    if (row_guarded[m]) fvc[m] = unless_empty(s, p->j.fv[m], fvc[m]);
  /* a vector's windows: each window's cotangent added from its start,
     one element after the other (a loop whose state is updated in place) */
  for (int i = 0; i < nr; i++)
    if (is_window(&ga, &p->j, i)) {
      int m = ga.read_fv[i];
      Term *fv = fe_mk_var(s, p->j.fv[m]), *acc0 = fvc[m] ? fvc[m] : fe_mk_zero_like(s, fv);
      Term *col = rev_jt_column(s, w, ncomp, at + i);
      if (mentions(ga.index[i], lam0->syms, k) || mentions(ga.index2[i], lam0->syms, k)) {
        fvc[m] = window_cots(s, acc0, col, map_over(p, lam0, (Term *)ga.index[i]));
        continue;
      }
      /* the same window for every element (a[j]: a prefix): the
         cotangents summed, then added once */
      Term *sk[3] = {fv, fe_copy(ga.index[i]), fe_copy(ga.index2[i])};
      Term *win = fe_mk_array_prim(s, PRIM_SLICE, 3, sk);
      win->b = true;
      Term *sum = rev_jt_gsum(s, col, fe_mk_zero_like(s, win));
      Sym *d = fe_mk_sym("d", sum->type, s);
      fvc[m] = fe_mk_let(s, d, sum, add_from(s, acc0, fe_copy(ga.index[i]), d));
    }
  /* the other free variables: sums over the elements */
  Term **rest = NEW_ARRAY(Term *, j.nfv + 1);
  RevJtPrim pj = *p;
  pj.j = j;
  rev_jt_prim_fv_sums(&pj, w, ncomp, at + nr, rest);
  for (int m = 0; m < j.nfv; m++) fvc[fv_at[m]] = rest[m];
  Term *r = rev_jt_prim_result(p, fvc, opc);
  return r ? fe_mk_let(s, w, w_rhs, r) : NULL;
}
