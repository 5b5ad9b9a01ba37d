/* mesh_groups_test.c — the mesh-axes replica groups form expanded into explicit groups.
 * Expected groups are those of XLA's own tests of MeshAxesReplicaGroupList
 * (xla/hlo/ir/replica_group_test.cc: MaterializedReplicaGroups, ...WithSubaxes,
 * ...MatchExpectedV2, ...RespectNonIotaDeviceOrdering), rewritten in the text form
 * XLA prints, and the iota form [G,S]<=[dims]T(perm) those tests compare with, worked by hand. */
#include <stdio.h>
#include <string.h>

#include "ir/mesh_groups.h"

static int failures;

/* want: groups written "{0,2},{1,3}" (no spaces). */
static void expect_groups(const char *text, const char *want) {
  ir_module *m = ir_module_create();
  ir_i64_list *g = NULL;
  int n = 0;
  char err[256], got[4096];
  size_t at = 0, len = 0;
  if (!ir_mesh_groups_expand(m, text, strlen(text), &g, &n, err, sizeof err, &at)) {
    fprintf(stderr, "%s: error at %zu: %s\n", text, at, err);
    failures++;
    ir_module_destroy(m);
    return;
  }
  got[0] = 0;
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(got + len, sizeof got - len, "%s{", i ? "," : "");
    for (int k = 0; k < g[i].n; k++)
      len += (size_t)snprintf(got + len, sizeof got - len, "%s%lld", k ? "," : "", (long long)g[i].v[k]);
    len += (size_t)snprintf(got + len, sizeof got - len, "}");
  }
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "%s:\n  got  %s\n  want %s\n", text, got, want);
    failures++;
  }
  ir_module_destroy(m);
}

static void expect_error(const char *text, const char *needle) {
  ir_module *m = ir_module_create();
  ir_i64_list *g = NULL;
  int n = 0;
  char err[256];
  size_t at = 0;
  if (ir_mesh_groups_expand(m, text, strlen(text), &g, &n, err, sizeof err, &at)) {
    fprintf(stderr, "%s: accepted, want an error with '%s'\n", text, needle);
    failures++;
  } else if (!strstr(err, needle)) {
    fprintf(stderr, "%s: error '%s', want '%s'\n", text, err, needle);
    failures++;
  }
  ir_module_destroy(m);
}

int main(void) {
  /* MaterializedReplicaGroups: mesh {2,2} x,y */
  expect_groups("mesh['x'=2,'y'=2] {'x'}", "{0,2},{1,3}");
  expect_groups("mesh['x'=2,'y'=2] {'y'}", "{0,1},{2,3}");
  expect_groups("mesh['x'=2,'y'=2] {'x','y'}", "{0,1,2,3}");
  expect_groups("@mesh<x=2,y=2> {x}", "{0,2},{1,3}");
  expect_groups("mesh[x=2, y=2] { y }", "{0,1},{2,3}");
  /* ...WithSubaxes: mesh {6,6} a,b */
  expect_groups("mesh['a'=6,'b'=6] {'a':(1)2}",
                "{0,18},{1,19},{2,20},{3,21},{4,22},{5,23},{6,24},{7,25},{8,26},{9,27},{10,28},{11,29},"
                "{12,30},{13,31},{14,32},{15,33},{16,34},{17,35}");
  expect_groups("mesh['a'=6,'b'=6] {'a':(3)2}",
                "{0,6},{1,7},{2,8},{3,9},{4,10},{5,11},{12,18},{13,19},{14,20},{15,21},{16,22},{17,23},"
                "{24,30},{25,31},{26,32},{27,33},{28,34},{29,35}");
  expect_groups("mesh['a'=6,'b'=6] {'b':(1)3}",
                "{0,2,4},{1,3,5},{6,8,10},{7,9,11},{12,14,16},{13,15,17},{18,20,22},{19,21,23},"
                "{24,26,28},{25,27,29},{30,32,34},{31,33,35}");
  expect_groups("mesh['a'=6,'b'=6] {'a':(1)2,'b':(1)2}",
                "{0,3,18,21},{1,4,19,22},{2,5,20,23},{6,9,24,27},{7,10,25,28},{8,11,26,29},"
                "{12,15,30,33},{13,16,31,34},{14,17,32,35}");
  expect_groups("mesh['a'=6,'b'=6] {'b':(1)3,'a':(1)3}",
                "{0,12,24,2,14,26,4,16,28},{1,13,25,3,15,27,5,17,29},{6,18,30,8,20,32,10,22,34},"
                "{7,19,31,9,21,33,11,23,35}");
  expect_groups("mesh['a'=6,'b'=6] {'a':(3)2,'b':(3)2}",
                "{0,1,6,7},{2,3,8,9},{4,5,10,11},{12,13,18,19},{14,15,20,21},{16,17,22,23},"
                "{24,25,30,31},{26,27,32,33},{28,29,34,35}");
  /* ...MatchExpectedV2: mesh {8} a, against the iota forms worked by hand */
  expect_groups("mesh['a'=8] {'a':(1)2}", "{0,4},{1,5},{2,6},{3,7}");          /* [4,2]<=[2,4]T(1,0) */
  expect_groups("mesh['a'=8] {'a':(2)2}", "{0,2},{1,3},{4,6},{5,7}");          /* [4,2]<=[2,2,2]T(0,2,1) */
  expect_groups("mesh['a'=8] {'a':(2)4}", "{0,1,2,3},{4,5,6,7}");              /* [2,4]<=[8] */
  expect_groups("mesh['a'=8] {'a':(1)2,'a':(4)2}", "{0,1,4,5},{2,3,6,7}");     /* [2,4]<=[2,2,2]T(1,0,2) */
  expect_groups("mesh['a'=8] {'a':(4)2,'a':(1)2}", "{0,4,1,5},{2,6,3,7}");     /* [2,4]<=[2,2,2]T(1,2,0) */
  expect_groups("mesh['a'=8] {'a'}", "{0,1,2,3,4,5,6,7}");
  /* ...RespectNonIotaDeviceOrdering: devices {{3,1},{0,2}} */
  expect_groups("@mesh<x=2,y=2>, device_ids=(3,1,0,2) {x}", "{3,0},{1,2}");
  expect_groups("@mesh<x=2,y=2>, device_ids=(3,1,0,2) {y}", "{3,1},{0,2}");
  /* device_ids in the iota form: [2,2]T(1,0) is 0,2,1,3 */
  expect_groups("@mesh<x=2,y=2>, device_ids=([2,2]T(1,0)) {y}", "{0,2},{1,3}");

  expect_error("mesh['x'=2] {}", "no axes");
  expect_error("mesh['x'=2] {'z'}", "not an axis");
  expect_error("mesh['u'=10] {'u':(8)2}", "does not divide");
  expect_error("mesh['u'=10] {'u':(1)10}", "smaller than the axis");
  expect_error("mesh['u'=30] {'u':(6)5,'u':(10)3}", "overlap");
  expect_error("mesh['x'=2,'x'=2] {'x'}", "named twice");
  expect_error("mesh['x'=2] {'x','x'}", "listed twice");
  expect_error("@mesh<x=2,y=2>, device_ids=(0,1,2) {x}", "lists 3 devices");
  expect_error("mesh['x'=2 {'x'}", "expected");
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures != 0;
}
