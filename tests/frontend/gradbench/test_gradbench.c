/* test_gradbench.c: una as a GradBench tool (frontend/gradbench): the
   recorded sessions of data/ (GradBench's own messages for one small input
   of each eval, and the outputs its validator expects, recorded by
   bench/gradbench/record.py), then the protocol's answers to what goes
   wrong: missing modules and functions, inputs that do not fit, bad JSON,
   output field comments. */
#include "../../../frontend/gradbench/gradbench.h"
#include "../../../frontend/gradbench/json_value.h"
#include "../../suites.h"
#include "../../testlib.h"
#include <dirent.h>
#include <math.h>
#include <unistd.h>

static Session *new_session(void *ud) {
  (void)ud;
  return tl_session_with("");
}

/* Runs the protocol on the messages in text with modules from dir; returns
   the answers, one JSON object per message line. */
static json_t **serve(const char *dir, const char *text, int *nanswers) {
  FILE *in = fmemopen((void *)text, strlen(text), "r");
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  ck_assert(in && out);
  ck_assert_int_eq(fe_gradbench(dir, new_session, NULL, in, out), 0);
  fclose(in);
  fclose(out);
  int n = 0;
  for (size_t i = 0; i < len; i++) n += buf[i] == '\n';
  json_t **ans = NEW_ARRAY(json_t *, n + 1);
  *nanswers = 0;
  for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
    json_error_t e;
    ans[*nanswers] = json_loadb(line, (size_t)(nl - line), 0, &e);
    ck_assert_msg(ans[*nanswers], "answer %d is not JSON: %s", *nanswers, e.text);
    (*nanswers)++;
  }
  free(buf);
  return ans;
}

/* The repository root (UNA_ROOT, set by make check). */
static const char *root(void) {
  const char *r = getenv("UNA_ROOT");
  return r ? r : ".";
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ck_assert_msg(f, "cannot open %s", path);
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  int c;
  while ((c = fgetc(f)) != EOF) fputc(c, m);
  fclose(f);
  fclose(m);
  char *s = una_strdup(buf);
  free(buf);
  return s;
}

/* GradBench's comparison (python/gradbench/gradbench/comparison.py): numbers
   agree when |x - y| / max(1, |x| + |y|) is within tol; arrays element by
   element; objects field by field. Writes the first mismatch's path. */
static bool same_json(const json_t *want, const json_t *got, double tol, const char *path,
                      const char **where) {
  if (json_is_number(want) && json_is_number(got)) {
    double x = json_number_value(want), y = json_number_value(got);
    double d = fabs(x - y) / fmax(1, fabs(x) + fabs(y));
    if (d <= tol) return true;
    *where = una_sprintf("%s: expected %.17g, got %.17g", path, x, y);
    return false;
  }
  if (json_is_array(want) && json_is_array(got)) {
    if (json_array_size(want) != json_array_size(got)) {
      *where = una_sprintf("%s: expected %zu elements, got %zu", path, json_array_size(want),
                           json_array_size(got));
      return false;
    }
    for (size_t i = 0; i < json_array_size(want); i++)
      if (!same_json(json_array_get(want, i), json_array_get(got, i), tol,
                     una_sprintf("%s[%zu]", path, i), where))
        return false;
    return true;
  }
  if (json_is_object(want) && json_is_object(got)) {
    if (json_object_size(want) != json_object_size(got)) {
      *where = una_sprintf("%s: expected %zu fields, got %zu", path, json_object_size(want),
                           json_object_size(got));
      return false;
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)want, k, v) {
      const json_t *g = json_object_get(got, k);
      if (!g) {
        *where = una_sprintf("%s: no field %s", path, k);
        return false;
      }
      if (!same_json(v, g, tol, una_sprintf("%s.%s", path, k), where)) return false;
    }
    return true;
  }
  if (json_equal((json_t *)want, (json_t *)got)) return true;
  *where = una_sprintf("%s: different kinds of JSON value", path);
  return false;
}

static char *sessions[64];
static int nsessions;

static void find_sessions(void) {
  DIR *d = opendir(una_sprintf("%s/tests/frontend/gradbench/data", root()));
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) && nsessions < 64) {
    size_t n = strlen(e->d_name);
    if (n > 3 && strcmp(e->d_name + n - 3, ".in") == 0)
      sessions[nsessions++] = strndup(e->d_name, n - 3);
  }
  closedir(d);
}

/* One recorded session: every evaluate answered with success, at least
   min_runs "evaluate" timings, and the output GradBench expects, to
   GradBench's own tolerance (its validity: some references, like ode's
   closed-form gradient, are not the discretization's exact derivative). */
START_TEST(recorded_session) {
  const char *name = sessions[_i];
  const char *base = una_sprintf("%s/tests/frontend/gradbench/data/%s", root(), name);
  int n;
  json_t **ans = serve(una_sprintf("%s/bench/gradbench", root()),
                       slurp(una_sprintf("%s.in", base)), &n);
  char *expect = slurp(una_sprintf("%s.expect", base));
  int checked = 0;
  for (char *line = expect, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
    json_t *want = json_loadb(line, (size_t)(nl - line), 0, NULL);
    ck_assert(want);
    json_int_t id = json_integer_value(json_object_get(want, "id"));
    const json_t *got = NULL;
    for (int i = 0; i < n; i++)
      if (json_integer_value(json_object_get(ans[i], "id")) == id) got = ans[i];
    ck_assert_msg(got, "%s: no answer to message %lld", name, (long long)id);
    ck_assert_msg(json_is_true(json_object_get(got, "success")), "%s: message %lld failed: %s",
                  name, (long long)id, json_string_value(json_object_get(got, "error")));
    const json_t *ts = json_object_get(got, "timings");
    size_t nevals = 0;
    for (size_t i = 0; i < json_array_size(ts); i++)
      nevals += strcmp(json_string_value(json_object_get(json_array_get(ts, i), "name")),
                       "evaluate") == 0;
    ck_assert_msg(nevals >= 1, "%s: message %lld has no evaluate timing", name, (long long)id);
    const char *where = NULL;
    ck_assert_msg(same_json(json_object_get(want, "output"), json_object_get(got, "output"), 1e-4,
                            "output", &where),
                  "%s: message %lld: %s", name, (long long)id, where);
    checked++;
  }
  ck_assert_msg(checked > 0, "%s: nothing to check", name);
}
END_TEST

/* A folder of small modules for the protocol tests. */
static const char *modules(void) {
  static char dir[] = "/tmp/una_gb_XXXXXX";
  static bool made;
  if (made) return dir;
  ck_assert(mkdtemp(dir));
  made = true;
  const char *files[][2] = {
      {"m", "-- gradbench: pair -> {value, twice}\n"
            "-- gradbench: nested -> {a: {elements, repeated}, b}\n"
            "def nested (x: R) : (([R], R), R) = (([x], 2), x)\n"
            "-- gradbench: wrong -> {a: {b, c}, d}\n"
            "def wrong (x: R) : ((R, R, R), R) = ((x, x, x), x)\n"
            "def pair (x: R) : (R, [R]) = (x, [x, 2 * x])\n"
            "def add (x: R) (y: R) : R = x + y\n"
            "def total (v: [[R]]) : R = sum (map sum v)\n"
            "def fail (x: [R]) : R = x[5]\n"
            "def flag (b: B) (t: (R, R)) : R = if b then t.1 else t.2\n"},
      {"broken", "def f (x: R) : R = y\n"},
      {"badcomment", "def f (x: R) : R = x\n-- gradbench: f -> {a b}\n"},
      {"nofun", "def f (x: R) : R = x\n-- gradbench: g -> {a}\n"},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    FILE *f = fopen(una_sprintf("%s/%s.una", dir, files[i][0]), "w");
    ck_assert(f);
    fputs(files[i][1], f);
    fclose(f);
  }
  return dir;
}

/* The one answer to msgs' last line, after defining module m. */
static json_t *last_answer(const char *msgs) {
  int n;
  json_t **ans = serve(modules(), msgs, &n);
  ck_assert_int_ge(n, 1);
  return ans[n - 1];
}

static const char *error_of(const json_t *a) {
  ck_assert_msg(json_is_false(json_object_get(a, "success")), "expected a failure");
  const char *e = json_string_value(json_object_get(a, "error"));
  ck_assert(e);
  return e;
}

#define DEFINE_M "{\"id\":1,\"kind\":\"define\",\"module\":\"m\"}\n"

START_TEST(start_and_unknown_kinds) {
  int n;
  json_t **a = serve(modules(),
                     "{\"id\":0,\"kind\":\"start\",\"eval\":\"m\"}\n"
                     "{\"id\":7,\"kind\":\"analysis\",\"of\":3,\"valid\":true}\n"
                     "\n"
                     "not json\n",
                     &n);
  ck_assert_int_eq(n, 3);
  ck_assert_str_eq(json_string_value(json_object_get(a[0], "tool")), "una");
  ck_assert_int_eq(json_integer_value(json_object_get(a[1], "id")), 7);
  ck_assert_int_eq(json_object_size(a[1]), 1);
  ck_assert(json_is_null(json_object_get(a[2], "id")));
  ck_assert(strstr(error_of(a[2]), "bad JSON message") != NULL);
}
END_TEST

START_TEST(evaluate_by_parameter_names) {
  json_t *a = last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":\"m\","
                                   "\"function\":\"add\",\"input\":{\"y\":2,\"x\":40,"
                                   "\"min_runs\":3,\"min_seconds\":0}}\n");
  ck_assert(json_is_true(json_object_get(a, "success")));
  ck_assert_double_eq(json_number_value(json_object_get(a, "output")), 42);
  const json_t *ts = json_object_get(a, "timings");
  int evals = 0;
  for (size_t i = 0; i < json_array_size(ts); i++)
    evals += strcmp(json_string_value(json_object_get(json_array_get(ts, i), "name")),
                    "evaluate") == 0;
  ck_assert_int_eq(evals, 3);
}
END_TEST

START_TEST(nested_fields_tuples_and_booleans) {
  json_t *a = last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":\"m\","
                                   "\"function\":\"flag\",\"input\":{\"data\":{\"model\":"
                                   "{\"b\":false}},\"t\":[1,2.5]}}\n");
  ck_assert_double_eq(json_number_value(json_object_get(a, "output")), 2.5);
  a = last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":\"m\","
                           "\"function\":\"total\",\"input\":{\"v\":[[1,2],[],[3]]}}\n");
  ck_assert_double_eq(json_number_value(json_object_get(a, "output")), 6);
}
END_TEST

/* A JSON matrix is a [[R]] whose rows are views into one buffer (BLAS
   reads it in place); ragged rows and a bad element keep their paths. */
START_TEST(matrices_contiguous) {
  const Type *m = fe_ty_array(fe_ty_array(fe_ty_real()));
  json_error_t je;
  json_t *j = json_loads("[[1, 2, 3], [4, 5, 6]]", 0, &je);
  Value v;
  const char *why = NULL;
  ck_assert(json_to_value(j, m, "x", &v, &why));
  ck_assert_str_eq(val_to_string(v), "[[1, 2, 3], [4, 5, 6]]");
  const Array *r0 = v.u.a->v[0].u.a, *r1 = v.u.a->v[1].u.a;
  ck_assert_ptr_eq(r1->r, r0->r + 3);
  ck_assert(json_to_value(json_loads("[[1], [2, 3], []]", 0, &je), m, "x", &v, &why));
  ck_assert_str_eq(val_to_string(v), "[[1], [2, 3], []]");
  ck_assert(!json_to_value(json_loads("[[1, 2], [3, true]]", 0, &je), m, "x", &v, &why));
  ck_assert_str_eq(why, "x[1][1]: expected R, found true");
}
END_TEST

START_TEST(output_fields_comment) {
  json_t *a = last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":\"m\","
                                   "\"function\":\"pair\",\"input\":3}\n");
  char *s = json_dumps(json_object_get(a, "output"), JSON_COMPACT | JSON_SORT_KEYS);
  ck_assert_str_eq(s, "{\"twice\":[3.0,6.0],\"value\":3.0}");
  free(s);
  a = last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":\"m\","
                           "\"function\":\"nested\",\"input\":3}\n");
  s = json_dumps(json_object_get(a, "output"), JSON_COMPACT | JSON_SORT_KEYS);
  ck_assert_str_eq(s, "{\"a\":{\"elements\":[3.0],\"repeated\":2.0},\"b\":3.0}");
  free(s);
  ck_assert_str_eq(error_of(last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":"
                                                 "\"m\",\"function\":\"wrong\",\"input\":3}\n")),
                   "wrong's result.a is not a tuple of 2, as the module's gradbench comment says");
  ck_assert_str_eq(error_of(last_answer("{\"id\":1,\"kind\":\"define\",\"module\":\"badcomment\"}\n")),
                   una_sprintf("%s/badcomment.una:2:23: error: malformed gradbench comment: "
                               "expected ',' or '}' (the form is '-- gradbench: F -> {field, field: {field, "
                               "...}, ...}')",
                               modules()));
  ck_assert_str_eq(error_of(last_answer("{\"id\":1,\"kind\":\"define\",\"module\":\"nofun\"}\n")),
                   una_sprintf("%s/nofun.una:2:15: error: gradbench comment for 'g', which the "
                               "module does not define", modules()));
}
END_TEST

START_TEST(failures_are_answers) {
  const char *m = modules();
  ck_assert_str_eq(error_of(last_answer("{\"id\":1,\"kind\":\"define\",\"module\":\"nope\"}\n")),
                   una_sprintf("%s/nope.una: error: cannot open: No such file or directory", m));
  ck_assert_str_eq(error_of(last_answer("{\"id\":1,\"kind\":\"define\",\"module\":\"../m\"}\n")),
                   "bad module name '../m'");
  ck_assert_str_eq(error_of(last_answer("{\"id\":1,\"kind\":\"define\",\"module\":\"broken\"}\n")),
                   una_sprintf("%s/broken.una:1:20: error: unknown name 'y'", m));
  ck_assert_str_eq(error_of(last_answer("{\"id\":2,\"kind\":\"evaluate\",\"module\":\"m\","
                                        "\"function\":\"add\",\"input\":1}\n")),
                   "module 'm' was not defined");
  ck_assert_str_eq(error_of(last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":"
                                                 "\"m\",\"function\":\"nope\",\"input\":1}\n")),
                   una_sprintf("module 'm' has no function 'nope' (%s/m.una)", m));
  ck_assert_str_eq(error_of(last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":"
                                                 "\"m\",\"function\":\"add\",\"input\":1}\n")),
                   "add takes 2 parameters: the input must be an object with a field for each");
  ck_assert_str_eq(error_of(last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":"
                                                 "\"m\",\"function\":\"add\",\"input\":{\"x\":1}}\n")),
                   "the input has no field \"y\" (parameter 2 of add)");
  ck_assert_str_eq(error_of(last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":"
                                                 "\"m\",\"function\":\"total\",\"input\":"
                                                 "{\"v\":[[1],[2,\"a\"]]}}\n")),
                   "input.v[1][1]: expected R, found a string");
  ck_assert_str_eq(error_of(last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":"
                                                 "\"m\",\"function\":\"flag\",\"input\":"
                                                 "{\"b\":true,\"t\":[1,2,3]}}\n")),
                   "input.t: expected (R, R), found an array of 3");
  ck_assert_str_eq(error_of(last_answer(DEFINE_M "{\"id\":2,\"kind\":\"evaluate\",\"module\":"
                                                 "\"m\",\"function\":\"fail\",\"input\":[1,2]}\n")),
                   una_sprintf("%s/m.una:9:26: error: index 5 out of bounds for an array of "
                               "length 2", m));
}
END_TEST

Suite *suite_gradbench(void) {
  find_sessions();
  Suite *s = suite_create("gradbench");
  TCase *tc = tcase_create("gradbench");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, recorded_session, 0, nsessions);
  tcase_add_test(tc, start_and_unknown_kinds);
  tcase_add_test(tc, evaluate_by_parameter_names);
  tcase_add_test(tc, nested_fields_tuples_and_booleans);
  tcase_add_test(tc, output_fields_comment);
  tcase_add_test(tc, matrices_contiguous);
  tcase_add_test(tc, failures_are_answers);
  suite_add_tcase(s, tc);
  return s;
}
