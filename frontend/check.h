/* check.h: the type checker. Surface Terms (from the parser) -> checked
   Terms: names resolved to unique symbols (Sym), globals and functions,
   every node typed, frame slots assigned, operator sections and fst/snd
   desugared, errors located and naming expected and found types.

   The environment maps top-level names to functions (Def) and values
   (Global). A later binding replaces an earlier one for everything checked
   afterwards; already checked code keeps what it referred to. Binding is a
   separate step so that a failed evaluation binds nothing. */
#ifndef UNA_CHECK_H
#define UNA_CHECK_H

#include "parser.h"

typedef struct Env Env;

Env *fe_env_new(void);

/* Checks a def item; returns the Def, not yet bound. Raises FeError. */
Def *fe_check_def(Env *env, const Item *it);
void fe_env_bind_def(Env *env, Def *d);

/* Checks an expression item; the result is a Def named "<expr>" with no
   parameters whose body is the checked expression. Raises FeError. */
Def *fe_check_expr(Env *env, const Term *e);

/* Checks a top-level let item: returns a Def "<let>" computing the
   right-hand side, and in *globals (count it->nnames) one Global per bound
   name with its type, to bind once the value is known. For a tuple
   pattern, global i is component i of the value. Raises FeError. */
Def *fe_check_let(Env *env, const Item *it, Global ***globals);
void fe_env_bind_global(Env *env, Global *g);

/* The type of e for ":type": an expression's type, or a TY_FUN type when e
   is the bare name of a function or "grad f" without arguments. */
const Type *fe_check_type_of(Env *env, const Term *e);

/* fe_check_type_of as text, and a builtin's own signature when e is the
   bare name of one ("(S -> T) -> [S] -> [T]" for map). */
const char *fe_check_type_text(Env *env, const Term *e);

/* Resolves the function and wrt list of an unapplied grad (a T_GRADREF:
   `grad f` or `(grad f wrt p q)`) as the checker does for `grad f args`:
   *f, and its parameter indexes in *wrt (*nwrt of them). Raises the
   checker's located errors (unknown names, B parameters, a result that is
   not R, ...). */
void fe_check_grad_target(Env *env, const Term *e, Def **f, int **wrt, int *nwrt);

/* Looks up a bound function (NULL if the name is not a function). */
Def *fe_env_find_def(Env *env, const char *name);

/* Calls f for every bound top-level name (for tab completion). */
void fe_env_each_name(Env *env, void (*f)(const char *name, void *ud), void *ud);

#endif
