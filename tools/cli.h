/* cli.h — helpers the two command-line mains share. */
#ifndef HLOC_TOOLS_CLI_H
#define HLOC_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* If argv[*i] is FLAG=VALUE or FLAG VALUE, returns VALUE (advancing *i past a separate
 * value); otherwise NULL. */
const char *cli_flag_value(const char *flag, int argc, char **argv, int *i);

/* A byte count: decimal digits, optionally followed by K, M or G (binary); false if malformed
 * or above INT64_MAX. */
bool cli_parse_bytes(const char *v, int64_t *out);

/* --nontemporal-min-bytes: a byte count > 0 (cli_parse_bytes), or "off" (stored as -1). */
bool cli_parse_nontemporal(const char *v, int64_t *out);

#endif
