/* gpu_array.c: device copies of arrays of reals, and val_fetch (value.h),
   which brings a device array's elements to the host. */
#include "gpu_array.h"

Array *gpu_new_array(size_t n, Span s) {
  if (n == 0) return val_new_real_array(0, s);
  if (n > SIZE_MAX / sizeof(double)) val_alloc_error((double)n, sizeof(double), s);
  Array *a = NEW(Array);
  a->len = n;
  a->dev = cuda_devbuf_new(n * sizeof(double), s);
  return a;
}

CudaPtr gpu_array_ptr(const Array *a, Span s) {
  ASSERT(!a->boxed);
  if (!a->dev) {
    Array *m = (Array *)a; /* the device copy is a cache, like the host one */
    if (a->len == 0) return 0;
    m->dev = cuda_devbuf_new(a->len * sizeof(double), s);
    m->dev_off = 0;
    cuda_upload(m->dev->ptr, a->r, a->len * sizeof(double), s);
  }
  return a->dev->ptr + (CudaPtr)(a->dev_off * sizeof(double));
}

void gpu_drop_host(Array *a) {
  if (a->dev && a->len) a->r = NULL;
}

void val_fetch(Array *a) {
  if (a->r || a->boxed) return;
  if (!a->dev) una_internal_error(__FILE__, __LINE__, "an array with neither a host nor a device copy");
  Array *h = val_new_real_array(a->len, fe_nospan);
  cuda_download(h->r, a->dev->ptr + (CudaPtr)(a->dev_off * sizeof(double)), a->len * sizeof(double), fe_nospan);
  a->r = h->r;
}
