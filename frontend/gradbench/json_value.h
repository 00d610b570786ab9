/* json_value.h: JSON <-> Una values for the GradBench tool (gradbench.h).
   Input is converted by the type it must have: a JSON number (integer or
   not) is R, true/false is B, an array is [T] (its elements each of type T)
   or a tuple (T1, ..., Tn) (an array of exactly n elements). Output follows
   the value: R is a number, B true/false, arrays and tuples are arrays. */
#ifndef UNA_JSON_VALUE_H
#define UNA_JSON_VALUE_H

#include "../../backend/value.h"
#include <jansson.h>

/* j as a value of type t. On a mismatch returns false and sets *why to
   "PATH: expected T, found K" (PATH: where in the input, e.g. x[3]). */
bool json_to_value(const json_t *j, const Type *t, const char *path, Value *out,
                   const char **why);

/* v as new JSON (reals that are not finite, which JSON cannot write, as
   null). Never NULL. */
json_t *json_of_value(Value v);

#endif
