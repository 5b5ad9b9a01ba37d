/* hloc.c — placeholder main; replaced by the tools work (see DESIGN.md command line). */
#include <stdio.h>
int main(void) { fputs("hloc: not built yet\n", stderr); return 2; }
