/* abi_example.c — a complete C program that calls a model compiled by hloc.
 *
 *   hloc testdata/examples/mlp.hlo -o mlp.so --header mlp.h
 *   cc docs/abi_example.c -I. -Iruntime/include mlp.so build/libhlort.a -lffi -lm -lpthread -ldl -o abi_example
 *   LD_LIBRARY_PATH=. ./abi_example
 *
 * (with an installed hloc: cc abi_example.c mlp.so $(pkg-config --cflags --libs hlort))
 * It prints the 4x3 result of the MLP for a fixed input, one row per line.
 */
#include <stdio.h>

#include "hlo/runtime.h"
#include "mlp.h"

int main(void) {
  float x[4][8], y[4][3];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 8; j++)
      x[i][j] = (float)(i * 8 + j) / 32.0f - 0.5f;

  /* The signature is in the model itself. */
  const hlo_module_desc *d = mlp_describe();
  printf("module %s: %d parameter(s), %d result(s)\n", d->module_name, d->num_params, d->num_results);

  /* A context is optional (NULL runs single-threaded); here we make one. */
  hlo_context *ctx = NULL;
  hlo_status s = hlo_context_create(NULL, &ctx);
  if (!s)
    s = mlp(ctx, &x[0][0], &y[0][0]);
  if (s) {
    fprintf(stderr, "mlp failed: %s\n", hlo_status_message(s));
    hlo_status_free(s);
    hlo_context_destroy(ctx);
    return 1;
  }
  for (int i = 0; i < 4; i++)
    printf("%.6f %.6f %.6f\n", y[i][0], y[i][1], y[i][2]);
  hlo_context_destroy(ctx);
  return 0;
}
