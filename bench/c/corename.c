/* corename.c — prints the core type OpenBLAS picked for this CPU (run.py compares it with the
 * CPU's flags and sets OPENBLAS_CORETYPE when AVX-512 goes unused). */
#include <stdio.h>
#include "blas.h"
int main(void) { printf("%s\n", openblas_get_corename()); return 0; }
