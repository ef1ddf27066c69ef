#include "gc/Tools/OptMain.h"

int main(int argc, char **argv) { return gc::optMain(argc, argv); }
