/* repl.h: the interactive loop (GNU readline), used when stdin is a
   terminal. */
#ifndef UNA_REPL_H
#define UNA_REPL_H

#include "session.h"

/* Reads items from the terminal and runs them in s until Ctrl-D on an
   empty prompt or :quit. Prompt "una> ", continuation "...> " while the
   input is unfinished; history in ~/.una_history (or $UNA_HISTORY; empty
   for none); tab completion of names, keywords and commands; Ctrl-C
   abandons the current input or interrupts an evaluation. Errors are
   printed and never end the session. Returns the exit status (0). */
int fe_repl(Session *s);

#endif
