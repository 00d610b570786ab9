/* env.h: internals of the checker's top-level environment (check.h has the
   public API); shared by env.c and check.c only. */
#ifndef UNA_ENV_H
#define UNA_ENV_H

#include "check.h"

/* One bound top-level name: exactly one of def and global is set. */
typedef struct EnvBinding {
  const char *name;
  Def *def;
  Global *global;
  struct EnvBinding *next;
} EnvBinding;

/* The binding of name, or NULL when unbound. */
const EnvBinding *fe_env_lookup(const Env *env, const char *name);

/* The hash of a name (FNV-1a), for the checker's tables. */
unsigned fe_name_hash(const char *name);

#endif
