/* session.c: runs program text item by item (def, let, expression, command)
   against one environment, printing values and located errors. */
#include "session.h"
#include "../../backend/metered.h"
#include "../../backend/eval.h"
#include "../../backend/value.h"
#include "../../backend/cuda/gpu_eval.h"
#include "../../backend/cuda/launch.h"
#include "../../backend/plan/plan.h"
#include "../../optimizer/cost.h"
#include "../../optimizer/program.h"
#include "../../derive/derive.h"
#include "../../reverse/reverse.h"
#include "../ir/term_dot.h"
#include "../ir/term_print.h"
#include <errno.h>
#include <time.h>

extern const char una_prelude_text[]; /* gen/prelude.c, from prelude/prelude.una */

/* :load may nest (a file loading a file); deeper than this is a cycle. */
#define MAX_LOAD_DEPTH 64

const FeCommandInfo fe_commands[] = {
    {"help", "", "lists these commands"},
    {"quit", "", "ends the session (a script stops here, successfully)"},
    {"load", "FILE", "runs the script FILE into the session"},
    {"echo", "TEXT", "prints TEXT (a label for the output of a script)"},
    {"type", "e", "prints the type of e (an expression or a function name)"},
    {"time", "e", "prints the value of e, then how long evaluating it took"},
    {"cost", "e", "prints the value of e, then its cost: MOVES, ADDS, MULTS, NLOPS (figure 11)"},
    {"device", "[cpu|gpu|auto]", "shows or sets where arrays live and array builtins run"},
    {"plan", "e", "prints the execution plan of e: its host program, array kernels and fusions"},
    {"cuda", "e", "prints the CUDA C kernels that evaluating e on the GPU compiles (no GPU needed)"},
    {"grad", "f", "prints the optimized gradient of f as a Una definition, def grad_f"},
    {"jvp", "f", "prints the optimized forward derivative of f, def jvp_f (points, tangents)"},
    {"vjp", "f", "prints the optimized vector-Jacobian product of f, def vjp_f (points, cotangent)"},
    {"show", "STAGE f", "prints grad f at a stage: source, unf, dunf, target, grad or direct (--dot: as a graph)"},
    {NULL, NULL, NULL},
};

/* Makes a session on the CPU printing to stdout and stderr (see session.h). */
Session *fe_session_new(void) {
  Session *s = NEW(Session);
  s->env = fe_env_new();
  s->device = FE_DEVICE_CPU;
  s->optimize = true;
  s->out = stdout;
  s->err = stderr;
  return s;
}

/* Prints a located error after everything already written to s->out. */
static void report(Session *s, FeError e) {
  fflush(s->out);
  fe_error_print(s->err, e);
}

/* Prints a note (not an error) to s->err, in order with s->out. */
static void note(Session *s, const char *prefix, const char *msg) {
  fflush(s->out);
  fprintf(s->err, "%s%s\n", prefix, msg);
  fflush(s->err);
}

/* Sets s->device from "cpu", "gpu" or "auto". The GPU needs a driver, a
   device and NVRTC (gpu_available); without them the session stays on (or
   auto picks) the CPU and says why. */
bool fe_session_set_device(Session *s, const char *name, const char *prefix) {
  bool gpu = strcmp(name, "gpu") == 0, aut = strcmp(name, "auto") == 0;
  if (strcmp(name, "cpu") == 0) {
    s->device = FE_DEVICE_CPU;
    return true;
  }
  if (!gpu && !aut) return false;
  const char *why = NULL;
  if (gpu_available(&why)) {
    s->device = FE_DEVICE_GPU;
    return true;
  }
  if (gpu)
    note(s, prefix, una_sprintf("%s; staying on the CPU", why));
  else
    note(s, prefix, una_sprintf("no usable CUDA GPU (%s); using the CPU", why));
  s->device = FE_DEVICE_CPU;
  return true;
}

/* Calls d on the session's device (see session.h). */
Value fe_session_call(Session *s, const Def *d, const Value *args) {
  if (s->device != FE_DEVICE_GPU) return cpu_call(d, args);
  FeTry t;
  if (fe_try(&t)) {
    Value v = gpu_call(d, args);
    fe_untry(&t);
    return v;
  }
  if (!gpu_available(NULL)) s->device = FE_DEVICE_CPU;
  fe_raise(t.err);
}

/* Reads a whole file into GC memory (NUL-terminated; *len excludes the NUL).
   Returns NULL with errno set when it cannot be read. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = GC_MALLOC_ATOMIC(cap);
  if (!buf) una_out_of_memory("reading a file");
  for (;;) {
    if (n + 1 >= cap) {
      cap *= 2;
      buf = GC_REALLOC(buf, cap);
      if (!buf) una_out_of_memory("reading a file");
    }
    size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    int e = errno ? errno : EIO;
    fclose(f);
    errno = e;
    return NULL;
  }
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* A heap copy of a value, for Global.value. */
static Value *boxed_value(Value v) {
  Value *p = NEW(Value);
  *p = v;
  return p;
}

/* The printed type of a def: "R -> [R] -> R", or the result type when it
   has no parameters. */
static char *def_type_str(const Def *d) {
  if (d->nparams == 0) return fe_type_str(d->ret);
  const Type **ps = NEW_ARRAY(const Type *, d->nparams);
  for (int i = 0; i < d->nparams; i++)
    ps[i] = d->params[i]->type;
  return fe_type_str(fe_ty_fun(d->nparams, ps, d->ret));
}

/* Prints a value on its own line, a large array summarised unless
   s->print_all. (s->out is flushed before any error and at the end of each
   run, so that output and errors keep their order.) */
static void print_value(Session *s, Value v) {
  val_print_opts(s->out, v, (ValPrintOpts){.all = s->print_all});
  fputc('\n', s->out);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A command's argument as plain words (for :help, :quit, :device and
   :load): a "--" comment (at the start or after a blank) and the blanks
   around it are dropped. A "quoted" file name keeps any "--" inside it. */
static char *word_arg(const Item *it) {
  const char *a = it->arg ? it->arg : "";
  size_t n = strlen(a), end = n;
  size_t from = 0;
  if (a[0] == '"') {
    const char *close = strchr(a + 1, '"');
    from = close ? (size_t)(close - a) + 1 : n;
  }
  for (size_t i = from; i + 1 < n; i++)
    if (a[i] == '-' && a[i + 1] == '-' && (i == 0 || a[i - 1] == ' ' || a[i - 1] == '\t')) {
      end = i;
      break;
    }
  while (end > 0 && (a[end - 1] == ' ' || a[end - 1] == '\t' || a[end - 1] == '\r'))
    end--;
  return una_strndup(a, end);
}

/* Parses a command's argument text as one expression, located where the
   argument starts. */
static Term *parse_arg(const Item *it, const char *file) {
  if (!word_arg(it)[0]) fe_error(it->span, "':%s' needs an expression", it->name);
  Span at = it->arg_span;
  if (!at.file) at.file = file;
  return fe_parse_expr(at.file, it->arg, strlen(it->arg), at.line, at.col);
}

/* The file name of a :load argument: the text, or a "quoted" string. */
static char *load_path(const Item *it, const char *a) {
  size_t n = strlen(a);
  if (n >= 2 && a[0] == '"' && a[n - 1] == '"') return una_strndup(a + 1, n - 2);
  if (n == 0) fe_error(it->span, "':load' needs a file name");
  return una_strdup(a);
}

/* A relative path named in the script file: beside that script (a
   script in another folder loads its neighbours wherever it is run from).
   Typed in the REPL, -e text or standard input, and absolute paths, stay
   as written (relative to the current directory). */
static char *beside(const char *file, char *path) {
  if (!file || path[0] == '/' || file[0] == '<') return path;
  const char *slash = strrchr(file, '/');
  if (!slash) return path;
  return una_sprintf("%.*s/%s", (int)(slash - file), file, path);
}

/* The stages of :show. */
const char *const fe_show_stages[] = {"source", "unf", "dunf", "target", "grad", "direct",
                                          NULL};

/* The optimizer's options for this session. */
static OptOptions session_opt(const Session *s) {
  OptOptions o = {0};
  o.enabled = s->optimize;
  o.dump_after = s->dump_after;
  o.dump = s->err;
  o.check_passes = s->check_passes;
  return o;
}

/* d with its derivative operators replaced by calls of derived functions. */
static Def *expand_derivs(const Session *s, Def *d) {
  OptOptions oo = session_opt(s);
  DerivOpt o = {opt_derived, &oo};
  return deriv_expand(d, &o);
}

/* The program that runs for d: d optimized with everything it calls, or d
   itself under -O0. */
Def *fe_session_runnable(const Session *s, Def *d) {
  OptOptions o = session_opt(s);
  Def *r = opt_optimize_program(d, &o);
  if (s->dump_after && (strcmp(s->dump_after, "plan") == 0 || strcmp(s->dump_after, "all") == 0))
    fprintf(s->err, "-- after plan\n%s", plan_str(plan_of_def(r)));
  return r;
}

/* The optimized gradient of f with respect to wrt on a path, printed as a
   Una definition "def grad_f (f's parameters) : T = ..." (:grad, :show
   grad, :show direct).
   Under -O0 the unoptimized target term is printed instead. */
static char *optimized_grad_text(const Session *s, const Def *f, const int *wrt, int nwrt,
                                 RevPath path) {
  Def *g = rev_grad(f, wrt, nwrt, path);
  Def *o = fe_session_runnable(s, g);
  if (o != g && path == REV_UNF) { /* optimized: kept calls split (derive.h) */
    OptOptions oo = session_opt(s);
    DerivOpt d = {opt_derived, &oo};
    o = deriv_split_calls(o, &d);
  }
  return fe_program_str_readable(g->name, o);
}

/* The gradient of f at a stage as a Graphviz graph: the optimized
   gradient's definition (grad), the other printed definitions (source,
   target, direct), or the UNF's primitives in sequence (unf, dunf). */
static char *show_dot(const Session *s, const Def *f, const int *wrt, int nwrt, const char *stage) {
  if (strcmp(stage, "grad") == 0) {
    Def *g = rev_grad(f, wrt, nwrt, REV_UNF);
    Def *o = fe_session_runnable(s, g);
    return fe_def_dot(g->name, o, o->body);
  }
  const char *name;
  Def *like;
  Term *body;
  if (rev_show_def(f, wrt, nwrt, stage, &name, &like, &body)) return fe_def_dot(name, like, body);
  return fe_lines_dot(una_sprintf("%s of grad_%s", stage, f->name), rev_show(f, wrt, nwrt, stage));
}

/* Whether the command's argument has the flag --dot (a word of its own,
   before any comment); *out is then the item without it. A comment is
   "--" and a blank, so the flag is not one. */
static bool dot_flag(const Item *it, Item *out) {
  const char *a = it->arg ? it->arg : "";
  for (const char *p = strstr(a, "--dot"); p; p = strstr(p + 1, "--dot")) {
    bool starts = p == a || p[-1] == ' ' || p[-1] == '\t';
    bool ends = p[5] == '\0' || p[5] == ' ' || p[5] == '\t';
    if (!starts || !ends) continue;
    *out = *it;
    out->arg = una_sprintf("%.*s%s", (int)(p - a), a, p + 5);
    return true;
  }
  return false;
}

/* :show STAGE f  or  :show STAGE (grad f wrt p q): prints the gradient of
   f at a stage of the pipeline (reverse.h's rev_show); with --dot, as a
   Graphviz graph (frontend/ir/term_dot.h). */
static bool show_command(Session *s, const Item *it, const char *file) {
  Item flagless;
  bool dot = dot_flag(it, &flagless);
  if (dot) it = &flagless;
  const char *a = word_arg(it);
  Span at = it->arg_span.file ? it->arg_span : it->span;
  if (!at.file) at.file = file;
  size_t k = strcspn(a, " \t");
  char *stage = una_strndup(a, k);
  if (!stage[0])
    fe_error(it->span, "':show' needs a stage and a function: :show STAGE f (stages: source, unf, "
                       "dunf, target, grad, direct)");
  bool known = false;
  for (int i = 0; fe_show_stages[i]; i++) known |= strcmp(stage, fe_show_stages[i]) == 0;
  if (!known)
    fe_error(at, "unknown stage '%s' (expected source, unf, dunf, target, grad or direct)", stage);
  const char *rest = a + k;
  size_t skip = strspn(rest, " \t");
  rest += skip;
  if (!rest[0]) fe_error(at, "':show %s' needs a function name", stage);
  Span fat = at;
  fat.col += (int)(k + skip);
  Term *e = fe_parse_expr(fat.file, rest, strlen(rest), fat.line, fat.col);
  const char *fname = NULL;
  if (e->kind == T_NAME) fname = e->str;
  else if (e->kind == T_GRADREF && e->nkids == 0) fname = e->str;
  /* (grad of a lambda has no name) */
  if (!fname) fe_error(e->span, "':show' expects a function name or (grad f wrt p ...), found '%s'", rest);
  Def *f = fe_env_find_def(s->env, fname);
  if (!f) fe_error(e->span, "unknown function '%s'", fname);
  Term *target = e;
  if (e->kind == T_NAME) { /* :show STAGE f is :show STAGE (grad f) */
    target = fe_term_new(T_GRADREF, e->span, NULL);
    target->str = e->str;
    target->str_span = e->span;
  }
  int *wrt, nwrt;
  fe_check_grad_target(s->env, target, &f, &wrt, &nwrt);
  if (dot) {
    fputs(show_dot(s, f, wrt, nwrt, stage), s->out);
    return true;
  }
  if (strcmp(stage, "grad") == 0 || strcmp(stage, "direct") == 0)
    fprintf(s->out, "%s\n",
            optimized_grad_text(s, f, wrt, nwrt, stage[0] == 'g' ? REV_UNF : REV_DIRECT));
  else
    fprintf(s->out, "%s\n", rev_show(f, wrt, nwrt, stage));
  return true;
}

/* :jvp f and :vjp f (also (jvp f wrt p ...), (jvp (grad f)), ...): the
   optimized derived function, printed as a Una definition. */
static bool derived_command(Session *s, const Item *it, const char *name, const char *arg) {
  if (!arg[0]) fe_error(it->span, "':%s' needs a function: :%s f, or :%s (%s f wrt p ...)", name, name, name, name);
  Span at = it->arg_span.file ? it->arg_span : it->span;
  Term *e = fe_parse_expr(at.file, arg, strlen(arg), at.line, at.col);
  DerivOp op = name[0] == 'j' ? DOP_JVP : DOP_VJP;
  if (e->kind == T_NAME) {
    Term *g = fe_term_new(T_GRADREF, e->span, NULL);
    g->str = e->str;
    g->str_span = e->span;
    g->index = op;
    e = g;
  }
  if (e->kind == T_GRADREF && e->nkids == 0 && e->index != (int)op) { /* :jvp (grad f) */
    Term *g = fe_term_new(T_GRADREF, e->span, NULL);
    g->fn = e;
    g->index = op;
    e = g;
  }
  if (e->kind != T_GRADREF || e->nkids != 0)
    fe_error(e->span, "':%s' expects a function name or (%s f wrt p ...), found '%s'", name, name, arg);
  Def *f;
  int *wrt, nwrt;
  fe_check_grad_target(s->env, e, &f, &wrt, &nwrt);
  OptOptions oo = session_opt(s);
  DerivOpt o = {opt_derived, &oo};
  Def *d = deriv_function(f, op, wrt, nwrt, &o);
  fprintf(s->out, "%s\n", fe_program_str_readable(d->name, d));
  return true;
}

/* Runs one command item. Returns false when a nested run failed (its
   errors are already printed); raises FeError for the command's own errors. */
static bool run_command(Session *s, const Item *it, const char *file) {
  const char *name = it->name;
  const char *arg = word_arg(it);
  bool has_arg = arg[0] != '\0';
  Span arg_at = it->arg_span.file ? it->arg_span : it->span;

  if (strcmp(name, "help") == 0 || strcmp(name, "quit") == 0) {
    if (has_arg) fe_error(arg_at, "':%s' takes no argument, found '%s'", name, arg);
    if (name[0] == 'q') {
      s->quit = true;
      return true;
    }
    fprintf(s->out, "Commands (at the start of a line, in the REPL and in scripts):\n");
    for (const FeCommandInfo *c = fe_commands; c->name; c++) {
      char *head = una_sprintf(":%s%s%s", c->name, c->args[0] ? " " : "", c->args);
      fprintf(s->out, "  %-24s %s\n", head, c->help);
    }
    fprintf(s->out, "Items: def f (x: R) : R = e, let x = e, or an expression e (its value is "
                    "printed).\n");
    return true;
  }
  if (strcmp(name, "echo") == 0) { /* the words of the line, a comment dropped */
    fprintf(s->out, "%s\n", arg);
    return true;
  }
  if (strcmp(name, "type") == 0) {
    Term *e = parse_arg(it, file);
    fprintf(s->out, "%s\n", fe_check_type_text(s->env, e));
    return true;
  }
  if (strcmp(name, "time") == 0) {
    Term *e = parse_arg(it, file);
    Def *d = fe_session_runnable(s, expand_derivs(s, fe_check_expr(s->env, e)));
    double t0 = now_ms();
    Value v = fe_session_call(s, d, NULL);
    double ms = now_ms() - t0;
    print_value(s, v);
    fprintf(s->out,
            ms >= 100 ? "time: %.0f ms\n"
            : ms >= 1 ? "time: %.1f ms\n"
                      : "time: %.3f ms\n",
            ms);
    return true;
  }
  if (strcmp(name, "cost") == 0) {
    /* the program as it runs (optimized unless -O0), under the meter of
       backend/cost_meter.h; the counting rules are in optimizer/cost.h */
    Term *e = parse_arg(it, file);
    Def *d = fe_session_runnable(s, expand_derivs(s, fe_check_expr(s->env, e)));
    CpuCost c;
    Value v = cpu_metered_call(d, NULL, &c);
    print_value(s, v);
    fprintf(s->out, "cost: MOVES %llu, ADDS %llu, MULTS %llu, NLOPS %llu (total %llu)\n",
            (unsigned long long)c.moves, (unsigned long long)c.adds, (unsigned long long)c.mults,
            (unsigned long long)c.nlops, (unsigned long long)opt_cost_total(c));
    return true;
  }
  if (strcmp(name, "plan") == 0) {
    /* the plan the engines run for e (backend/plan/plan.h) */
    Term *e = parse_arg(it, file);
    Def *d = fe_session_runnable(s, expand_derivs(s, fe_check_expr(s->env, e)));
    fputs(plan_str(plan_of_def(d)), s->out);
    return true;
  }
  if (strcmp(name, "cuda") == 0) {
    /* the translation unit gpu_call compiles for e; no GPU needed */
    Term *e = parse_arg(it, file);
    Def *d = fe_session_runnable(s, expand_derivs(s, fe_check_expr(s->env, e)));
    fputs(gpu_plan_source(plan_of_def(d)), s->out);
    return true;
  }
  if (strcmp(name, "device") == 0) {
    if (!has_arg) {
      fprintf(s->out, "%s\n", fe_device_name(s->device));
      return true;
    }
    if (!fe_session_set_device(s, arg, ""))
      fe_error(arg_at, "unknown device '%s' (expected cpu, gpu or auto)", arg);
    return true;
  }
  if (strcmp(name, "show") == 0) return show_command(s, it, file);
  if (strcmp(name, "grad") == 0) {
    if (!has_arg) fe_error(it->span, "':grad' needs a function name: :grad f, or :grad (grad f wrt p ...)");
    /* :grad f is :show grad f */
    Item show = *it;
    show.arg = una_sprintf("grad %s", it->arg); /* --dot, if there, stays for show_command */
    show.arg_span.col -= 5; /* "grad " is not in the text: keep columns on f */
    return show_command(s, &show, file);
  }
  if (strcmp(name, "jvp") == 0 || strcmp(name, "vjp") == 0) return derived_command(s, it, name, arg);
  if (strcmp(name, "load") == 0) {
    char *path = beside(file, load_path(it, arg));
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text) fe_error(arg_at, "cannot open '%s': %s", path, strerror(errno));
    if (s->load_depth >= MAX_LOAD_DEPTH)
      fe_error(it->span, "':load' nested more than %d deep (does a file load itself?)",
               MAX_LOAD_DEPTH);
    s->load_depth++;
    bool ok = fe_session_run_text(s, path, text, len, true);
    s->load_depth--;
    return ok;
  }
  fe_error(it->span, "unknown command ':%s' (see :help)", name);
}

/* Whether t calls a function (a T_CALL anywhere, lambdas included). */
static bool calls_any(const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_CALL) return true;
  for (int i = 0; i < t->nkids; i++)
    if (calls_any(t->kids[i])) return true;
  return false;
}

/* The first line of an error's message (the notes after it dropped). */
static char *first_line(const char *msg) { return una_strndup(msg, strcspn(msg, "\n")); }

/* A re-run that looks for the calls behind an error is skipped after a
   run longer than this (it would take about as long again, or longer: it
   runs unoptimized). */
#define TRACE_RERUN_MS 1000.0

/* Runs the item program d (src: the same before optimization, with its
   calls) on the session's device. When it raises a run-time error inside
   a call, src runs again with the calls traced (on the CPU, unoptimized:
   the calls are still calls; a scalar function that a map's kernel
   compiled inline has no note), and the error it raises, the same
   message, is raised instead: it goes on with one "FILE:LINE:COL: note:
   called from here" line per call that led to it, innermost first, the
   item's own call last (prelude functions included). */
static Value call_item(Session *s, const Def *src, const Def *d) {
  FeTry t;
  double t0 = now_ms();
  if (fe_try(&t)) {
    Value v = fe_session_call(s, d, NULL);
    fe_untry(&t);
    return v;
  }
  if (fe_interrupted || una_is_out_of_memory(t.err) || now_ms() - t0 > TRACE_RERUN_MS || !calls_any(src->body))
    fe_raise(t.err);
  Exec traced = cpu_exec_default;
  traced.trace_calls = true;
  FeTry t2;
  if (fe_try(&t2)) {
    cpu_call_in(&traced, src, NULL);
    fe_untry(&t2);
    fe_raise(t.err); /* the re-run did not fail: the error as it was */
  }
  fe_fault_clear();
  if (strcmp(first_line(t2.err.msg), t.err.msg) == 0 && strchr(t2.err.msg, '\n')) fe_raise(t2.err);
  fe_raise(t.err);
}

/* Checks and runs one item. Returns false when a nested run failed (errors
   already printed); raises FeError otherwise. */
static bool run_item(Session *s, const Item *it, const char *file) {
  bool echo = s->interactive && s->load_depth == 0;
  switch (it->kind) {
  case ITEM_DEF: {
    Def *d = expand_derivs(s, fe_check_def(s->env, it));
    fe_env_bind_def(s->env, d);
    if (echo) fprintf(s->out, "%s : %s\n", d->name, def_type_str(d));
    return true;
  }
  case ITEM_LET: {
    Global **gs = NULL;
    Def *src = expand_derivs(s, fe_check_let(s->env, it, &gs));
    Value v = call_item(s, src, fe_session_runnable(s, src));
    if (it->tuple_pattern) {
      ASSERT(v.kind == V_TUPLE && v.u.t->n == it->nnames);
      for (int i = 0; i < it->nnames; i++)
        gs[i]->value = boxed_value(v.u.t->items[i]);
    } else {
      ASSERT(it->nnames == 1);
      gs[0]->value = boxed_value(v);
    }
    for (int i = 0; i < it->nnames; i++) {
      fe_env_bind_global(s->env, gs[i]);
      if (echo) fprintf(s->out, "%s : %s\n", gs[i]->name, fe_type_str(gs[i]->type));
    }
    return true;
  }
  case ITEM_EXPR: {
    Def *src = expand_derivs(s, fe_check_expr(s->env, it->body));
    print_value(s, call_item(s, src, fe_session_runnable(s, src)));
    return true;
  }
  case ITEM_CMD:
    return run_command(s, it, file);
  }
  UNREACHABLE();
}

/* Runs one item under an error handler; prints its error. */
static bool run_item_guarded(Session *s, const Item *it, const char *file) {
  FeTry t;
  fe_fault_clear();
  if (fe_try(&t)) {
    bool ok = run_item(s, it, file);
    fe_untry(&t);
    return ok;
  }
  /* an error that knows no place (memory exhausted) is the item's */
  if (!t.err.span.file && t.err.span.line == 0) t.err.span = it->span;
  report(s, t.err);
  return false;
}

/* Copies file and text into collected memory and parses the copy under an
   error handler (the parser reports syntax errors in its result, but the
   stack guard may still raise, and memory may run out). */
static bool parse_guarded(Session *s, const char **file, const char **text, size_t len,
                          ParseResult *pr) {
  FeTry t;
  if (fe_try(&t)) {
    *file = una_strdup(*file);
    *text = una_strndup(*text, len);
    *pr = fe_parse_program(*file, *text, len);
    fe_untry(&t);
    return true;
  }
  if (!t.err.span.file && t.err.span.line == 0) t.err.span = fe_span(*file, 1, 1);
  report(s, t.err);
  return false;
}

/* Parses text whole, then runs its items in order (see session.h). */
bool fe_session_run_text(Session *s, const char *file, const char *text, size_t len,
                         bool stop_on_error) {
  if (s->quit) return true;
  /* Spans and terms may point into the file name and the text: both are
     kept in collected memory for as long as they are referred to. */
  ParseResult pr;
  if (!parse_guarded(s, &file, &text, len, &pr)) return false;
  if (pr.nerrors > 0) {
    fflush(s->out);
    for (int i = 0; i < pr.nerrors; i++) {
      FeError e = pr.errors[i];
      if (!e.span.file && e.span.line == 0) e.span = fe_span(file, 1, 1); /* memory ran out */
      fe_error_print(s->err, e);
    }
    return false;
  }
  bool ok = true;
  for (int i = 0; i < pr.nitems && !s->quit; i++) {
    if (!run_item_guarded(s, pr.items[i], file)) {
      ok = false;
      if (stop_on_error) break;
    }
  }
  fflush(s->out);
  return ok;
}

/* Reads the file at path and runs it, stopping at its first error. */
bool fe_session_run_file(Session *s, const char *path) {
  size_t len = 0;
  char *text = read_file(path, &len);
  if (!text) {
    FeError e = {fe_span(una_strdup(path), 0, 0), una_sprintf("cannot open: %s", strerror(errno))};
    report(s, e);
    return false;
  }
  return fe_session_run_text(s, path, text, len, true);
}

/* Runs the embedded prelude as "<prelude>", without echoing its defs. */
bool fe_session_load_prelude(Session *s) {
  bool interactive = s->interactive;
  s->interactive = false;
  bool ok = fe_session_run_text(s, "<prelude>", una_prelude_text, strlen(una_prelude_text), true);
  s->interactive = interactive;
  return ok;
}
