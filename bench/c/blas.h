/* blas.h — OpenBLAS declarations the GEMM-shaped baselines use (cblas_sgemm and the thread and
 * core queries), declared here so the drivers need only -lopenblas, not a cblas.h variant. */
#ifndef BENCH_BLAS_H
#define BENCH_BLAS_H
enum { CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 };
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);
void openblas_set_num_threads(int n);
char *openblas_get_corename(void);
#endif
