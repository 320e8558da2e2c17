/* Linked statically for the launcher test: a program LD_PRELOAD cannot
 * reach. */
#include <stdio.h>

int main(void)
{
    puts("static program ran");
    return 0;
}
