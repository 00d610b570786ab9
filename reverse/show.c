/* show.c: rev_show, the stages of grad f as text for ":show STAGE f"
   (reverse.h): the inlined source, Source UNF, Target UNF, the target
   term after UNF^-1, and the direct transform's term. */
#include "grad.h"
#include "d_rho.h"
#include "paths.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/term_print.h"

static const char *const rev_show_stages[] = {"source", "unf", "dunf", "target", "direct", NULL};

bool rev_show_def(const Def *f, const int *wrt, int nwrt, const char *stage, const char **name, Def **like,
                  Term **body) {
  bool source = strcmp(stage, "source") == 0, direct = strcmp(stage, "direct") == 0;
  if (!source && !direct && strcmp(stage, "target") != 0) return false;
  Sym **ctx;
  int nctx, *wrt_ctx;
  Def *inl = rev_prepare(f, direct ? REV_DIRECT : REV_UNF, wrt, nwrt, &ctx, &nctx, &wrt_ctx);
  *like = inl;
  *name = source ? f->name : una_sprintf("grad_%s", f->name);
  *body = source   ? inl->body
          : direct ? rev_direct_gradient(ctx, nctx, wrt_ctx, nwrt, inl->body)
                   : rev_unf_gradient_top(ctx, nctx, wrt_ctx, nwrt, inl->body);
  return true;
}

char *rev_show(const Def *f, const int *wrt, int nwrt, const char *stage) {
  int which = -1;
  for (int i = 0; rev_show_stages[i]; i++)
    if (strcmp(stage, rev_show_stages[i]) == 0) which = i;
  if (which < 0)
    fe_error(f->span, "unknown stage '%s' (expected source, unf, dunf, target or direct)", stage);
  Sym **ctx;
  int nctx, *wrt_ctx;
  Def *inl = rev_prepare(f, which == 4 ? REV_DIRECT : REV_UNF, wrt, nwrt, &ctx, &nctx, &wrt_ctx);
  const char *gname = una_sprintf("grad_%s", f->name);
  switch (which) {
  case 0: return fe_def_str_readable(f->name, inl, inl->body);
  case 4: return fe_def_str_readable(gname, inl, rev_direct_gradient(ctx, nctx, wrt_ctx, nwrt, inl->body));
  default: break;
  }
  Unf *src = unf_of_term(ctx, nctx, inl->body);
  if (which == 1) return unf_str_opts(src, UNF_PRINT_LINES);
  Unf *d = rev_d_rho(src);
  if (which == 2) return unf_str_opts(d, UNF_PRINT_LINES);
  return fe_def_str_readable(gname, inl, rev_unf_gradient_top(ctx, nctx, wrt_ctx, nwrt, inl->body));
}
