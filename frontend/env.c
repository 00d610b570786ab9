/* env.c: the top-level environment: a hash table from names to functions
   (Def) and values (Global); a later binding of a name replaces the earlier. */
#include "env.h"

struct Env {
  EnvBinding **buckets;
  int nbuckets;
  int count;
};

/* FNV-1a over the bytes of name. */
unsigned fe_name_hash(const char *name) {
  unsigned h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    h ^= *p;
    h *= 16777619u;
  }
  return h;
}

/* Makes an empty environment. */
Env *fe_env_new(void) {
  Env *env = NEW(Env);
  env->nbuckets = 64;
  env->buckets = NEW_ARRAY(EnvBinding *, env->nbuckets);
  return env;
}

/* The binding of name in env, or NULL when the name is unbound. */
const EnvBinding *fe_env_lookup(const Env *env, const char *name) {
  unsigned h = fe_name_hash(name) & (unsigned)(env->nbuckets - 1);
  for (EnvBinding *b = env->buckets[h]; b; b = b->next)
    if (strcmp(b->name, name) == 0) return b;
  return NULL;
}

static void env_grow(Env *env) {
  int n = env->nbuckets * 2;
  EnvBinding **nb = NEW_ARRAY(EnvBinding *, n);
  for (int i = 0; i < env->nbuckets; i++) {
    EnvBinding *b = env->buckets[i];
    while (b) {
      EnvBinding *next = b->next;
      unsigned h = fe_name_hash(b->name) & (unsigned)(n - 1);
      b->next = nb[h];
      nb[h] = b;
      b = next;
    }
  }
  env->buckets = nb;
  env->nbuckets = n;
}

/* Binds name to exactly one of d or g, replacing any earlier binding. */
static void env_bind(Env *env, const char *name, Def *d, Global *g) {
  EnvBinding *b = (EnvBinding *)fe_env_lookup(env, name);
  if (!b) {
    if (env->count >= env->nbuckets) env_grow(env);
    b = NEW(EnvBinding);
    b->name = name;
    unsigned h = fe_name_hash(name) & (unsigned)(env->nbuckets - 1);
    b->next = env->buckets[h];
    env->buckets[h] = b;
    env->count++;
  }
  b->def = d;
  b->global = g;
}

/* Binds the function d under its name for everything checked afterwards. */
void fe_env_bind_def(Env *env, Def *d) { env_bind(env, d->name, d, NULL); }

/* Binds the global g under its name for everything checked afterwards. */
void fe_env_bind_global(Env *env, Global *g) { env_bind(env, g->name, NULL, g); }

/* Looks up a bound function (NULL if the name is not a function). */
Def *fe_env_find_def(Env *env, const char *name) {
  const EnvBinding *b = fe_env_lookup(env, name);
  return b ? b->def : NULL;
}

/* Calls f for every bound top-level name (for tab completion). */
void fe_env_each_name(Env *env, void (*f)(const char *name, void *ud), void *ud) {
  for (int i = 0; i < env->nbuckets; i++)
    for (EnvBinding *b = env->buckets[i]; b; b = b->next) f(b->name, ud);
}
