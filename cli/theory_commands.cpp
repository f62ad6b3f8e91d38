// Placeholder until the theory subcommands land (issue 2).
#include "cli/commands.hpp"
#include <iostream>
namespace p0sim::cli {
void add_theory_commands(CLI::App& app) {
  auto* theory = app.add_subcommand("theory", "Cone model in closed form and by Monte Carlo; the hand-wired circuit");
  theory->require_subcommand(1);
  auto* cone = theory->add_subcommand("cone", "cone model");
  static int d = 4;
  static std::string model = "axis", list = "1,2";
  static bool flag = false;
  cone->add_option("--d", d, "dimension")->check(CLI::Range(2, 4096));
  cone->add_option("--model", model, "model")->check(CLI::IsMember({"axis", "cap"}));
  cone->add_option("--T", list, "T list");
  cone->add_flag("--bos", flag, "flag");
  add_config_option(*cone, [cone] { std::cout << resolved_config(*cone) << "d=" << d << " T=" << list << " bos=" << flag << "\n"; });
}
}  // namespace p0sim::cli
