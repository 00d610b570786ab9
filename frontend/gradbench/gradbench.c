/* gradbench.c: the GradBench protocol over a session per module
   (gradbench.h). */
#include "gradbench.h"
#include "json_value.h"
#include "../../backend/value.h"
#include "../ir/ptrmap.h"
#include <ctype.h>
#include <errno.h>
#include <time.h>

#ifndef UNA_SOURCE_DIR
#define UNA_SOURCE_DIR "."
#endif

const char *fe_gradbench_default_dir(void) {
  return UNA_SOURCE_DIR "/bench/gradbench";
}

/* The JSON object a tuple result is written as: a name per component,
   and for a component that is itself a tuple written as an object, its
   own shape (else NULL). */
typedef struct GbShape {
  int n;
  const char **names;
  struct GbShape **sub;
} GbShape;

/* A function's output shape, from a comment line of its module
   "-- gradbench: F -> {a, b: {c, d}}". */
typedef struct GbFields {
  const char *fn;
  GbShape *shape;
  Span span; /* the comment's function name */
  struct GbFields *next;
} GbFields;

/* A defined module: its session and its functions' runnable programs. */
typedef struct GbModule {
  const char *name;
  Session *s;
  PtrMap *compiled; /* Def -> its runnable Def */
  GbFields *fields;
} GbModule;

typedef struct Gradbench {
  const char *dir;
  GbNewSession new_session;
  void *ud;
  GbModule *mods;
  int nmods, cap;
} Gradbench;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static json_t *timing(const char *name, long long ns) {
  return json_pack("{s:s, s:I}", "name", name, "nanoseconds", (json_int_t)ns);
}

static json_t *failure(json_t *resp, const char *msg) {
  json_object_set_new(resp, "success", json_false());
  json_object_set_new(resp, "error", json_string(msg));
  return resp;
}

static GbModule *find_module(Gradbench *g, const char *name) {
  for (int i = 0; i < g->nmods; i++)
    if (strcmp(g->mods[i].name, name) == 0) return &g->mods[i];
  return NULL;
}

/* A module name is a file name in DIR, not a path. */
static bool plain_name(const char *n) {
  if (!n[0] || n[0] == '.') return false;
  for (const char *p = n; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.')) return false;
  return true;
}

/* Runs DIR/name.una in a new session; the module's errors (and its output)
   go to stderr, and the errors into *err as well. */
static Session *load_module(Gradbench *g, const char *name, const char **err) {
  Session *s = g->new_session(g->ud);
  if (!s) {
    *err = "cannot start a session (the prelude failed to load)";
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) {
    *err = una_sprintf("cannot capture errors: %s", strerror(errno));
    return NULL;
  }
  s->out = stderr;
  s->err = mem;
  bool ok = fe_session_run_file(s, una_sprintf("%s/%s.una", g->dir, name));
  fclose(mem);
  while (len > 0 && buf[len - 1] == '\n') len--;
  *err = una_strndup(buf, len);
  free(buf);
  if (len) fprintf(stderr, "%s\n", *err);
  s->err = stderr;
  return ok ? s : NULL;
}

static const char *skip_blank(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* A name at p ([A-Za-z_][A-Za-z0-9_']*); NULL when there is none. */
static const char *read_name(const char **p) {
  const char *q = *p;
  if (!(isalpha((unsigned char)*q) || *q == '_')) return NULL;
  while (isalnum((unsigned char)*q) || *q == '_' || *q == '\'') q++;
  const char *n = una_strndup(*p, (size_t)(q - *p));
  *p = q;
  return n;
}

#define FIELDS_MARK "-- gradbench:"

/* Where a comment line is parsed, for errors. */
typedef struct FieldsParse {
  const char *file, *start;
  int line;
} FieldsParse;

static _Noreturn void fields_error(const FieldsParse *fp, const char *p, const char *expect) {
  fe_error(fe_span(fp->file, fp->line, (int)(p - fp->start) + 1),
           "malformed gradbench comment: expected %s (the form is "
           "'-- gradbench: F -> {field, field: {field, ...}, ...}')", expect);
}

/* A shape "{a, b: {c, d}, ...}" at *p. */
static GbShape *parse_shape(const FieldsParse *fp, const char **pp) {
  const char *p = skip_blank(*pp);
  if (*p != '{') fields_error(fp, p, "'{'");
  p++;
  const char *names[256];
  GbShape *subs[256];
  GbShape *sh = NEW(GbShape);
  for (;;) {
    p = skip_blank(p);
    if (sh->n == 256 || !(names[sh->n] = read_name(&p))) fields_error(fp, p, "a field name");
    p = skip_blank(p);
    subs[sh->n] = NULL;
    if (*p == ':') {
      p++;
      subs[sh->n] = parse_shape(fp, &p);
      p = skip_blank(p);
    }
    sh->n++;
    if (*p == '}') break;
    if (*p != ',') fields_error(fp, p, "',' or '}'");
    p++;
  }
  *pp = p + 1;
  sh->names = NEW_ARRAY(const char *, sh->n);
  sh->sub = NEW_ARRAY(GbShape *, sh->n);
  memcpy(sh->names, names, sizeof names[0] * (size_t)sh->n);
  memcpy(sh->sub, subs, sizeof subs[0] * (size_t)sh->n);
  return sh;
}

/* Parses one "-- gradbench: F -> {...}" line (p after the mark); on a
   malformed line raises at the column where it goes wrong. */
static GbFields *parse_fields(const char *file, int line, const char *start, const char *p) {
  FieldsParse fp = {file, start, line};
  GbFields *f = NEW(GbFields);
  p = skip_blank(p);
  f->span = fe_span(file, line, (int)(p - start) + 1);
  if (!(f->fn = read_name(&p))) fields_error(&fp, p, "a function name");
  p = skip_blank(p);
  if (strncmp(p, "->", 2) != 0) fields_error(&fp, p, "'->'");
  p += 2;
  f->shape = parse_shape(&fp, &p);
  p = skip_blank(p);
  if (*p && *p != '\n' && *p != '\r') fields_error(&fp, p, "the end of the line");
  return f;
}

/* The field names that the module's comments give tuple results. */
static GbFields *read_fields(const char *path, const char **err) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  GbFields *all = NULL;
  char *buf = NULL;
  size_t cap = 0;
  FeTry t;
  if (!fe_try(&t)) {
    *err = fe_error_text(t.err);
    free(buf);
    fclose(f);
    return NULL;
  }
  for (int line = 1; getline(&buf, &cap, f) >= 0; line++) {
    const char *p = skip_blank(buf);
    if (strncmp(p, FIELDS_MARK, strlen(FIELDS_MARK)) != 0) continue;
    GbFields *fl = parse_fields(path, line, buf, p + strlen(FIELDS_MARK));
    fl->next = all;
    all = fl;
  }
  fe_untry(&t);
  free(buf);
  fclose(f);
  return all;
}

static const GbFields *fields_of(const GbModule *m, const char *fn) {
  for (const GbFields *f = m->fields; f; f = f->next)
    if (strcmp(f->fn, fn) == 0) return f;
  return NULL;
}

/* v written with shape sh (NULL: as it is); NULL with *why on a
   mismatch, where names the part of the output. */
static json_t *shaped(const GbShape *sh, Value v, const char *where, const char **why) {
  if (!sh) return json_of_value(v);
  if (v.kind != V_TUPLE || v.u.t->n != sh->n) {
    *why = una_sprintf("%s is not a tuple of %d, as the module's gradbench comment says", where,
                       sh->n);
    return NULL;
  }
  json_t *o = json_object();
  for (int i = 0; i < sh->n; i++) {
    json_t *c = shaped(sh->sub[i], v.u.t->items[i],
                       una_sprintf("%s.%s", where, sh->names[i]), why);
    if (!c) {
      json_decref(o);
      return NULL;
    }
    json_object_set_new(o, sh->names[i], c);
  }
  return o;
}

/* The output of fn: its value as JSON, tuples as objects where the module
   names their fields. NULL with *why on a mismatch. */
static json_t *output_of(const GbModule *m, const char *fn, Value v, const char **why) {
  const GbFields *f = fields_of(m, fn);
  return shaped(f ? f->shape : NULL, v, una_sprintf("%s's result", fn), why);
}

static json_t *define(Gradbench *g, const json_t *msg, json_t *resp) {
  const char *name = json_string_value(json_object_get(msg, "module"));
  if (!name) return failure(resp, "a define message needs a \"module\" string");
  if (!plain_name(name)) return failure(resp, una_sprintf("bad module name '%s'", name));
  long long t0 = now_ns();
  if (!find_module(g, name)) {
    const char *err = NULL;
    Session *s = load_module(g, name, &err);
    if (!s) return failure(resp, err);
    const char *ferr = NULL;
    GbFields *fields = read_fields(una_sprintf("%s/%s.una", g->dir, name), &ferr);
    if (ferr) return failure(resp, ferr);
    for (GbFields *f = fields; f; f = f->next)
      if (!fe_env_find_def(s->env, f->fn))
        return failure(resp, fe_error_text((FeError){
                                 f->span, una_sprintf("gradbench comment for '%s', which the "
                                                      "module does not define", f->fn)}));
    if (g->nmods == g->cap) {
      g->cap = g->cap ? 2 * g->cap : 4;
      GbModule *m = NEW_ARRAY(GbModule, g->cap);
      if (g->nmods) memcpy(m, g->mods, sizeof *m * (size_t)g->nmods);
      g->mods = m;
    }
    g->mods[g->nmods++] = (GbModule){una_strdup(name), s, NEW(PtrMap), fields};
  }
  json_object_set_new(resp, "success", json_true());
  json_t *ts = json_array();
  json_array_append_new(ts, timing("define", now_ns() - t0));
  json_object_set_new(resp, "timings", ts);
  return resp;
}

/* The field named name in obj, or depth-first in the objects inside it. */
static const json_t *find_field(const json_t *obj, const char *name) {
  const json_t *v = json_object_get(obj, name);
  if (v) return v;
  const char *k;
  const json_t *sub;
  json_object_foreach((json_t *)obj, k, sub) {
    if (json_is_object(sub) && (v = find_field(sub, name))) return v;
  }
  return NULL;
}

/* The arguments of d from the input; NULL with *why when they do not fit. */
static Value *arguments(const Def *d, const json_t *input, const char **why) {
  Value *args = NEW_ARRAY(Value, d->nparams > 0 ? d->nparams : 1);
  if (!json_is_object(input)) {
    if (d->nparams != 1) {
      *why = una_sprintf("%s takes %d parameters: the input must be an object with a field "
                         "for each", d->name, d->nparams);
      return NULL;
    }
    return json_to_value(input, d->params[0]->type, "input", &args[0], why) ? args : NULL;
  }
  for (int i = 0; i < d->nparams; i++) {
    const char *p = d->params[i]->name;
    const json_t *f = find_field(input, p);
    if (!f) {
      *why = una_sprintf("the input has no field \"%s\" (parameter %d of %s)", p, i + 1, d->name);
      return NULL;
    }
    if (!json_to_value(f, d->params[i]->type, una_sprintf("input.%s", p), &args[i], why))
      return NULL;
  }
  return args;
}

/* A number field of the input object, or dflt. */
static double run_option(const json_t *input, const char *name, double dflt) {
  const json_t *v = json_is_object(input) ? json_object_get(input, name) : NULL;
  return v && json_is_number(v) ? json_number_value(v) : dflt;
}

static json_t *evaluate(Gradbench *g, const json_t *msg, json_t *resp) {
  const char *mname = json_string_value(json_object_get(msg, "module"));
  const char *fname = json_string_value(json_object_get(msg, "function"));
  const json_t *input = json_object_get(msg, "input");
  if (!mname || !fname || !input)
    return failure(resp, "an evaluate message needs \"module\", \"function\" and \"input\"");
  GbModule *m = find_module(g, mname);
  if (!m) return failure(resp, una_sprintf("module '%s' was not defined", mname));
  Def *d = fe_env_find_def(m->s->env, fname);
  if (!d)
    return failure(resp, una_sprintf("module '%s' has no function '%s' (%s/%s.una)", mname,
                                     fname, g->dir, mname));
  const char *why = NULL;
  double min_runs = run_option(input, "min_runs", 1);
  double min_seconds = run_option(input, "min_seconds", 0);

  json_t *ts = json_array();
  FeTry t;
  fe_fault_clear();
  if (!fe_try(&t)) { /* an input too large for memory, a run-time error */
    json_decref(ts);
    return failure(resp, fe_error_text(t.err));
  }
  Value *args = arguments(d, input, &why);
  if (!args) {
    fe_untry(&t);
    json_decref(ts);
    return failure(resp, why);
  }
  Def *r = ptrmap_get(m->compiled, d);
  if (!r) {
    long long t0 = now_ns();
    r = fe_session_runnable(m->s, d);
    ptrmap_put(m->compiled, d, r);
    json_array_append_new(ts, timing("compile", now_ns() - t0));
  }
  Value v = val_real(0);
  long long total = 0;
  for (long runs = 0; runs < min_runs || (double)total < min_seconds * 1e9; runs++) {
    long long t0 = now_ns();
    v = fe_session_call(m->s, r, args);
    long long dt = now_ns() - t0;
    total += dt;
    json_array_append_new(ts, timing("evaluate", dt));
  }
  fe_untry(&t);
  json_t *output = output_of(m, fname, v, &why);
  if (!output) {
    json_decref(ts);
    return failure(resp, why);
  }
  json_object_set_new(resp, "success", json_true());
  json_object_set_new(resp, "output", output);
  json_object_set_new(resp, "timings", ts);
  return resp;
}

/* The answer to one message (a new object). */
static json_t *answer(Gradbench *g, const json_t *msg) {
  json_t *resp = json_object();
  json_t *id = json_object_get(msg, "id");
  json_object_set(resp, "id", id ? id : json_null());
  const char *kind = json_string_value(json_object_get(msg, "kind"));
  if (!kind) return resp;
  if (strcmp(kind, "start") == 0) {
    json_object_set_new(resp, "tool", json_string("una"));
    json_object_set_new(resp, "config", json_pack("{s:s, s:s}", "version", UNA_VERSION,
                                                  "modules", g->dir));
    return resp;
  }
  if (strcmp(kind, "define") == 0) return define(g, msg, resp);
  if (strcmp(kind, "evaluate") == 0) return evaluate(g, msg, resp);
  return resp;
}

/* Reads one line of any length; NULL at the end of input. */
static char *read_line(FILE *in, size_t *len) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, in);
  if (n < 0) {
    free(line);
    return NULL;
  }
  *len = (size_t)n;
  return line;
}

int fe_gradbench(const char *dir, GbNewSession new_session, void *ud, FILE *in, FILE *out) {
  Gradbench g = {.dir = dir, .new_session = new_session, .ud = ud};
  size_t len;
  char *line;
  while ((line = read_line(in, &len))) {
    if (strspn(line, " \t\r\n") == len) {
      free(line);
      continue;
    }
    json_error_t jerr;
    json_t *msg = json_loadb(line, len, 0, &jerr);
    free(line);
    if (!msg) {
      json_t *resp = json_pack("{s:n, s:b, s:s}", "id", "success", 0, "error",
                               una_sprintf("bad JSON message: %s", jerr.text));
      json_dumpf(resp, out, JSON_COMPACT);
      json_decref(resp);
      fputc('\n', out);
      fflush(out);
      continue;
    }
    json_t *resp = answer(&g, msg);
    json_dumpf(resp, out, JSON_COMPACT | JSON_REAL_PRECISION(17));
    fputc('\n', out);
    fflush(out);
    json_decref(resp);
    json_decref(msg);
  }
  return 0;
}
