/* cli.h — helpers the two command-line mains share. */
#ifndef HLOC_TOOLS_CLI_H
#define HLOC_TOOLS_CLI_H

/* If argv[*i] is FLAG=VALUE or FLAG VALUE, returns VALUE (advancing *i past a separate
 * value); otherwise NULL. */
const char *cli_flag_value(const char *flag, int argc, char **argv, int *i);

#endif
