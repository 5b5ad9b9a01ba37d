/* emit.c — native output (shared object, object file, LLVM IR, assembly, C header).
 *
 * The LLVM code generator (compiler/codegen) is the next milestone (issue "Code generation");
 * until it lands this reports, as a status, that native output is not part of this build,
 * so hloc and hlorun fail cleanly with exit status 1 instead of producing a wrong file.
 */
#include "driver/driver.h"

hlo_status drv_emit_native(ir_module *m, const char *out_path, drv_emit emit, const drv_options *o) {
  (void)m;
  (void)emit;
  (void)o;
  return hlo_status_make(HLO_UNIMPLEMENTED,
                         "%s: this build of hloc has no code generator; only --emit=hlo and "
                         "--emit=none are available (see docs/cli.md)",
                         out_path ? out_path : "output");
}
