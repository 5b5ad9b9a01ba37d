/* mesh_groups.h — XLA's mesh-axes form of replica_groups, expanded into explicit groups.
 *
 *   replica_groups=mesh['x'=2,'y'=2] {'y'}
 *   replica_groups=@mesh<u=10,v=12,w=15> {u,v}
 *   replica_groups=mesh['a'=6,'b'=6] {'a':(1)2,'b':(1)2}
 *   replica_groups=@mesh<a=2,b=4,c=4,d=2>, device_ids=([4,16]T(1,0)) {a,b:(1)2,d}
 *   replica_groups=@mesh<o=10>, device_ids=(8,3,7,5,4,2,6,0,1,9) {o:(5)2}
 *
 * The mesh names its axes and their sizes (devices laid out row-major over them, or as
 * device_ids says); the braces list the axes a group spans, `name:(pre)size` being the sub-axis
 * of `size` devices with `pre` devices of the axis before it (the axis split major-to-minor as
 * [pre, size, rest]).  A group holds the devices that differ only along the listed (sub-)axes,
 * the first listed the most major; groups go row-major over the remaining (sub-)axes.  This is
 * XLA's MeshAxesReplicaGroupList (xla/hlo/ir/replica_group.h and its tests were the reference).
 * Tests: compiler/ir/mesh_groups_test.c, testdata/parse/ok.
 */
#ifndef HLOC_IR_MESH_GROUPS_H
#define HLOC_IR_MESH_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Expands `text` (len bytes, starting at "mesh[" or "@mesh<" and ending at the closing '}')
 * into *n_groups groups allocated in m's arena.  On an error returns false with a message in
 * err and the byte offset within text where it was found in *err_at. */
bool ir_mesh_groups_expand(ir_module *m, const char *text, size_t len, ir_i64_list **groups,
                           int *n_groups, char *err, size_t err_size, size_t *err_at);

#endif
