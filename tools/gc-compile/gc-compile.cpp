#include "gc/Tools/CompileMain.h"

int main(int argc, char **argv) { return gc::compileMain(argc, argv); }
