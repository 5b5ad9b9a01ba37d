/* runtime_example.c — the embedding program of docs/runtime.md: runs testdata/examples/embed.hlo
 * (built with `hloc embed.hlo -o embed.so --header embed.h`) as two replicas on two threads,
 * each with its own context: pushes an infeed, registers the custom call "embed_scale", runs
 * the model, pops the outfeed.  Replica r feeds {r+1, r+2, r+3}; doubled and summed over the
 * replicas both get {6, 10, 14}.  Built and run by tests/runtime.cmake (runtime.embed_example).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "embed.h"
#include "hlo/runtime.h"

/* An XLA CPU custom call in the original form: out = 2 * in[0] for f32[3]. */
static void embed_scale(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 3; i++)
    y[i] = 2 * x[i];
}

typedef struct replica {
  hlo_context *ctx;
  float result[3];
  hlo_status status;
} replica;

static void *run(void *arg) {
  replica *r = arg;
  void *results[1] = {r->result};
  r->status = embed_run(r->ctx, NULL, results);
  return NULL;
}

static int fail(hlo_status s) {
  fprintf(stderr, "error: %s\n", hlo_status_message(s));
  hlo_status_free(s);
  return 1;
}

int main(void) {
  hlo_collective_group *group;
  hlo_status s = hlo_collective_group_create(2, &group);
  if (s)
    return fail(s);
  replica reps[2] = {0};
  for (int r = 0; r < 2; r++) {
    hlo_context_options o;
    hlo_context_options_init(&o);
    o.replica_id = r;
    o.num_replicas = 2;
    o.group = group;
    if ((s = hlo_context_create(&o, &reps[r].ctx)))
      return fail(s);
    float feed[3] = {r + 1.0f, r + 2.0f, r + 3.0f};
    int64_t dims[1] = {3};
    if ((s = hlo_infeed_push_array(reps[r].ctx, feed, sizeof feed, HLO_DTYPE_IR_F32, 1, dims)))
      return fail(s);
    if ((s = hlo_custom_call_register(reps[r].ctx, "embed_scale", (void *)embed_scale)))
      return fail(s);
    if ((s = hlo_custom_call_resolve_all(reps[r].ctx, embed_describe()))) /* a missing target: now */
      return fail(s);
  }
  pthread_t t[2];
  for (int r = 0; r < 2; r++)
    pthread_create(&t[r], NULL, run, &reps[r]);
  for (int r = 0; r < 2; r++)
    pthread_join(t[r], NULL);
  int bad = 0;
  for (int r = 0; r < 2; r++) {
    if (reps[r].status)
      return fail(reps[r].status);
    void *data;
    size_t n;
    if ((s = hlo_outfeed_pop(reps[r].ctx, &data, &n)))
      return fail(s);
    const float *o = data;
    printf("replica %d: result {%g, %g, %g} outfeed {%g, %g, %g}\n", r, reps[r].result[0], reps[r].result[1],
           reps[r].result[2], o[0], o[1], o[2]);
    const float want[3] = {6, 10, 14};
    for (int i = 0; i < 3; i++)
      bad |= reps[r].result[i] != want[i] || o[i] != want[i];
    free(data);
    hlo_context_destroy(reps[r].ctx);
  }
  hlo_collective_group_destroy(group);
  return bad;
}
