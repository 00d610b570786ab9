/* print_oracle.c: printed derivatives read back (print_oracle.h). */
#include "print_oracle.h"

#include <math.h>
#include <stdio.h>

#include "../../backend/eval.h"
#include "../../frontend/check.h"
#include "../../frontend/ir/error.h"
#include "../../frontend/ir/type.h"
#include "../../frontend/repl/session.h"
#include "compare.h"

/* A session with the prelude (run() captures what it prints). */
typedef struct Sess {
  Session *s;
} Sess;

static Sess *sess_new(void) {
  Sess *x = NEW(Sess);
  x->s = fe_session_new();
  x->s->check_passes = true;
  fe_session_load_prelude(x->s);
  return x;
}

/* Runs text in x; its output into *out, its errors into *err (either may
   be NULL). Returns true when no error occurred. */
static bool run(Sess *x, const char *text, char **out, char **err) {
  char *o = NULL, *e = NULL;
  size_t no = 0, ne = 0;
  FILE *fo = open_memstream(&o, &no), *fe = open_memstream(&e, &ne);
  x->s->out = fo;
  x->s->err = fe;
  bool ok = fe_session_run_text(x->s, "<fuzz>", text, strlen(text), false);
  fclose(fo);
  fclose(fe);
  x->s->out = stdout;
  x->s->err = stderr;
  if (out) *out = una_strndup(o, no);
  if (err) *err = una_strndup(e, ne);
  free(o);
  free(e);
  return ok;
}

/* d (a def of x's session) called on args: true and *v, or false and *err. */
static bool call(Sess *x, Def *d, const Value *args, Value *v, char **err) {
  FeTry t;
  if (fe_try(&t)) {
    *v = cpu_call(fe_session_runnable(x->s, d), args);
    fe_untry(&t);
    return true;
  }
  *err = fe_error_text(t.err);
  return false;
}

/* `def ref_NAME (params of p) : T = OP f p1 ... pk`: the operator on f,
   with the printed def's own parameters and result type. */
static char *reference(const Def *p, const char *op) {
  char *s = una_sprintf("def ref_%s", p->name);
  char *call_args = "";
  for (int i = 0; i < p->nparams; i++) {
    s = una_sprintf("%s (%s: %s)", s, p->params[i]->name, fe_type_str(p->params[i]->type));
    call_args = una_sprintf("%s %s", call_args, p->params[i]->name);
  }
  return una_sprintf("%s : %s = %s f%s\n", s, fe_type_str(p->ret), op, call_args);
}

/* The arguments of the printed def p at a point of f (whose nf
   parameters are typed fts): f's, then (jvp) a tangent per parameter with
   reals, in order, or (vjp) the cotangent of f's R: values of the point
   itself, of the same types. NULL when a type does not match. */
static Value *arguments(const Def *p, const Value *point, const Type *const *fts, int nf) {
  Value *a = NEW_ARRAY(Value, p->nparams + 1);
  int next = 0; /* the next parameter of f with reals */
  for (int i = 0; i < p->nparams; i++) {
    const Type *t = p->params[i]->type;
    if (i < nf) {
      a[i] = point[i];
      continue;
    }
    while (next < nf && !fe_type_has_reals(fts[next])) next++;
    if (next < nf && fe_type_eq(fts[next], t)) {
      a[i] = point[next++];
    } else if (t->kind == TY_REAL) {
      a[i] = val_real(0.5);
    } else {
      return NULL;
    }
  }
  return a;
}

static const char *const OPS[] = {"grad", "jvp", "vjp"};

/* One operator: its printed program read back beside f and compared with
   the operator at the points. */
static char *check_op(Sess *a, Sess *b, const char *op, Value *const *points, int npoints, long *compared) {
  char *out, *err;
  long internal0 = fe_internal_errors();
  bool ok = run(a, una_sprintf(":%s f\n", op), &out, &err);
  if (fe_internal_errors() != internal0) return una_sprintf("print: :%s f raised an internal error: %s", op, err);
  if (!ok) return NULL; /* a located error (a construct not differentiable): the gradient oracle's to judge */
  Def *f = fe_env_find_def(a->s->env, "f");
  const Type **fts = NEW_ARRAY(const Type *, f->nparams + 1);
  for (int i = 0; i < f->nparams; i++) fts[i] = f->params[i]->type;
  /* read back in the other session, beside f, with the reference */
  if (!run(b, out, NULL, &err))
    return una_sprintf("print: the program printed by :%s f does not read back: %s\n%s", op, err, out);
  Def *pd = fe_env_find_def(b->s->env, una_sprintf("%s_f", op));
  if (!pd) return una_sprintf("print: :%s f printed no def %s_f:\n%s", op, op, out);
  char *ref = reference(pd, op);
  if (!run(b, ref, NULL, &err)) return una_sprintf("print: the reference %sdoes not check: %s", ref, err);
  Def *rd = fe_env_find_def(b->s->env, una_sprintf("ref_%s_f", op));
  for (int k = 0; k < npoints; k++) {
    Value *args = arguments(pd, points[k], fts, f->nparams);
    if (!args) continue;
    Value v, w;
    char *ve = NULL, *we = NULL;
    bool vo = call(b, pd, args, &v, &ve), wo = call(b, rd, args, &w, &we);
    if (!vo || !wo) {
      if (vo != wo)
        return una_sprintf("print: the printed %s_f %s; %s f %s\n%s", op, vo ? "runs" : una_sprintf("raises %s", ve), op,
                           wo ? "runs" : una_sprintf("raises %s", we), out);
      continue;
    }
    if (!fz_close_values(w, v, fmax(1, fz_max_abs(w))))
      return una_sprintf("print: the printed %s_f gives %s; %s f gives %s\n%s", op, val_to_string(v), op,
                         val_to_string(w), out);
    (*compared)++;
  }
  return NULL;
}

char *fz_print_check(const char *text, Value *const *points, int npoints, long *compared) {
  /* a prints, b reads back: f defined in both */
  Sess *a = sess_new(), *b = sess_new();
  char *err;
  if (!run(a, text, NULL, &err)) return una_sprintf("print: the program does not load in a session: %s", err);
  run(b, text, NULL, NULL);
  for (int i = 0; i < 3; i++) {
    char *rep = check_op(a, b, OPS[i], points, npoints, compared);
    if (rep) return rep;
  }
  /* the other commands on f: no internal error */
  long internal0 = fe_internal_errors();
  run(a, ":type f\n:show source f\n:show unf f\n:show dunf f\n:show target f\n:show grad f\n:show direct f\n"
         ":show unf f --dot\n",
      NULL, &err);
  if (fe_internal_errors() != internal0) return una_sprintf("print: a command on f raised an internal error: %s", err);
  return NULL;
}
