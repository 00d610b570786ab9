/* show.c: rev_show, the stages of grad f as text for ":show STAGE f"
   (reverse.h): the inlined source, Source UNF, Target UNF, the target
   term after UNF^-1, and the direct transform's term. */
#include "grad.h"
#include "d_rho.h"
#include "paths.h"
#include "../frontend/build.h"
#include "../frontend/subst.h"
#include "../frontend/term_print.h"

static const char *const rev_show_stages[] = {"source", "unf", "dunf", "target", "direct", NULL};

/* A set of names (open addressing on the text). */
typedef struct {
  const char **v;
  int n, cap;
} Names;

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool names_has(const Names *m, const char *s) {
  if (!m->cap) return false;
  for (size_t h = hash_str(s) & (size_t)(m->cap - 1); m->v[h]; h = (h + 1) & (size_t)(m->cap - 1))
    if (strcmp(m->v[h], s) == 0) return true;
  return false;
}

static void names_add(Names *m, const char *s) {
  if (2 * (m->n + 1) > m->cap) {
    Names o = *m;
    m->cap = o.cap ? o.cap * 2 : 64;
    m->n = 0;
    m->v = NEW_ARRAY(const char *, m->cap);
    for (int i = 0; i < o.cap; i++)
      if (o.v[i]) names_add(m, o.v[i]);
  }
  size_t h = hash_str(s) & (size_t)(m->cap - 1);
  while (m->v[h]) h = (h + 1) & (size_t)(m->cap - 1);
  m->v[h] = s;
  m->n++;
}

/* Gives x a name not used so far in the printed Def: its own, else
   NAME_2, NAME_3, ... */
static void give_name(Names *m, Sym *x) {
  const char *name = x->name;
  for (int k = 2; names_has(m, name); k++) name = una_sprintf("%s_%d", x->name, k);
  x->name = name;
  names_add(m, name);
}

static void rename_binders(Names *m, Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_LET) give_name(m, t->sym);
    if (t->kind == T_LETTUP || t->kind == T_LAM)
      for (int i = 0; i < t->nsyms; i++) give_name(m, t->syms[i]);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) rename_binders(m, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

/* "def NAME (params) : T = body", one let per line, every binder with a
   distinct name (a copy of body is renamed; params keep theirs). */
static char *def_text(const char *name, const Def *like, Term *body) {
  Term *copy = fe_copy(body);
  Names m = {0};
  for (int i = 0; i < like->nparams; i++) names_add(&m, like->params[i]->name);
  rename_binders(&m, copy);
  Def d = *like;
  d.name = name;
  d.body = copy;
  d.ret = copy->type;
  return fe_def_str_opts(&d, FE_PRINT_MULTILINE);
}

char *rev_show(const Def *f, const int *wrt, int nwrt, const char *stage) {
  int which = -1;
  for (int i = 0; rev_show_stages[i]; i++)
    if (strcmp(stage, rev_show_stages[i]) == 0) which = i;
  if (which < 0)
    fe_error(f->span, "unknown stage '%s' (expected source, unf, dunf, target or direct)", stage);
  Sym **ctx;
  int nctx, *wrt_ctx;
  Def *inl = rev_prepare(f, wrt, nwrt, &ctx, &nctx, &wrt_ctx);
  const char *gname = una_sprintf("grad_%s", f->name);
  switch (which) {
  case 0: return def_text(f->name, inl, inl->body);
  case 4: return def_text(gname, inl, rev_direct_gradient(ctx, nctx, wrt_ctx, nwrt, inl->body));
  default: break;
  }
  Unf *src = unf_of_term(ctx, nctx, inl->body);
  if (which == 1) return unf_str_opts(src, UNF_PRINT_LINES);
  Unf *d = rev_d_rho(src);
  if (which == 2) return unf_str_opts(d, UNF_PRINT_LINES);
  return def_text(gname, inl, rev_unf_gradient_top(ctx, nctx, wrt_ctx, nwrt, inl->body));
}
