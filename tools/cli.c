/* cli.c — flag parsing shared by hloc.c and hlorun.c (cli.h). */
#include "cli.h"

#include <string.h>

const char *cli_flag_value(const char *flag, int argc, char **argv, int *i) {
  size_t n = strlen(flag);
  if (strncmp(argv[*i], flag, n) != 0)
    return NULL;
  if (argv[*i][n] == '=')
    return argv[*i] + n + 1;
  if (argv[*i][n] == 0 && *i + 1 < argc)
    return argv[++*i];
  return NULL;
}
