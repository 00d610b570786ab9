/* print_oracle.h: the fuzzer's oracle on printed derivatives (fuzz.c). A
   derived program printed by `:grad f`, `:jvp f` and `:vjp f` must be Una:
   read back into a session beside f, it computes what the operator
   computes, at the same points. The session's other commands on f
   (`:type`, `:show` of each stage) run too, and may raise located errors
   but no internal one. */
#ifndef UNA_FUZZ_PRINT_ORACLE_H
#define UNA_FUZZ_PRINT_ORACLE_H

#include "../../backend/value.h"

/* The program text (defining f) in a session: each printed derivative
   read back and compared, at each of the npoints argument lists points[i]
   (f's arguments; tangents and cotangents are drawn from them), with the
   operator applied to f. NULL, or a report. *compared counts the values
   compared. */
char *fz_print_check(const char *text, Value *const *points, int npoints, long *compared);

#endif
