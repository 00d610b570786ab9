/* cost.h: the cost model of the paper's section 5.2 and figure 11 as Una
   counts it, NAO(e) of section 5.3 computed statically, and the helpers the
   cheap gradient test (theorem 5.4) and `:cost e` use.

   THE COST MODEL. The cost of an evaluation is the vector
   (MOVES, ADDS, MULTS, NLOPS): values moved (64 bits each), additions,
   multiplications and elementary non-linear operations. It is counted by
   the evaluator's meter (backend/cost_meter.h) as the program runs, so
   it is exact for the run, deterministic, and counts only what is
   evaluated: the branch of an `if` not taken, the right operand of a
   short-circuited `&&`, and the lambda of an array builtin applied to
   zero elements cost nothing. n below is the length of the array argument
   (for map2 the common length; for iota, replicate, rand and load the
   length of the result; for load and save of [[R]] and deeper, the number
   of reals in the array). Rules marked [fig 11] are the paper's; the others
   extend them to the rest of Una in the same spirit (a binding or a read
   moves one value; an operator moves its operands in and its result out).

     c (a number)                  (1,0,0,0)                        [fig 11]
     true, false                   (1,0,0,0)         a constant
     x (a local)                   (1,0,0,0)                        [fig 11]
     a global (top-level let)      (1,0,0,0)         a variable
   A builtin's own cost is its row in frontend/ir/prims.def: an operator
   moves arity + 1 values and counts one operation of its cost class (the
   cost column); an array builtin's moves and NLOPS per element are columns
   too. The rules below follow from those columns.
     op1 e                         Cost(op1) + Cost(e)              [fig 11]
       Cost(op1) = (2,0,0,1)  sin cos tan exp log sqrt tanh sigmoid abs floor
                              lgamma digamma trigamma
                                                    [section 5.2: "the other
                                                     unary operations"]
       Cost(-)   = (2,1,0,0)  negation is linear: a subtraction from 0
     e1 op2 e2                     Cost(op2) + Cost(e1) + Cost(e2)  [fig 11]
       Cost(+) = Cost(-) = (3,1,0,0)                  [section 5.2 for +]
       Cost(*) = Cost(/) = (3,0,1,0)                  [section 5.2 for *]
       Cost(^) = Cost(pow) = Cost(max) = Cost(min) = Cost(atan2)
                 = (3,0,0,1)
     e1 < e2 (<= > >= == !=)       (3,1,0,0) + Cost(e1) + Cost(e2)
                                   (a subtraction and a sign test; == and
                                   != on B as well)
     e1 && e2, e1 || e2            (3,0,0,0) + Cost(e1) [+ Cost(e2) when
                                   e2 is evaluated]
     !e                            (2,0,0,0) + Cost(e)
     <e1, ..., ek>                 Cost(e1) + ... + Cost(ek)        [fig 11]
     [e1, ..., ek] (literal)       Cost(e1) + ... + Cost(ek)   as a tuple
     e.i, fst e, snd e             (1,0,0,0) + Cost(e)              [fig 11]
     let x = e1 in e2              (1,0,0,0) + Cost(e1) + Cost(e2)  [fig 11]
     let (x1, ..., xk) = e1 in e2  (k,0,0,0) + Cost(e1) + Cost(e2)
                                   (one move per bound variable)
     if c then e1 else e2          (1,0,0,0) + Cost(c) + Cost(the branch
                                   taken)
     map (x. e) A                  n (Cost(e) + (1,0,0,0)) + Cost(A)
                                   (map2's rule with one parameter)
     map2 (x, y. e) A B            n (Cost(e) + (2,0,0,0)) + Cost(A)
                                   + Cost(B)                        [fig 11]
     reduce (x, y. e) v A          n (Cost(e) + (2,0,0,0)) + Cost(v)
                                   + Cost(A)                        [fig 11]
     foldl (x, y. e) v A           as reduce
     scanl (x, y. e) v A           n (Cost(e) + (3,0,0,0)) + Cost(v)
                                   + Cost(A)                        [fig 11]
     scanr (x, y. e) v A           as scanl                         [fig 11]
     shift1L A, shift1R A          (n,0,0,0) + Cost(A)              [fig 11]
     length A                      (1,0,0,0) + Cost(A)
     iota m                        (n,0,0,0) + Cost(m)
     replicate m v                 (n,0,0,0) + Cost(m) + Cost(v)
     rand m s                      (n,0,0,n) + Cost(m) + Cost(s)
                                   (each element is one hash: an NLOP)
     load "f"                      (n,0,0,0)
     save "f" A                    (n,0,0,0) + Cost(A)
     f e1 ... ek (a call)          (k,0,0,0) + Cost(e1) + ... + Cost(ek)
                                   + Cost(f's body): a let per parameter
   Target terms of unoptimized gradients also hold closures (lemma 5.3 says
   partial evaluation removes them; figure 11 has no rule for them):
     fun (x1, ..., xk) -> e        (1,0,0,0)    making the closure; its
                                   body costs when it is applied
     K (e1, ..., ek) (application) (k,0,0,0) + Cost(K) + Cost(e1) + ...
                                   + Cost(ek) + Cost(K's body): a let per
                                   parameter, as a call
   In the body e of an array builtin's lambda, e's cost is counted at each
   application, with the values of that element, so an `if` in a body
   costs each element its own branch. reduce applies its lambda exactly n
   times whatever its bracketing (lanes on the CPU), so the count does not
   depend on it. The top-level call of the program measured binds its
   arguments for free (Cost(e) of the paper is that of e in its context).

   THE SCALAR COST. Theorem 5.4 compares costs as numbers: Una takes the
   total MOVES + ADDS + MULTS + NLOPS (every weight 1; opt_cost_total).
   The vectors themselves are not comparable component by component: the
   gradient of x + y multiplies (z * 1) where x + y does not.

   NAO (section 5.3), the nesting of array operations, by induction:
     NAO(c) = NAO(x) = NAO(a global) = NAO(true) = 0
     NAO(op e1 ... ek) = NAO(<e1, ..., ek>) = NAO([e1, ..., ek])
       = NAO(let x = e1 in e2) = NAO(if e1 then e2 else e3)
       = NAO(e.i) = max of the NAO of the subterms
     NAO(B (x. e) e2 ...) = max(1 + NAO(e), NAO(e2), ...) for the builtins
       B with a lambda: map, map2, reduce, foldl, scanl, scanr (the paper
       gives map2 and reduce; the others nest work in the same way)
     NAO(shift1L e), NAO(length e), NAO(iota e), ... = NAO(e) (no lambda)
     NAO(f e1 ... ek) = max(NAO(e1), ..., NAO(ek), NAO(f's body)): grad
       inlines calls, and NAO is that of the inlined term
     NAO(fun (...) -> e) = NAO(e); NAO(K (e1, ...)) = max of its subterms.

   THEOREM 5.4: Cost(∇e) <= 4 * 3^NAO(e) * Cost(e) (opt_cost_within). */
#ifndef UNA_COST_H
#define UNA_COST_H

#include "../backend/cost_meter.h"
#include "../frontend/ir/term.h"

/* NAO(t) as above (calls followed into their defs, each def once). */
int opt_nao(const Term *t);

/* NAO of d's body. */
int opt_nao_def(const Def *d);

/* The component-wise sum a + b. */
CpuCost opt_cost_add(CpuCost a, CpuCost b);

/* The scalar cost: MOVES + ADDS + MULTS + NLOPS. */
uint64_t opt_cost_total(CpuCost c);

/* The vector as "(MOVES, ADDS, MULTS, NLOPS)", e.g. "(7, 1, 1, 0)". */
char *opt_cost_str(CpuCost c);

/* Theorem 5.4's factor 4 * 3^nao (as a double: it overflows no integer
   type the counts could be compared in). */
double opt_cheap_gradient_factor(int nao);

/* True when gradient <= 4 * 3^nao * primal, on the scalar costs. */
bool opt_cost_within(CpuCost gradient, CpuCost primal, int nao);

#endif
