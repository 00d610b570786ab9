/* corpus.c: the gradient-check corpus (corpus.h). */
#include "corpus.h"

#include <stddef.h>

const GcCase gc_corpus[] = {
    {"example 1.1", "def f (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2", NULL},
    {"example 4.1 (cos; pair)", "def f (x1: R) (x2: R) (x3: R) : R = let x4 = cos x3 in x1 * x4 + x2", NULL},
    {"prod", "def f (v: [R]) : R = prod v", NULL},
    {"reduce (*)", "def f (v: [R]) : R = reduce (*) 1 v", NULL},
    {"sum", "def f (v: [R]) : R = sum v", NULL},
    {"dot", "def f (v: [R]) (w: [R]) : R = dot v w", NULL},
    {"fan-out", "def f (x: R) : R = let a = exp x in a * sin a + a", NULL},
    {"x * x", "def f (x: R) : R = x * x", NULL},
    {"map2 (*) v v", "def f (v: [R]) : R = sum (map2 (*) v v)", NULL},
    {"free variable in map2", "def f (s: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s) v w)", NULL},
    {"free variables in map2 with the elements",
     "def f (s: R) (t: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s * a + sin (t * b)) v w)", NULL},
    {"free variable in map", "def f (s: R) (v: [R]) : R = sum (map (a. s * a * a) v)", NULL},
    {"constants", "def f (x: R) (v: [R]) (p: (R, [R])) : R = 3 + length v", NULL},
    {"horner", "def f (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) 0 cs", NULL},
    {"horner with initial value", "def f (x: R) (a: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) (a * a) cs",
     NULL},
    {"foldl nonlinear", "def f (x: R) (v: [R]) : R = foldl (acc, e. sin (acc * e) + x * e) x v", NULL},
    {"if", "def f (x: R) (y: R) : R = if x * y > 0.3 then x * x * y else sin y - x", NULL},
    {"relu", "def f (v: [R]) : R = sum (map relu v)", NULL},
    {"relu-like in map", "def f (v: [R]) (s: R) : R = sum (map (x. if x > 0 then s * x else 0.01 * x) v)", NULL},
    {"logsumexp", "def f (v: [R]) : R = max (logsumexp v) (-5)", NULL},
    {"softmax cross-entropy",
     "def f (z: [R]) (y: [R]) : R = if length z == 0 then 0 else logsumexp z - dot y z", NULL},
    {"softmax cross-entropy (softmax)",
     "def f (z: [R]) (y: [R]) : R = 0 - dot y (map log (softmax z))", NULL},
    {"wrt subset", "def f (x: R) (y: R) (z: R) : R = x * y * sin z", "z x"},
    {"wrt one array", "def f (x: R) (v: [R]) : R = x * sum (map exp v)", "v"},
    {"B parameter", "def f (b: B) (x: R) (c: B) : R = if b && !c then x * x else exp x", NULL},
    {"tuple parameter", "def f (p: (R, [R])) (q: ((R, R), R)) : R = p.1 * sum p.2 + q.1.2 * q.2 - fst q.1", NULL},
    {"let-tuple", "def f (x: R) (y: R) : R = let (a, b) = (x * y, x + y) in a * b", NULL},
    {"tuple result of if", "def f (x: R) (y: R) : R = let t = if x < y then (x, y) else (y, x) in t.1 * exp t.2",
     NULL},
    {"replicate", "def f (x: R) (v: [R]) : R = sum (map2 (*) (replicate (length v) x) v)", NULL},
    {"array literal", "def f (x: R) (y: R) : R = sum (map (a. a * a) [x, y, x * y])", NULL},
    {"reduce (max) with initial value", "def f (x: R) (v: [R]) : R = reduce (max) x v", NULL},
    {"reduce (min)", "def f (v: [R]) (x: R) : R = min (reduce (min) inf v) x", NULL},
    {"reduce with a free variable", "def f (s: R) (v: [R]) : R = reduce (a, b. a + b + s) (0 - s) v", NULL},
    {"reduce with a free variable (product)",
     "def f (s: R) (v: [R]) : R = let c = exp s in reduce (a, b. a * b * c) (1 / c) v", NULL},
    {"reduce log-sum-exp body", "def f (v: [R]) (x: R) : R = max (reduce (a, b. log (exp a + exp b)) (-inf) v) x",
     NULL},
    /* associative, not commutative: reduce must keep the elements' order */
    {"reduce last nonzero", "def f (v: [R]) : R = reduce (a, b. if b != 0 then b else a) 0 v", NULL},
    {"nested map in map body", "def f (v: [R]) (w: [R]) : R = sum (map (a. sum (map (b. a * b) w)) v)", NULL},
    {"calls", "def g (a: R) (b: [R]) : R = a * sum b\ndef h (x: R) : R = g x [x, 2 * x]\ndef f (x: R) (v: [R]) : R = h x + g (h x) v",
     NULL},
    {"call returning a tuple", "def g (a: R) : (R, R) = (sin a, cos a)\ndef f (x: R) : R = let (s, c) = g x in s * c", NULL},
    {"scalar builtins",
     "def f (x: R) : R = sin x + cos x + tan (0.5 * x) + exp x + log (2 + x) + sqrt (2 + x) + tanh x + sigmoid x + "
     "abs x + floor x + (1 + x * x) ^ x + pow 2 x + max x 0.25 + min x 0.25 - x / (3 + x) + neg x",
     NULL},
    {"atan2", "def f (x: R) (v: [R]) (w: [R]) : R = atan2 x 2 + sum (map2 (a, b. atan2 (a * x) (b - 2)) v w)", NULL},
    {"lgamma and digamma",
     "def f (x: R) (v: [R]) : R = lgamma (2 + x * x) + digamma (3 + x) + "
     "sum (map (a. lgamma (a * x + 2.5) * digamma (a * a + 0.5)) v)",
     NULL},
    {"comparisons and booleans",
     "def f (x: R) (y: R) : R = if (x < y || x == 2) && !(y >= 3) && x != y then x * y else x + y", NULL},
    {"iota and rand are constants", "def f (x: R) : R = sum (map2 (a, b. a * b * x) (iota 4) (rand 4 7))", NULL},
    {"variance", "def f (v: [R]) : R = if length v == 0 then 0 else variance v", NULL},
    /* a read under an if: a masked gather in the kernels (the lanes that
       do not take the branch would read past the end) */
    {"read under if",
     "def f (v: [R]) (s: R) : R = sum (map (i. if i + 1 < length v then v[i + 1] * v[i] * s else s * v[i]) "
     "(iota (length v)))",
     NULL, true},
    /* a read m[i][j] of a matrix in a map: gathers from its rows' buffer
       in the kernels */
    {"matrix read in a map",
     "def f (v: [R]) (s: R) : R = let m = map (a. map (j. a * (j + 1) + s) (iota 3)) v in "
     "sum (map (i. m[i, i - 3 * floor (i / 3)] * v[i]) (iota (length v)))",
     NULL, true},
    /* found by the random programs: a let whose value is not used */
    {"dead let of a parameter", "def f (v: R) : R = let x = (let w = v in 0.5) in x", NULL},
    {"constant array behind a dead let", "def f (p: R) : R = sum (map (x. x) (let w = p in [1.5]))", NULL},
    {"if over a value behind a dead let", "def f (v: R) : R = let y = (let w = v in 0.5) in if true then y else y",
     NULL},
};

const int gc_ncorpus = (int)(sizeof gc_corpus / sizeof gc_corpus[0]);
