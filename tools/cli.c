/* cli.c — flag parsing shared by hloc.c and hlorun.c (cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
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

bool cli_parse_bytes(const char *v, int64_t *out) {
  errno = 0;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  int shift = 0;
  if (*end == 'K' || *end == 'k')
    shift = 10;
  else if (*end == 'M' || *end == 'm')
    shift = 20;
  else if (*end == 'G' || *end == 'g')
    shift = 30;
  if (shift)
    end++;
  if (errno || end == v || *end || v[0] == '-' || x > (unsigned long long)(INT64_MAX >> shift))
    return false;
  *out = (int64_t)(x << shift);
  return true;
}

bool cli_parse_nontemporal(const char *v, int64_t *out) {
  if (strcmp(v, "off") == 0) {
    *out = -1;
    return true;
  }
  return cli_parse_bytes(v, out) && *out > 0;
}
