#include "gc/Tools/RunMain.h"

int main(int argc, char **argv) { return gc::runMain(argc, argv); }
