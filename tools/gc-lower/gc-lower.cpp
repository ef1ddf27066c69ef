#include "gc/Tools/BackendMain.h"

int main(int argc, char **argv) { return gc::lowerMain(argc, argv); }
