#include "gc/Tools/PackageMain.h"

int main(int argc, char **argv) { return gc::packageMain(argc, argv); }
