/* session.h: a session runs program text item by item: definitions, global
   lets, expressions (printed) and the commands of LANGUAGE.md section 8. It
   is the one place where checking, evaluation and printing meet; the
   command line (main.c), the REPL (repl.c) and the tests all drive it. */
#ifndef UNA_SESSION_H
#define UNA_SESSION_H

#include "../check.h"
#include "device.h"

typedef struct Session {
  Env *env;         /* the top-level names bound so far */
  FeDevice device;  /* where arrays live and array builtins run: the CPU or a CUDA GPU */
  bool optimize;    /* false under -O0 */
  const char *dump_after; /* --dump-after=PASS: an optimizer pass name, "all" or NULL */
  bool check_passes; /* --check-passes: re-check types after every optimizer pass (on in the tests) */
  bool print_all;   /* --print-all: print large arrays in full (else summarised: value.h) */
  bool interactive; /* REPL: a def or let echoes its name and type */
  FILE *out;        /* values and command output (stdout by default) */
  FILE *err;        /* errors and notes (stderr by default) */
  bool quit;        /* set by :quit; nothing more runs once it is set */
  int load_depth;   /* nesting of :load, bounded */
} Session;

/* A new session with an empty environment, on the CPU, printing to stdout
   and stderr. The prelude is not loaded (see fe_session_load_prelude). */
Session *fe_session_new(void);

/* Loads the embedded prelude (prelude/prelude.una, file name "<prelude>").
   Returns false (and prints the error) if it fails. */
bool fe_session_load_prelude(Session *s);

/* Runs a program text: parses it whole (on syntax errors prints them all
   and runs nothing), then checks and runs each item in order, printing the
   value of every expression item to s->out. Errors are printed to s->err as
   FILE:LINE:COL: error: MSG. With stop_on_error the first error stops the
   run; otherwise the remaining items still run. Returns true when no error
   occurred. Stops early (successfully) after :quit. */
bool fe_session_run_text(Session *s, const char *file, const char *text, size_t len,
                         bool stop_on_error);

/* Reads the file at path and runs it as with fe_session_run_text (stopping
   at the first error). An unreadable file prints
   "PATH: error: cannot open: REASON" and returns false. */
bool fe_session_run_file(Session *s, const char *path);

/* Sets the device from a name "cpu", "gpu" or "auto", printing a note to
   s->err (prefixed by prefix, e.g. "una: ") when the GPU is asked for but
   cannot be used. Returns false for an unknown name (nothing printed). */
bool fe_session_set_device(Session *s, const char *name, const char *prefix);

/* The program that runs for d (a checked def of s, its derivative operators
   expanded): d optimized with everything it calls, or d itself under -O0. */
Def *fe_session_runnable(const Session *s, Def *d);

/* Calls d (a runnable Def) with args on the session's device. Raises
   FeError. When a GPU failure leaves the GPU unusable, the session moves to
   the CPU (the error says so). */
struct Value fe_session_call(Session *s, const Def *d, const struct Value *args);

/* The command words of section 8 that this build knows, NULL-terminated
   (for :help and tab completion), each with a one-line description. */
typedef struct FeCommandInfo {
  const char *name; /* without ':' */
  const char *args; /* argument synopsis, "" when none */
  const char *help;
} FeCommandInfo;
extern const FeCommandInfo fe_commands[];

/* The stages :show prints ("source", "unf", ...), NULL-terminated. */
extern const char *const fe_show_stages[];

#endif
