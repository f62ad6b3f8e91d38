// Placeholder: `p0sim experiment` is being written (issue 4).
#include "cli/commands.hpp"
namespace p0sim::cli {
void add_experiment_command(CLI::App&) {}
}  // namespace p0sim::cli
