#include "gc/Tools/PartitionMain.h"

int main(int argc, char **argv) { return gc::partitionMain(argc, argv); }
