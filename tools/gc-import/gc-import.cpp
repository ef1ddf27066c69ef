#include "gc/Tools/ImportMain.h"

int main(int argc, char **argv) { return gc::importMain(argc, argv); }
