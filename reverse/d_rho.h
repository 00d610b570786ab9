/* d_rho.h: the paper's reverse-mode differentiation on UNF, D_rho
   (figure 8): Source UNF -> Target UNF. */
#ifndef UNA_D_RHO_H
#define UNA_D_RHO_H

#include "../unf/unf.h"

/* D_rho(e) for a Source UNF term in |- e : out: a Target UNF term
   D(in) |- D_rho(e) : D(out), where D(C) = C, (cot(C) -> rho).
   Linear in the size of e. */
Unf *rev_d_rho(const Unf *e);

#endif
