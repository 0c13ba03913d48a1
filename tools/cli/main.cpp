#include "aotirt/aotirt.h"
int main() { return 0; }
