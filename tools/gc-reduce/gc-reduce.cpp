#include "gc/Tools/ReduceMain.h"

int main(int argc, char **argv) { return gc::reduceMain(argc, argv); }
