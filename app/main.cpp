#include "cli/commands.hpp"

int main(int argc, char** argv) { return p0sim::cli::run_main(argc, argv); }
