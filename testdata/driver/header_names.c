/* header_names.c — calls the typed entry point declared by hloc's header for
 * header_names.hlo; the program compiles only if every argument got a distinct, valid name.
 * It prints the results: out_0 = ctx + a.1, out_1_0 = a_1, out_1_1 = _x. */
#include <stdio.h>

#include "header_names.h"

int main(void) {
  float c[2] = {1, 2}, a1[2] = {10, 20}, a_1[2] = {3, 4}, k[2] = {0}, o[2] = {0};
  int32_t x[6] = {1, 2, 3, 4, 5, 6}, r11[6];
  float r0[2], r10[2];
  hlo_status s = jit_names_1(NULL, c, a1, a_1, k, o, x, r0, r10, r11);
  if (s)
    return 1;
  printf("%g %g | %g %g | %d %d\n", r0[0], r0[1], r10[0], r10[1], (int)r11[0], (int)r11[5]);
  return 0;
}
