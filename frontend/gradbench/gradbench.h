/* gradbench.h: una as a GradBench tool (`una --gradbench[=DIR]`, LANGUAGE.md
   section 9; the protocol is GradBench's CONTRIBUTING.md, "Protocol").

   One JSON message a line on `in`, one answer a line on `out`:
   - "start": answered with the tool's name and configuration;
   - "define" of module M: runs DIR/M.una in a session of its own (made by
     new_session: the prelude and the command line's options); success when
     it loads without error, else the error text;
   - "evaluate" of function F of M at input I: F is the def named F in M's
     session. An object input gives each parameter the field of the same
     name (looked for first among the object's own fields, then depth-first
     in the objects nested inside it); any other input is the one
     parameter's value. Fields converted by the parameter's type
     (json_value.h); fields no parameter names are ignored. F is optimized
     once, the first time it is evaluated (a "compile" timing), then run at
     least min_runs times (default 1) and until the runs' total time reaches
     min_seconds (default 0), each run one "evaluate" timing in
     nanoseconds: the call alone, not the JSON conversions. The output is
     the last run's value (json_value.h);
   - any other kind: answered with its id.
   Errors (a missing module or function, an input that does not fit, an
   error while running) are answers with "success": false and the located
   error text; the tool goes on. Nothing else is written to `out`: a
   module's own output goes to standard error. */
#ifndef UNA_GRADBENCH_H
#define UNA_GRADBENCH_H

#include "../repl/session.h"

typedef Session *(*GbNewSession)(void *ud); /* NULL when it cannot be made */

/* Serves the protocol until `in` ends; returns the exit status (0). */
int fe_gradbench(const char *dir, GbNewSession new_session, void *ud, FILE *in, FILE *out);

/* The folder of the project's modules: bench/gradbench of the source tree
   this binary was built in. */
const char *fe_gradbench_default_dir(void);

#endif
