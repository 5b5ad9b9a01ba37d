/* hlorun.c — placeholder main; replaced by the tools work (see DESIGN.md command line). */
#include <stdio.h>
int main(void) { fputs("hlorun: not built yet\n", stderr); return 2; }
