/* suites.h: one declaration per Check suite listed in suites.def
   (SUITE(name) declares Suite *suite_name(void)). */
#ifndef UNA_TEST_SUITES_H
#define UNA_TEST_SUITES_H

#include <check.h>

#define SUITE(name) Suite *suite_##name(void);
#include "suites.def"
#undef SUITE

#endif
