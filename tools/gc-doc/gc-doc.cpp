#include "gc/Tools/DocMain.h"

int main(int argc, char **argv) { return gc::docMain(argc, argv); }
