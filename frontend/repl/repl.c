/* repl.c: the read-eval-print loop on GNU readline's callback interface, so
   that Ctrl-C while typing abandons the input cleanly and Ctrl-C while
   evaluating interrupts the evaluation. */
#include "repl.h"
#include "repl_lines.h"
#include <errno.h>
#include <fcntl.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <sys/select.h>
#include <unistd.h>

#define PROMPT "una> "
#define PROMPT_MORE "...> "
#define HISTORY_KEEP 1000

static Session *session; /* the session being served (for completion) */
static volatile sig_atomic_t got_sigint;
static volatile sig_atomic_t running; /* an input is being evaluated */
static volatile sig_atomic_t got_sigwinch;
static bool line_ready;          /* on_line was called */
static char *ready_line;         /* its line (malloc'd by readline), NULL on EOF */
static ReplLines lines;          /* the input being typed (repl_lines.h) */
static const char *history_path; /* NULL: no history file */
static int wake[2] = {-1, -1};   /* a pipe the signal handlers write to: the
                                    signal may reach another thread (a
                                    library's workers, started before main
                                    blocked it), so the loop's pselect also
                                    watches this pipe to wake up */

/* Wakes the loop (async-signal-safe). */
static void wake_loop(void) {
  if (wake[1] >= 0 && write(wake[1], "", 1) < 0) { /* full: already awake */
  }
}

/* SIGINT: abandon the input being typed, or interrupt the evaluation. */
static void on_sigint(int sig) {
  (void)sig;
  got_sigint = 1;
  fe_interrupted = 1;
  /* The terminal has echoed "^C"; the "interrupted" error goes below it. */
  if (running && write(STDOUT_FILENO, "\n", 1) < 0) got_sigint = 1;
  wake_loop();
}

/* SIGWINCH: the terminal changed size; readline is told in the main loop. */
static void on_sigwinch(int sig) {
  (void)sig;
  got_sigwinch = 1;
  wake_loop();
}

/* readline's line handler: hands the line to the main loop. Removing the
   handler here (not after rl_callback_read_char returns) keeps readline
   from showing a fresh prompt before the input has run; it also gives the
   terminal back while running. */
static void on_line(char *line) {
  line_ready = true;
  ready_line = line;
  rl_callback_handler_remove();
}

/* ---- history ---------------------------------------------------------- */

/* Chooses the history file and reads it. */
static void history_start(void) {
  const char *env = getenv("UNA_HISTORY");
  if (env) {
    history_path = env[0] ? una_strdup(env) : NULL;
  } else {
    const char *home = getenv("HOME");
    history_path = home && home[0] ? una_sprintf("%s/.una_history", home) : NULL;
  }
  using_history();
  stifle_history(HISTORY_KEEP);
  /* Multi-line inputs come back as one entry: the file separates entries
     by timestamp lines. */
  history_comment_char = '#';
  history_write_timestamps = 1;
  history_multiline_entries = 1;
  if (history_path) read_history(history_path);
}

/* Adds one entry (a possibly multi-line input, without its last newline)
   to the history and to the file, keeping the last HISTORY_KEEP. */
static void history_add(const char *entry) {
  if (!entry[0]) return;
  HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
  if (last && strcmp(last->line, entry) == 0) return;
  add_history(entry);
  if (!history_path) return;
  if (append_history(1, history_path) != 0) write_history(history_path);
  history_truncate_file(history_path, HISTORY_KEEP);
}

/* ---- completion ------------------------------------------------------- */

static const char *const keywords[] = {"def",  "let", "in",  "if",  "then", "else", "true", "false",
                                       "grad", "wrt", "vjp", "jvp", "value_and_grad", "inf", "nan", "fst",  "snd",  NULL};
static const char *const devices[] = {"cpu", "gpu", "auto", NULL};

static char **cands; /* malloc'd strings: the matches being offered */
static int ncands, cands_cap;
static const char *cand_prefix;

/* Adds name to the candidates when it starts with cand_prefix. */
static void add_cand(const char *name, void *ud) {
  (void)ud;
  if (strncmp(name, cand_prefix, strlen(cand_prefix)) != 0 || name[0] == '<') return;
  if (ncands == cands_cap) {
    cands_cap = cands_cap ? 2 * cands_cap : 64;
    char **grown = realloc(cands, sizeof(char *) * (size_t)cands_cap);
    if (!grown) return;
    cands = grown;
  }
  char *copy = strdup(name);
  if (copy) cands[ncands++] = copy;
}

/* Hands the candidates to readline one by one (readline frees them). */
static char *next_cand(const char *text, int state) {
  (void)text;
  static int i;
  if (state == 0) i = 0;
  return i < ncands ? cands[i++] : NULL;
}

/* Offers the candidates collected so far (readline takes and frees them)
   and resets the list. */
static char **offer(const char *text) {
  char **m = ncands ? rl_completion_matches(text, next_cand) : NULL;
  ncands = 0;
  return m;
}

/* True when the line starts with the command word cmd followed by a blank. */
static bool line_is_command(const char *cmd) {
  size_t n = strlen(cmd);
  return strncmp(rl_line_buffer, cmd, n) == 0 &&
         (rl_line_buffer[n] == ' ' || rl_line_buffer[n] == '\t');
}

/* True when the word at start is the first argument of the command cmd
   (only blanks between them). */
static bool first_argument(const char *cmd, int start) {
  for (int i = (int)strlen(cmd); i < start; i++)
    if (rl_line_buffer[i] != ' ' && rl_line_buffer[i] != '\t') return false;
  return true;
}

#define NAME_BREAKS " \t\n\"()[],.+-*/^<>=!&|"
#define FILE_BREAKS " \t\n\""

/* Word boundaries: a file name after :load may hold '/', '.' and '-'. */
static char *word_breaks(void) {
  return (char *)(line_is_command(":load") ? FILE_BREAKS : NAME_BREAKS);
}

/* readline's completion: commands at the start of a line, file names after
   :load, devices after :device, stages after :show, otherwise top-level names, builtins and
   keywords. */
static char **complete(const char *text, int start, int end) {
  (void)end;
  rl_attempted_completion_over = 1;
  cand_prefix = text;
  ncands = 0;
  if (start == 0 && text[0] == ':') {
    for (const FeCommandInfo *c = fe_commands; c->name; c++)
      add_cand(una_sprintf(":%s", c->name), NULL);
    return offer(text);
  }
  if (line_is_command(":load")) {
    rl_attempted_completion_over = 0; /* readline completes file names */
    return NULL;
  }
  if (line_is_command(":device")) {
    for (int i = 0; devices[i]; i++)
      add_cand(devices[i], NULL);
    return offer(text);
  }
  if (line_is_command(":show") && first_argument(":show", start)) {
    for (int i = 0; fe_show_stages[i]; i++)
      add_cand(fe_show_stages[i], NULL);
    return offer(text);
  }
  if (rl_line_buffer[0] == ':' && !line_is_command(":type") && !line_is_command(":time"))
    return NULL;
  if (text[0] == '\0' && start > 0 && rl_line_buffer[start - 1] == '.') return NULL;
  fe_env_each_name(session->env, add_cand, NULL);
  for (int i = 0; i < PRIM__COUNT; i++)
    if (fe_prim_lookup(fe_prims[i].name) == i) add_cand(fe_prims[i].name, NULL);
  for (int i = 0; keywords[i]; i++)
    add_cand(keywords[i], NULL);
  return offer(text);
}

/* ---- the loop ----------------------------------------------------------- */

/* Runs input, with SIGINT delivered (it interrupts). */
static void run_input(const char *input, const sigset_t *unblocked) {
  size_t len = strlen(input);
  char *entry = una_strndup(input, len > 0 && input[len - 1] == '\n' ? len - 1 : len);
  history_add(entry);
  got_sigint = 0;
  fe_interrupted = 0;
  sigset_t blocked;
  running = 1;
  sigprocmask(SIG_SETMASK, unblocked, &blocked);
  fe_session_run_text(session, "<repl>", input, len, true);
  fflush(stdout);
  fflush(stderr);
  sigprocmask(SIG_SETMASK, &blocked, NULL);
  running = 0;
  got_sigint = 0;
  fe_interrupted = 0;
}

/* Ctrl-C at a prompt: forget the input typed so far, show a fresh prompt. */
static void abandon_input(void) {
  FILE *out = rl_outstream ? rl_outstream : stdout;
  got_sigint = 0;
  fe_interrupted = 0;
  rl_point = rl_end; /* "^C" goes after the text, as in a shell */
  rl_redisplay();
  fputs("^C\n", out);
  fflush(out);
  rl_free_line_state();
  rl_callback_sigcleanup();
  rl_replace_line("", 0);
  rl_callback_handler_remove();
  using_history();
  repl_lines_reset(&lines);
  rl_callback_handler_install(PROMPT, on_line);
}

/* Takes one complete line from readline; returns false to leave. */
static bool take_line(const sigset_t *unblocked) {
  char *line = ready_line;
  line_ready = false;
  ready_line = NULL;
  bool typed = lines.input != NULL; /* Ctrl-D on no text (even in a block) leaves */
  const char *error;
  char *input = repl_lines_take(&lines, line, &error);
  free(line);
  if (!line) { /* Ctrl-D */
    fputc('\n', stdout);
    if (!typed) return false;
  }
  if (error) fprintf(stderr, "<repl>:1:1: error: %s\n", error);
  if (input) run_input(input, unblocked);
  return !session->quit;
}

/* Runs the interactive loop on s until Ctrl-D or :quit (see repl.h). */
int fe_repl(Session *s) {
  session = s;
  s->interactive = true;
  rl_readline_name = "una";
  rl_catch_signals = 0; /* SIGINT and SIGWINCH are ours: see on_sigint */
  rl_catch_sigwinch = 0;
  rl_attempted_completion_function = complete;
  rl_completer_word_break_characters = NAME_BREAKS;
  rl_completion_word_break_hook = word_breaks;
  history_start();
  if (wake[0] < 0 && pipe(wake) == 0) {
    fcntl(wake[0], F_SETFL, O_NONBLOCK);
    fcntl(wake[1], F_SETFL, O_NONBLOCK);
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: pselect must return EINTR */
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_sigwinch;
  sigaction(SIGWINCH, &sa, NULL);
  /* SIGINT and SIGWINCH stay blocked except inside pselect and while
     evaluating, so that none slips in between testing the flags and
     waiting. */
  sigset_t ours, unblocked;
  sigemptyset(&ours);
  sigaddset(&ours, SIGINT);
  sigaddset(&ours, SIGWINCH);
  sigprocmask(SIG_BLOCK, &ours, &unblocked);
  sigdelset(&unblocked, SIGINT);
  sigdelset(&unblocked, SIGWINCH);

  /* Bracketed paste off: a pasted block arrives line by line like typed
     input (continuation prompts and all), and readline's terminal
     handling at EOF and on removal stays the same on every terminal. */
  rl_initialize();
  rl_variable_bind("enable-bracketed-paste", "off");

  printf("Una %s: :help lists the commands, Ctrl-D leaves\n", UNA_VERSION);
  fflush(stdout);
  rl_callback_handler_install(PROMPT, on_line);
  for (;;) {
    if (got_sigint) {
      abandon_input();
      continue;
    }
    if (got_sigwinch) {
      got_sigwinch = 0;
      rl_resize_terminal();
    }
    int fd = fileno(rl_instream ? rl_instream : stdin);
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(fd, &fds);
    if (wake[0] >= 0) FD_SET(wake[0], &fds);
    int r = pselect((fd > wake[0] ? fd : wake[0]) + 1, &fds, NULL, NULL, NULL, &unblocked);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (wake[0] >= 0 && FD_ISSET(wake[0], &fds)) {
      char drain[64];
      while (read(wake[0], drain, sizeof drain) > 0) {
      }
    }
    if (!FD_ISSET(fd, &fds)) continue; /* woken by a signal: the flags above */
    rl_callback_read_char();
    if (!line_ready) continue;
    if (!take_line(&unblocked)) break;
    rl_callback_handler_install(repl_lines_pending(&lines) ? PROMPT_MORE : PROMPT, on_line);
  }
  rl_callback_handler_remove();
  sigprocmask(SIG_SETMASK, &unblocked, NULL);
  signal(SIGINT, SIG_DFL);
  signal(SIGWINCH, SIG_DFL);
  return 0;
}
